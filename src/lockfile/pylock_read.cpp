// Reading a pylock.toml (lockfile/pylock.hpp) into the Lockfile a --locked run installs: the
// format itself is read by steps/pylock_data.hpp (the one reader, which install steps with
// `pylock` use too); bootstrap's own [tool.bootstrap] tables are read here, with the same
// PylockReader, so every problem of the file is located and reported together.

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/lockfile_limit.hpp"
#include "core/redact.hpp"
#include "lockfile/pylock.hpp"
#include "pyenv/name.hpp"
#include "pyenv/requirement_line.hpp"
#include "recipe/toml_document.hpp"
#include "steps/pylock_data.hpp"

namespace bootstrap::lockfile {

using manifest::LockedPackage;
using manifest::Lockfile;
using recipe::Value;
using recipe::ValueType;

namespace {

bool is_sha256(std::string_view s) {
    return s.size() == 64 &&
           std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

/// The origin bootstrap recorded (a [packages.tool.bootstrap] or version-only table).
manifest::Origin read_origin(steps::PylockReader& rd, const Value& t, std::string_view where) {
    manifest::Origin o;
    o.kind = manifest::parse_origin_kind(rd.str(t, "origin", where));
    o.step = rd.str(t, "step", where);
    o.index_urls = rd.strings(t, "index-urls", where);
    for (const auto& url : o.index_urls)  // each an installer's --index-url
        if (auto why = pyenv::unsafe_installer_value(url))
            rd.report(t.get("index-urls")->loc, fmt::format("{}an 'index-urls' entry {}: refused", where, *why));
    o.url = rd.installer_str(t, "url", where);
    o.vcs = rd.str(t, "vcs", where);
    o.commit = rd.str(t, "commit", where);
    o.artifact_sha256 = rd.str(t, "artifact-sha256", where);
    if (!o.artifact_sha256.empty() && !is_sha256(o.artifact_sha256)) {  // it names a path in the store
        rd.report(t.get("artifact-sha256")->loc,
                  fmt::format("{}'artifact-sha256' is not 64 lower-case hex digits", where));
        o.artifact_sha256.clear();
    }
    o.archive_hash = rd.str(t, "archive-hash", where);
    return o;
}

/// Where a package's table is (its key in the origins bootstrap recorded).
using EntryAt = std::pair<int, int>;

/// A package as the Lockfile keeps it. `recorded`: the origin its [packages.tool.bootstrap]
/// table gave (bootstrap's own lock), null otherwise; `own`: the lock is bootstrap's.
LockedPackage to_locked(const steps::PylockPackage& p, const manifest::Origin* recorded, bool own) {
    LockedPackage lp;
    lp.name = p.name;
    lp.version = p.version;
    lp.marker = p.marker;
    if (recorded != nullptr) {
        lp.origin = *recorded;
    } else {
        lp.origin.kind = manifest::OriginKind::index;
        if (!p.index.empty()) lp.origin.index_urls = {core::strip_credentials(p.index)};
    }
    // The index as recorded (credentials `***`) where it is one of the origin's URLs.
    lp.index = core::strip_credentials(p.index);
    for (const auto& url : lp.origin.index_urls)
        if (!p.index.empty() && core::strip_credentials(url) == lp.index) lp.index = url;
    if (p.directory) {
        // An (editable) project the recipe's steps install from its source; bootstrap's own
        // lock keeps the origin it recorded instead.
        if (own && !lp.origin.url.empty()) return lp;
        lp.origin.kind = p.directory->editable ? manifest::OriginKind::editable : manifest::OriginKind::local;
        lp.origin.url = "file://" + p.directory->path;
        return lp;
    }
    for (size_t i = 0; i < p.wheels.size(); ++i) {
        const auto& w = p.wheels[i];
        if (i > 0) {
            if (!w.sha256.empty()) lp.more_sha256.push_back(w.sha256);
            continue;
        }
        lp.wheel = w.file_name;
        lp.sha256 = w.sha256;
        lp.url = core::strip_credentials(w.url);
        lp.path = w.path;
    }
    if (p.sdist && p.wheels.empty()) {  // built from its sdist: the installer checks the sdist's bytes
        lp.sdist = p.sdist->file_name;
        lp.sha256 = p.sdist->sha256;
        lp.url = core::strip_credentials(p.sdist->url);
        lp.path = p.sdist->path;
    } else if (p.sdist && !p.sdist->sha256.empty()) {
        lp.more_sha256.push_back(p.sdist->sha256);  // where no wheel fits, the installer builds it
    }
    if (lp.url.empty() && !lp.path.empty() && !own) lp.origin.kind = manifest::OriginKind::local;
    return lp;
}

/// [tool.bootstrap]: the recipe, the steps and the packages locked by version only.
void read_tool(steps::PylockReader& rd, const Value& t, Lockfile& lock) {
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

/// [tool.bootstrap.recipe-inputs]: the recipe's meaning the lock recorded (its `recipe` table)
/// and each step's (`steps.<id>`): a string per input, an array of strings for a list.
void read_recipe_inputs(steps::PylockReader& rd, const Value& t, Lockfile& lock) {
    const std::string where = "tool.bootstrap.recipe-inputs: ";
    const auto* all = rd.typed(t, "recipe-inputs", ValueType::table, "tool.bootstrap: ");
    if (all == nullptr) return;
    auto read = [&](const Value& table, const std::string& at) {
        std::vector<core::KeyInput> out;
        for (const auto& e : table.table) {
            if (e.value.is(ValueType::string)) {
                out.push_back({e.key, {e.value.string}, false});
            } else if (e.value.is(ValueType::array)) {
                out.push_back({e.key, rd.strings(table, e.key, at), true});
            } else {
                rd.report(e.value.loc, fmt::format("{}'{}' must be a string or an array of strings", at, e.key));
            }
        }
        return out;
    };
    if (const auto* recipe = rd.typed(*all, "recipe", ValueType::table, where))
        lock.recipe_inputs = read(*recipe, where);
    const auto* steps = rd.typed(*all, "steps", ValueType::table, where);
    if (steps == nullptr) return;
    for (const auto& entry : steps->table) {
        const std::string at = fmt::format("{}step {}: ", where, entry.key);
        auto step = lock.steps.find(entry.key);
        if (!entry.value.is(ValueType::table) || step == lock.steps.end())
            rd.report(entry.value.loc, at + "must be a table of a step [tool.bootstrap.steps] has");
        else step->second.inputs = read(entry.value, at);
    }
}

}  // namespace

Result<Lockfile> parse_pylock(std::string_view text, const fs::path& file) {
    BS_TRY(auto doc, recipe::parse_toml_document(text, file.string()));
    steps::PylockReader rd;
    steps::PylockData data;
    data.file = file;
    if (!steps::read_pylock_header(rd, doc, data)) return tl::unexpected(steps::invalid_pylock(rd.problems()));
    Lockfile lock;
    lock.file = file;
    lock.foreign_tool = data.created_by;
    lock.requires_python = data.requires_python;
    lock.environments = data.environments;
    const auto* tool = rd.typed(doc, "tool", ValueType::table, "");
    const auto* own = tool != nullptr ? rd.typed(*tool, "bootstrap", ValueType::table, "tool: ") : nullptr;
    if (own != nullptr) lock.foreign_tool.clear();
    else if (lock.foreign_tool.empty()) lock.foreign_tool = "(unknown)";
    // Bootstrap's own lock: each package's [packages.tool.bootstrap] (its origin; a directory's
    // version), read where the package is.
    std::map<EntryAt, manifest::Origin> recorded;
    std::map<EntryAt, std::string> hash_sources;
    struct Built {
        std::string wheel, sha256, key;
    };
    std::map<EntryAt, Built> built;  // the wheel built from its sdist
    auto read_own = [&](steps::PylockReader& r, const Value& entry, steps::PylockPackage& p) {
        const auto* t = entry.get("tool");
        const auto* mine = t != nullptr && t->is(ValueType::table) ? t->get("bootstrap") : nullptr;
        if (own == nullptr || mine == nullptr || !mine->is(ValueType::table)) return;
        const std::string where = fmt::format("package {}: ", p.name);
        recorded[{entry.loc.line, entry.loc.column}] = read_origin(r, *mine, where);
        hash_sources[{entry.loc.line, entry.loc.column}] = r.str(*mine, "hash-source", where);
        auto built_sha = r.str(*mine, "built-sha256", where);
        if (!built_sha.empty() && !is_sha256(built_sha)) {
            r.report(mine->get("built-sha256")->loc, where + "'built-sha256' is not 64 lower-case hex digits");
            built_sha.clear();
        }
        auto built_key = r.str(*mine, "built-key", where);
        if (!built_key.empty() && !is_sha256(built_key)) {
            r.report(mine->get("built-key")->loc, where + "'built-key' is not 64 lower-case hex digits");
            built_key.clear();
        }
        built[{entry.loc.line, entry.loc.column}] = {r.str(*mine, "built-wheel", where), built_sha, built_key};
        if (p.version.empty()) p.version = r.str(*mine, "version", where);
    };
    steps::read_pylock_packages(rd, doc, data, read_own);
    for (const auto& p : data.packages) {
        auto it = recorded.find({p.loc.line, p.loc.column});
        lock.packages[p.name] = to_locked(p, it == recorded.end() ? nullptr : &it->second, own != nullptr);
        auto& lp = lock.packages[p.name];
        if (auto source = hash_sources.find({p.loc.line, p.loc.column}); source != hash_sources.end())
            lp.hash_source = source->second;
        if (auto b = built.find({p.loc.line, p.loc.column}); b != built.end() && !lp.sdist.empty())
            std::tie(lp.built_wheel, lp.built_sha256, lp.built_key) =
                std::tie(b->second.wheel, b->second.sha256, b->second.key);
        lp.at = fmt::format("{}:{}", file.string(), (p.sdist && p.wheels.empty() ? p.sdist->loc : p.loc).line);
    }
    if (own != nullptr) {
        read_tool(rd, *own, lock);
        read_recipe_inputs(rd, *own, lock);
    } else {
        lock.schema = manifest::k_lockfile_schema;
    }
    if (!rd.problems().empty()) return tl::unexpected(steps::invalid_pylock(rd.problems()));
    return lock;
}

bool is_pylock_name(const fs::path& file) { return file.extension() == ".toml"; }

Result<Lockfile> load_any_lockfile(const fs::path& file) {
    if (!is_pylock_name(file) && file.extension() == ".json") return manifest::load_lockfile(file);
    BS_TRY(auto text, core::read_lockfile_text(file));
    const auto first = text.find_first_not_of(" \t\r\n");
    if (!is_pylock_name(file) && first != std::string::npos && text[first] == '{') return manifest::load_lockfile(file);
    return parse_pylock(text, file);
}

}  // namespace bootstrap::lockfile
