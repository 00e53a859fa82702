// The registry of step kinds: one line per kind.

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "exec/process.hpp"
#include "steps/kind.hpp"

namespace bootstrap::steps {

// The registered kinds, one line each, in the order messages list them: X(name) stands for
// `const Kind k_<name>_kind`, defined in kind_<name>.cpp.
#define BS_REGISTERED_KINDS(X) \
    X(venv)                    \
    X(install)                 \
    X(sync)                    \
    X(run)                     \
    X(check)                   \
    X(pybind11)                \
    X(build)                   \
    /* one line per kind above */

#define BS_DECLARE_KIND(name) extern const Kind k_##name##_kind;
#define BS_KIND_ADDRESS(name) &k_##name##_kind,
BS_REGISTERED_KINDS(BS_DECLARE_KIND)

const std::vector<const Kind*>& kinds() {
    static const std::vector<const Kind*> k_kinds{BS_REGISTERED_KINDS(BS_KIND_ADDRESS)};
    return k_kinds;
}

const Kind* find_kind(std::string_view name) {
    for (const Kind* k : kinds())
        if (k->name == name) return k;
    return nullptr;
}

const Kind& kind_of(std::string_view name) {
    if (const Kind* k = find_kind(name)) return *k;
    // A parsed recipe names only registered kinds (the parser gets them from recipe_kinds()),
    // and a plan refuses any other (find_kind): reaching here is a bug, never a silent default.
    fmt::print(stderr, "bootstrap: internal error: no step kind named '{}'\n", name);
    std::abort();
}

Owned owned_of(const ResolvedStep& step) {
    const auto& k = kind_of(step.kind);
    return k.owned ? k.owned(step) : Owned{};
}

Overrides overrides_of(const ResolvedStep& step) {
    const auto& k = kind_of(step.kind);
    return k.overrides ? k.overrides(step) : Overrides{};
}

const pyenv::InstallRequest* index_request_of(const ResolvedStep& step) {
    const auto& k = kind_of(step.kind);
    return k.index_request ? k.index_request(step) : nullptr;
}

std::vector<std::string> ResolvedStep::index_urls() const {
    const auto& k = kind_of(kind);
    return k.index_urls ? k.index_urls(*this) : std::vector<std::string>{};
}

Description describe_step(const ResolvedStep& step, const DescribeAsk& ask) {
    Description out;
    if (const auto& k = kind_of(step.kind); k.describe) k.describe(step, ask, out);
    return out;
}

void describe_step_json(const ResolvedStep& step, nlohmann::json& out) {
    if (const auto& k = kind_of(step.kind); k.describe_json) k.describe_json(step, out);
}

std::optional<net::DownloadRequest> archive_of(const ResolvedStep& step) {
    const auto& k = kind_of(step.kind);
    return k.archive ? k.archive(step) : std::nullopt;
}

std::vector<std::string> configured_index_urls(const std::vector<ResolvedStep>& steps) {
    std::vector<std::string> out;
    for (const auto& step : steps)
        if (const auto* request = index_request_of(step)) {
            if (request->index_url) out.push_back(*request->index_url);
            out.insert(out.end(), request->extra_index_urls.begin(), request->extra_index_urls.end());
        }
    return out;
}

const recipe::KindTable& recipe_kinds() {
    static const recipe::KindTable k_table = [] {
        recipe::KindTable table;
        for (const Kind* k : kinds()) table.push_back({k->name, k->parse});
        return table;
    }();
    return k_table;
}

Result<recipe::Recipe> load_recipe(const std::filesystem::path& file) {
    return recipe::load_recipe(file, recipe_kinds(), recipe_clauses());
}

Result<recipe::Recipe> parse_recipe(std::string_view text, const std::string& name) {
    return recipe::parse_recipe(text, name, recipe_kinds(), recipe_clauses());
}

Result<std::vector<std::string>> PlanContext::texts(const std::vector<recipe::Text>& ts, ResolvedStep& step) {
    std::vector<std::string> values;
    for (const auto& t : ts) {
        BS_TRY(auto v, text(t, step));
        values.push_back(std::move(v));
    }
    return values;
}

std::string program_identity(const std::string& program) {
    std::error_code ec;
    fs::path real = fs::canonical(program, ec);
    return ec ? program + " (not found)" : pyenv::file_identity(real);
}

std::string on_path(const std::string& program, const exec::EnvMap& env) {
    if (program.find('/') != std::string::npos) return program;
    auto it = env.find("PATH");
    auto found = exec::find_program(program, it == env.end() ? "" : it->second);
    return found.empty() ? program : found.string();
}

void add_local_input(ResolvedStep& out, const std::string& path, bool directory, std::string_view what,
                     const recipe::SourceLoc& loc, bool repository) {
    if (path.empty() || path.find('<') != std::string::npos || path.find("://") != std::string::npos) return;
    out.local_inputs.push_back(LocalInput{path, directory, repository, std::string(what), loc});
}

Status check_local_input(const recipe::Step& s, const recipe::Text& field, const std::string& path,
                         std::string_view what, bool directory, ResolvedStep& out, const PlanContext& ctx) {
    add_local_input(out, path, directory, what, field.loc);
    if (!ctx.check_local_inputs || !out.complete || path.empty() || path.front() == '<') return {};
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (directory ? fs::is_directory(status) : fs::is_regular_file(status)) return {};
    const bool created_earlier =
        ctx.earlier != nullptr &&
        std::any_of(ctx.earlier->begin(), ctx.earlier->end(), [](const ResolvedStep& e) { return e.run() != nullptr; });
    const std::string problem = fs::exists(status)
                                    ? fmt::format("{} {} is not a {}", what, path, directory ? "directory" : "file")
                                    : fmt::format("{} {} does not exist", what, path);
    auto add_note = [&](const std::string& text) { out.note += (out.note.empty() ? "" : "; ") + text; };
    if (created_earlier && !fs::exists(status)) {
        add_note(problem + " yet (an earlier run step may create it)");
        return {};
    }
    if (s.optional) {
        add_note(problem + ": this optional step will fail and be skipped");
        return {};
    }
    const bool placeholders = field.value.find('{') != std::string::npos;
    return fail(ErrorCode::invalid_recipe, fmt::format("{}: step '{}': {}", field.loc.str(), s.id, problem),
                placeholders ? fmt::format("the recipe says {} = \"{}\": set what it names to an existing {}", what,
                                           field.value, directory ? "directory" : "file")
                             : std::string());
}

}  // namespace bootstrap::steps
