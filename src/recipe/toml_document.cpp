#include "recipe/toml_document.hpp"

#include "recipe/prescan.hpp"
#include "recipe/toml_reader.hpp"

namespace bootstrap::recipe {

Result<Value> parse_toml_document(std::string_view text, const std::string& file) {
    if (text.size() > detail::k_max_recipe_bytes)
        return fail(ErrorCode::usage, fmt::format("{}: is {} bytes; bootstrap reads TOML files of at most {} MiB", file,
                                                  text.size(), detail::k_max_recipe_bytes >> 20));
    if (auto problem = detail::prescan_toml(text, file))
        return fail(ErrorCode::usage, problem->loc.str() + ": " + problem->message);
    toml::table root;
    try {
        root = toml::parse(text, std::string_view(file));
    } catch (const toml::parse_error& e) {
        SourceLoc where{file, static_cast<int>(e.source().begin.line), static_cast<int>(e.source().begin.column)};
        return fail(ErrorCode::usage, where.str() + ": " + std::string(e.description()));
    }
    detail::Reader rd(file);
    Value out = rd.value(root);
    out.loc = rd.file_start();
    return out;
}

}  // namespace bootstrap::recipe
