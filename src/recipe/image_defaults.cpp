#include "recipe/image_defaults.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/strings.hpp"

namespace bootstrap::recipe {

namespace {

constexpr std::uint64_t k_max_bytes = 1 << 20;

bool valid_name(std::string_view name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// 'value', with each `'` as `'\''`.
std::string single_quoted(std::string_view value) {
    std::string out = "'";
    for (char c : value) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

/// The inverse of single_quoted(): adjacent '...' and \' pieces; nullopt for anything else.
std::optional<std::string> unquoted(std::string_view s) {
    std::string out;
    size_t i = 0;
    if (s.empty()) return std::nullopt;
    while (i < s.size()) {
        if (s[i] == '\'') {
            auto end = s.find('\'', i + 1);
            if (end == std::string_view::npos) return std::nullopt;
            out += s.substr(i + 1, end - i - 1);
            i = end + 1;
        } else if (s.substr(i, 2) == "\\'") {
            out += '\'';
            i += 2;
        } else {
            return std::nullopt;
        }
    }
    return out;
}

std::vector<std::string> words(std::string_view s) {
    std::vector<std::string> out;
    for (auto& w : core::split(s, ' '))
        if (!w.empty()) out.push_back(w);
    return out;
}

std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& w : v) out += " " + w;
    return out;
}

}  // namespace

std::filesystem::path image_defaults_path() {
    const char* given = std::getenv("BOOTSTRAP_IMAGE_ENV");
    return given && *given ? std::filesystem::path(given) : std::filesystem::path("/etc/bootstrap/env");
}

std::string image_defaults_text(const ImageDefaults& d) {
    std::string out =
        "# Written by `bootstrap containerfile`: what the image's build ran with. bootstrap reads it\n"
        "# (plan, run, doctor); the container's own environment overrides each variable.\n";
    if (!d.recipe_digest.empty()) out += "recipe " + d.recipe_digest + "\n";
    for (const auto& [name, value] : d.env) out += name + "=" + single_quoted(value) + "\n";
    for (const auto& s : d.secrets) out += "secret " + s.name + joined(s.steps) + "\n";
    if (d.venv) out += "venv " + *d.venv + "\n";
    if (d.arch) out += "arch " + *d.arch + "\n";
    if (d.no_device) out += "no-device\n";
    if (!d.skip.empty()) out += "skip" + joined(d.skip) + "\n";
    if (!d.only.empty()) out += "only" + joined(d.only) + "\n";
    return out;
}

Result<ImageDefaults> parse_image_defaults(std::string_view text, std::string_view file) {
    ImageDefaults d;
    size_t line_no = 0;
    for (const auto& raw : core::split(text, '\n')) {
        ++line_no;
        const std::string_view line = core::trim(raw);
        auto bad = [&](std::string_view why) {
            return fail(ErrorCode::invalid_recipe, fmt::format("{}:{}: {}", file, line_no, why));
        };
        if (line.empty() || line[0] == '#') continue;
        const auto eq = line.find('=');
        const auto sp = line.find(' ');
        if (eq != std::string_view::npos && (sp == std::string_view::npos || eq < sp)) {
            const std::string name(line.substr(0, eq));
            if (!valid_name(name)) return bad(fmt::format("'{}' is not a variable name", name));
            auto value = unquoted(line.substr(eq + 1));
            if (!value) return bad(fmt::format("the value of {} is not single-quoted ('...')", name));
            d.env.emplace_back(name, std::move(*value));
            continue;
        }
        auto w = words(line);
        const std::string keyword = w.front();
        w.erase(w.begin());
        if (keyword == "recipe" && w.size() == 1) {
            d.recipe_digest = w[0];
        } else if (keyword == "secret" && !w.empty()) {
            if (!valid_name(w[0])) return bad(fmt::format("'{}' is not a variable name", w[0]));
            d.secrets.push_back({w[0], {w.begin() + 1, w.end()}});
        } else if (keyword == "venv" && w.size() == 1) {
            d.venv = w[0];
        } else if (keyword == "arch" && w.size() == 1) {
            d.arch = w[0];
        } else if (keyword == "no-device" && w.empty()) {
            d.no_device = true;
        } else if (keyword == "skip" && !w.empty()) {
            d.skip = w;
        } else if (keyword == "only" && !w.empty()) {
            d.only = w;
        } else {
            return bad(fmt::format("not a line of an image's defaults: '{}'", line));
        }
    }
    return d;
}

Result<std::optional<ImageDefaults>> image_defaults() {
    static std::mutex mutex;
    static std::optional<Result<std::optional<ImageDefaults>>> cached;
    std::lock_guard guard(mutex);
    if (cached) return *cached;
    const auto path = image_defaults_path();
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        cached = std::optional<ImageDefaults>();
    } else if (auto text = core::read_regular_file(path, k_max_bytes); !text) {
        cached = tl::unexpected(text.error());
    } else if (auto parsed = parse_image_defaults(*text, path.string()); !parsed) {
        cached = tl::unexpected(parsed.error());
    } else {
        cached = std::optional<ImageDefaults>(std::move(*parsed));
    }
    return *cached;
}

std::vector<std::string> apply_image_env(const ImageDefaults& defaults, std::map<std::string, std::string>& env) {
    std::vector<std::string> set;
    for (const auto& [name, value] : defaults.env)
        if (env.emplace(name, value).second) set.push_back(name);
    return set;
}

std::vector<ImageSecret> missing_image_secrets(const ImageDefaults& defaults,
                                               const std::map<std::string, std::string>& env) {
    std::vector<ImageSecret> out;
    for (const auto& s : defaults.secrets)
        if (!env.count(s.name)) out.push_back(s);
    return out;
}

}  // namespace bootstrap::recipe
