// Reading a pylock.toml (lockfile/pylock.hpp) into the Lockfile a --locked run installs:
// every problem of the file located and reported together, as a recipe's are.

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/redact.hpp"
#include "core/strings.hpp"
#include "lockfile/index_page.hpp"
#include "lockfile/pylock.hpp"
#include "pyenv/marker.hpp"
#include "pyenv/name.hpp"
#include "pyenv/specifier.hpp"
#include "pyenv/wheel_name.hpp"
#include "recipe/toml_document.hpp"

namespace bootstrap::lockfile {

using manifest::LockedPackage;
using manifest::Lockfile;
using recipe::Value;
using recipe::ValueType;

namespace {

/// Typed reads of the document's values; a mismatch is a located problem and reads as absent,
/// so every problem of the file is found in one pass.
class Reader {
public:
    void report(const recipe::SourceLoc& at, std::string what) { m_problems.push_back(at.str() + ": " + what); }
    [[nodiscard]] const std::vector<std::string>& problems() const { return m_problems; }

    const Value* typed(const Value& table, std::string_view k, ValueType type, std::string_view where) {
        const Value* v = table.get(k);
        if (v == nullptr || v->is(type)) return v;
        report(v->loc,
               fmt::format("{}'{}' must be {}, not {}", where, k, recipe::type_name(type), recipe::type_name(v->type)));
        return nullptr;
    }
    std::string str(const Value& table, std::string_view k, std::string_view where) {
        const Value* v = typed(table, k, ValueType::string, where);
        return v ? v->string : std::string();
    }
    std::optional<std::string> required(const Value& table, std::string_view k, std::string_view where) {
        if (table.get(k) == nullptr) {
            report(table.loc, fmt::format("{}'{}' is missing", where, k));
            return std::nullopt;
        }
        const Value* v = typed(table, k, ValueType::string, where);
        return v ? std::optional(v->string) : std::nullopt;
    }
    bool boolean(const Value& table, std::string_view k, bool fallback, std::string_view where) {
        const Value* v = typed(table, k, ValueType::boolean, where);
        return v ? v->boolean : fallback;
    }
    std::vector<std::string> strings(const Value& table, std::string_view k, std::string_view where) {
        std::vector<std::string> out;
        const Value* v = typed(table, k, ValueType::array, where);
        if (v == nullptr) return out;
        for (const auto& item : v->array) {
            if (item.is(ValueType::string)) out.push_back(item.string);
            else
                report(item.loc,
                       fmt::format("{}'{}' must hold strings, not {}", where, k, recipe::type_name(item.type)));
        }
        return out;
    }
    /// The tables of an array of tables (others reported).
    std::vector<const Value*> tables(const Value& table, std::string_view k, std::string_view where) {
        std::vector<const Value*> out;
        const Value* v = typed(table, k, ValueType::array, where);
        if (v == nullptr) return out;
        for (const auto& item : v->array) {
            if (item.is(ValueType::table)) out.push_back(&item);
            else
                report(item.loc,
                       fmt::format("{}'{}' must hold tables, not {}", where, k, recipe::type_name(item.type)));
        }
        return out;
    }

private:
    std::vector<std::string> m_problems;
};

bool is_hex64(std::string_view s) {
    return s.size() == 64 &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

/// lock-version "1.x": an unknown major version must be an error (PEP 751); nullopt then.
bool read_version(Reader& rd, const Value& doc) {
    auto version = rd.required(doc, "lock-version", "");
    if (!version) return false;
    if (version->substr(0, version->find('.')) == "1") return true;
    const auto* at = doc.get("lock-version");
    rd.report(at->loc,
              fmt::format("lock-version \"{}\" is not supported: this bootstrap reads pylock.toml 1.x", *version));
    return false;
}

void read_header(Reader& rd, const Value& doc, Lockfile& lock) {
    lock.foreign_tool = rd.required(doc, "created-by", "").value_or("");
    lock.requires_python = rd.str(doc, "requires-python", "");
    if (!lock.requires_python.empty())
        if (auto spec = pyenv::SpecifierSet::parse(lock.requires_python); !spec)
            rd.report(doc.get("requires-python")->loc, "'requires-python': " + spec.error().message);
    lock.environments = rd.strings(doc, "environments", "");
    if (const auto* envs = doc.get("environments"); envs != nullptr && envs->is(ValueType::array))
        for (const auto& item : envs->array)
            if (item.is(ValueType::string))
                if (auto m = pyenv::Marker::parse(item.string); !m)
                    rd.report(item.loc, "'environments': " + m.error().message);
}

/// The origin bootstrap recorded (a [packages.tool.bootstrap] or version-only table).
manifest::Origin read_origin(Reader& rd, const Value& t, std::string_view where) {
    manifest::Origin o;
    o.kind = manifest::parse_origin_kind(rd.str(t, "origin", where));
    o.step = rd.str(t, "step", where);
    o.index_urls = rd.strings(t, "index-urls", where);
    o.url = rd.str(t, "url", where);
    o.vcs = rd.str(t, "vcs", where);
    o.commit = rd.str(t, "commit", where);
    o.artifact_sha256 = rd.str(t, "artifact-sha256", where);
    o.archive_hash = rd.str(t, "archive-hash", where);
    return o;
}

/// The file name a wheel entry stands for: its `name`, else the last part of its url or path.
std::string wheel_file_name(const std::string& name, const std::string& url, const std::string& path) {
    if (!name.empty()) return name;
    if (!path.empty()) return fs::path(path).filename().string();
    std::string_view u = url;
    u = u.substr(0, u.find_first_of("?#"));
    return percent_decode(u.substr(u.rfind('/') + 1));
}

/// One [[packages.wheels]] entry into `lp` (the first) or its more_sha256 (the others).
void read_wheel(Reader& rd, const Value& w, const fs::path& dir, LockedPackage& lp, bool first,
                const std::string& where) {
    const auto name = rd.str(w, "name", where);
    const auto url = rd.str(w, "url", where);
    auto path = rd.str(w, "path", where);
    if (url.empty() && path.empty()) rd.report(w.loc, where + "a wheel needs a 'url' or a 'path'");
    const auto file_name = wheel_file_name(name, url, path);
    if (auto wheel = pyenv::parse_wheel_name(file_name); !wheel)
        rd.report(w.loc, fmt::format("{}{} is not a wheel file name", where, file_name));
    else if (!lp.version.empty() && !pyenv::is_release_of(*wheel, lp.name, lp.version))
        rd.report(w.loc, fmt::format("{}{} is not a wheel of {} {}", where, file_name, lp.name, lp.version));
    std::string sha256;
    if (w.get("hashes") == nullptr) rd.report(w.loc, where + "wheel " + file_name + ": 'hashes' is missing");
    else if (const auto* hashes = rd.typed(w, "hashes", ValueType::table, where)) {
        const auto* h = hashes->get("sha256");
        if (h == nullptr)
            rd.report(hashes->loc,
                      fmt::format("{}wheel {}: no sha256 in 'hashes' (bootstrap checks sha256)", where, file_name));
        else if (!h->is(ValueType::string) || !is_hex64(h->string))
            rd.report(h->loc, fmt::format("{}wheel {}: hashes.sha256 is not 64 hex digits", where, file_name));
        else sha256 = core::to_lower(h->string);
    }
    if (!path.empty() && fs::path(path).is_relative()) path = (dir / path).lexically_normal().string();
    if (!first) {
        if (!sha256.empty()) lp.more_sha256.push_back(sha256);
        return;
    }
    lp.wheel = file_name;
    lp.sha256 = sha256;
    lp.url = core::strip_credentials(url);
    lp.path = path;
}

/// A `directory` entry: an (editable) project the recipe's steps install from its source.
/// Bootstrap's own lock keeps the origin it recorded instead.
void read_directory(Reader& rd, const Value& d, const fs::path& dir, LockedPackage& lp, const std::string& where,
                    bool own) {
    auto path = rd.required(d, "path", where + "directory: ").value_or("");
    if (own && !lp.origin.url.empty()) return;
    if (fs::path(path).is_relative()) {
        auto absolute = (dir / path).lexically_normal();  // "." -> "/dir/": no trailing '/'
        path = (absolute.has_filename() ? absolute : absolute.parent_path()).string();
    }
    lp.origin.kind =
        rd.boolean(d, "editable", false, where) ? manifest::OriginKind::editable : manifest::OriginKind::local;
    lp.origin.url = "file://" + path;
}

/// One [[packages]] entry. `own`: the lock is bootstrap's (its [packages.tool.bootstrap]).
std::optional<LockedPackage> read_package(Reader& rd, const Value& p, size_t index, const fs::path& dir, bool own) {
    auto raw_name = rd.required(p, "name", fmt::format("packages[{}]: ", index));
    if (!raw_name) return std::nullopt;
    LockedPackage lp;
    lp.name = pyenv::normalize_name(*raw_name);
    const std::string where = fmt::format("package {}: ", lp.name);
    lp.version = rd.str(p, "version", where);
    lp.marker = rd.str(p, "marker", where);
    if (!lp.marker.empty())
        if (auto m = pyenv::Marker::parse(lp.marker); !m) rd.report(p.get("marker")->loc, where + m.error().message);
    const auto index_url = rd.str(p, "index", where);
    const auto* tool = p.get("tool");
    const auto* mine = tool != nullptr && tool->is(ValueType::table) ? tool->get("bootstrap") : nullptr;
    if (own && mine != nullptr && mine->is(ValueType::table)) {
        lp.origin = read_origin(rd, *mine, where);
        if (lp.version.empty()) lp.version = rd.str(*mine, "version", where);
    } else {
        lp.origin.kind = manifest::OriginKind::index;
        if (!index_url.empty()) lp.origin.index_urls = {core::strip_credentials(index_url)};
    }
    // The index as recorded (credentials `***`) where it is one of the origin's URLs.
    lp.index = core::strip_credentials(index_url);
    for (const auto& recorded : lp.origin.index_urls)
        if (!index_url.empty() && core::strip_credentials(recorded) == lp.index) lp.index = recorded;
    for (const char* other : {"vcs", "archive"})
        if (const auto* v = p.get(other))
            rd.report(v->loc, fmt::format("{}a '{}' source: bootstrap installs a pylock's wheels only", where, other));
    if (const auto* d = rd.typed(p, "directory", ValueType::table, where)) {
        read_directory(rd, *d, dir, lp, where, own);
        return lp;
    }
    const auto wheels = rd.tables(p, "wheels", where);
    if (wheels.empty()) {
        if (p.get("sdist") != nullptr) rd.report(p.loc, where + "only an sdist: bootstrap installs wheels");
        else if (p.get("wheels") == nullptr) rd.report(p.loc, where + "no 'wheels' (nor a 'directory')");
        else if (p.get("wheels")->is(ValueType::array)) rd.report(p.get("wheels")->loc, where + "'wheels' is empty");
        return std::nullopt;
    }
    if (lp.version.empty()) rd.report(p.loc, where + "'version' is missing (bootstrap pins every package by version)");
    for (size_t i = 0; i < wheels.size(); ++i) read_wheel(rd, *wheels[i], dir, lp, i == 0, where);
    if (lp.url.empty() && !lp.path.empty() && !own) lp.origin.kind = manifest::OriginKind::local;
    return lp;
}

/// [tool.bootstrap]: the recipe, the steps and the packages locked by version only.
void read_tool(Reader& rd, const Value& t, Lockfile& lock) {
    const std::string where = "tool.bootstrap: ";
    const auto* schema = rd.typed(t, "schema", ValueType::integer, where);
    if (schema == nullptr) {
        if (t.get("schema") == nullptr) rd.report(t.loc, where + "'schema' is missing");
    } else if (schema->integer > manifest::k_lockfile_schema || schema->integer < 1) {
        rd.report(schema->loc, fmt::format("{}schema {} is not one this bootstrap reads (1 to {})", where,
                                           schema->integer, manifest::k_lockfile_schema));
    } else {
        lock.schema = static_cast<int>(schema->integer);
    }
    lock.recipe_name = rd.required(t, "recipe", where).value_or("");
    lock.recipe_digest = rd.required(t, "recipe-digest", where).value_or("");
    lock.python_version = rd.str(t, "python", where);
    lock.platform = rd.str(t, "platform", where);
    for (const auto* v : rd.tables(t, "version-only", where)) {
        LockedPackage lp;
        lp.name = pyenv::normalize_name(rd.required(*v, "name", where + "version-only: ").value_or(""));
        lp.version = rd.required(*v, "version", where + "version-only: ").value_or("");
        lp.origin = read_origin(rd, *v, where);
        if (!lp.name.empty()) lock.packages[lp.name] = std::move(lp);
    }
    const auto* steps = rd.typed(t, "steps", ValueType::table, where);
    if (steps == nullptr) return;
    for (const auto& entry : steps->table) {
        const std::string at = fmt::format("{}step {}: ", where, entry.key);
        if (!entry.value.is(ValueType::table)) {
            rd.report(entry.value.loc, at + "must be a table");
            continue;
        }
        manifest::LockedStep ls;
        ls.covered = rd.boolean(entry.value, "covered", true, at);
        ls.optional = rd.boolean(entry.value, "optional", false, at);
        ls.why = rd.str(entry.value, "why", at);
        ls.packages = rd.strings(entry.value, "packages", at);
        for (const auto& name : ls.packages)
            if (!lock.packages.count(name))
                rd.report(entry.value.loc, fmt::format("{}names {}, which is not locked", at, name));
        lock.steps[entry.key] = std::move(ls);
    }
}

Error invalid(const std::vector<std::string>& problems) {
    const auto more = problems.size() > 1 ? fmt::format(" (and {} more problem(s))", problems.size() - 1) : "";
    return Error{ErrorCode::usage, fmt::format("not a valid pylock.toml: {}{}", problems.front(), more),
                 problems.size() > 1 ? core::join(problems, "\n") : std::string()};
}

}  // namespace

Result<Lockfile> parse_pylock(std::string_view text, const fs::path& file) {
    BS_TRY(auto doc, recipe::parse_toml_document(text, file.string()));
    Reader rd;
    if (!read_version(rd, doc)) return tl::unexpected(invalid(rd.problems()));
    Lockfile lock;
    lock.file = file;
    read_header(rd, doc, lock);
    const auto* tool = rd.typed(doc, "tool", ValueType::table, "");
    const auto* own = tool != nullptr ? rd.typed(*tool, "bootstrap", ValueType::table, "tool: ") : nullptr;
    if (own != nullptr) lock.foreign_tool.clear();
    else if (lock.foreign_tool.empty()) lock.foreign_tool = "(unknown)";
    if (doc.get("packages") == nullptr) rd.report(doc.loc, "'packages' is missing");
    std::map<std::string, int> seen;  // name -> line of its entry
    const auto packages = rd.tables(doc, "packages", "");
    const fs::path dir = file.parent_path();
    for (size_t i = 0; i < packages.size(); ++i) {
        auto lp = read_package(rd, *packages[i], i, dir, own != nullptr);
        if (!lp) continue;
        if (auto [it, fresh] = seen.emplace(lp->name, packages[i]->loc.line); !fresh) {
            rd.report(packages[i]->loc, fmt::format("package {} is listed twice (also at line {}): bootstrap reads "
                                                    "locks of one environment",
                                                    lp->name, it->second));
            continue;
        }
        lock.packages[lp->name] = std::move(*lp);
    }
    if (own != nullptr) read_tool(rd, *own, lock);
    else lock.schema = manifest::k_lockfile_schema;
    if (!rd.problems().empty()) return tl::unexpected(invalid(rd.problems()));
    return lock;
}

bool is_pylock_name(const fs::path& file) { return file.extension() == ".toml"; }

Result<Lockfile> load_any_lockfile(const fs::path& file) {
    if (!is_pylock_name(file) && file.extension() == ".json") return manifest::load_lockfile(file);
    BS_TRY(auto text, core::read_regular_file(file, core::k_max_user_input));
    const auto first = text.find_first_not_of(" \t\r\n");
    if (!is_pylock_name(file) && first != std::string::npos && text[first] == '{') return manifest::load_lockfile(file);
    return parse_pylock(text, file);
}

}  // namespace bootstrap::lockfile
