#include "manifest/lockfile.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/json_fields.hpp"
#include "core/lockfile_limit.hpp"
#include "core/strings.hpp"
#include "manifest/inputs_json.hpp"
#include "manifest/origin_json.hpp"
#include "pyenv/name.hpp"
#include "pyenv/requirement_line.hpp"
#include "pyenv/sdist_name.hpp"

namespace bootstrap::manifest {

std::string to_json(const Lockfile& lock) {
    nlohmann::json j;
    j["schema"] = lock.schema;
    j["recipe"] = {{"name", lock.recipe_name}, {"digest", lock.recipe_digest}};
    if (!lock.recipe_inputs.empty()) j["recipe"]["inputs"] = inputs_to_json(lock.recipe_inputs);
    j["python"] = {{"version", lock.python_version}, {"platform", lock.platform}};
    j["packages"] = nlohmann::json::object();
    for (const auto& [name, p] : lock.packages) {
        j["packages"][name] = {
            {"version", p.version}, {"wheel", p.wheel}, {"sha256", p.sha256}, {"origin", origin_to_json(p.origin)}};
        if (!p.url.empty()) j["packages"][name]["url"] = p.url;
        if (!p.index.empty()) j["packages"][name]["index"] = p.index;
        if (!p.hash_source.empty()) j["packages"][name]["hash_source"] = p.hash_source;
        if (!p.sdist.empty()) {
            j["packages"][name]["sdist"] = p.sdist;
            j["packages"][name]["built"] = {
                {"wheel", p.built_wheel}, {"sha256", p.built_sha256}, {"note", k_built_note}};
            if (!p.built_key.empty()) j["packages"][name]["built"]["key"] = p.built_key;
        }
    }
    j["steps"] = nlohmann::json::object();
    for (const auto& [id, st] : lock.steps) {
        nlohmann::json js = nlohmann::json::object();
        if (!st.covered) js["covered"] = false;
        if (st.optional) js["optional"] = true;
        if (!st.why.empty()) js["why"] = st.why;
        if (st.covered && !st.packages.empty()) js["packages"] = st.packages;
        if (!st.inputs.empty()) js["inputs"] = inputs_to_json(st.inputs);
        j["steps"][id] = std::move(js);
    }
    return j.dump(2) + "\n";
}

namespace {

bool is_sha256(std::string_view s) {
    return s.size() == 64 &&
           std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

/// The values of a locked package that reach an installer (a requirements line, --index-url)
/// or name a path (the artifact store's entry): refused unless they can be written safely.
void check_package(const core::JsonFields& p, const LockedPackage& lp) {
    if (!pyenv::is_valid_name(lp.name)) p.invalid("", "not a PEP 508 project name");
    if (auto why = pyenv::unsafe_installer_value(lp.version)) p.invalid("version", *why);
    if (!lp.sha256.empty() && !is_sha256(lp.sha256)) p.invalid("sha256", "not 64 lower-case hex digits");
    if (!lp.sdist.empty() && (lp.sha256.empty() || !pyenv::is_sdist_of(lp.sdist, lp.name, lp.version)))
        p.invalid("sdist", "not an sdist of " + lp.name + " " + lp.version + " with a sha256");
    if (!lp.built_sha256.empty() && !is_sha256(lp.built_sha256))
        p.invalid("built", "its sha256 is not 64 lower-case hex digits");
    if (!lp.built_key.empty() && !is_sha256(lp.built_key))
        p.invalid("built", "its key is not 64 lower-case hex digits");
}

/// The line of each package's entry in a lockfile's JSON text (as to_json writes it), for
/// messages that point at it.
void locate_packages(std::string_view text, Lockfile& lock) {
    const size_t packages = text.find("\"packages\"");
    if (packages == std::string_view::npos) return;
    for (auto& [name, lp] : lock.packages) {
        const size_t at = text.find("\"" + name + "\": {", packages);
        if (at == std::string_view::npos) continue;
        const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
        lp.at = lock.file.string() + ":" + std::to_string(line);
    }
}

void check_origin(const core::JsonFields& o, const Origin& origin) {
    for (const auto& url : origin.index_urls)
        if (auto why = pyenv::unsafe_installer_value(url)) o.invalid("index_urls", *why);
    if (!origin.artifact_sha256.empty() && !is_sha256(origin.artifact_sha256))
        o.invalid("artifact_sha256", "not 64 lower-case hex digits");
}

}  // namespace

Result<Lockfile> load_lockfile(const fs::path& file) {
    BS_TRY(auto text, core::read_lockfile_text(file));
    auto invalid = [&](const std::string& why) -> Result<Lockfile> {
        return fail(ErrorCode::usage, fmt::format("{}: not a valid lockfile: {}", file.string(), why));
    };
    return core::read_json(
        text,
        [&](const core::JsonFields& j) -> Result<Lockfile> {
            const auto schema = j.integer("schema", 0);
            if (schema > k_lockfile_schema)
                return fail(ErrorCode::usage,
                            fmt::format("{}: lockfile schema {} is newer than this bootstrap understands ({})",
                                        file.string(), schema, k_lockfile_schema));
            if (schema < 1) return fail(ErrorCode::usage, fmt::format("{}: not a bootstrap lockfile", file.string()));
            auto required = [&](const core::JsonFields& f, std::string_view key) {
                if (!f.has(key)) f.invalid(key, "missing");
                return f.str(key);
            };
            auto recipe = j.object("recipe");
            auto python = j.object("python");
            if (!recipe) j.invalid("recipe", "missing");
            if (!python) j.invalid("python", "missing");
            if (!j.object("packages")) j.invalid("packages", "missing");
            Lockfile lock;
            lock.schema = static_cast<int>(schema);
            lock.file = file;
            lock.recipe_name = required(*recipe, "name");
            lock.recipe_digest = required(*recipe, "digest");
            lock.recipe_inputs = inputs_from_json(*recipe, "inputs");
            lock.python_version = python->str("version");
            lock.platform = python->str("platform");
            for (const auto& [name, p] : j.objects("packages")) {
                LockedPackage lp;
                lp.name = name;
                lp.version = required(p, "version");
                lp.wheel = p.str("wheel");
                lp.sha256 = p.str("sha256");
                lp.url = p.str("url");
                lp.index = p.str("index");
                lp.hash_source = p.str("hash_source");
                lp.sdist = p.str("sdist");
                if (auto built = p.object("built")) {
                    lp.built_wheel = built->str("wheel");
                    lp.built_sha256 = built->str("sha256");
                    lp.built_key = built->str("key");
                }
                if (auto origin = p.object("origin")) {
                    lp.origin = origin_from_json(*origin);
                    check_origin(*origin, lp.origin);
                } else {
                    lp.origin.kind = OriginKind::unknown;
                }
                check_package(p, lp);
                lock.packages[name] = std::move(lp);
            }
            for (const auto& [id, st] : j.objects("steps")) {
                LockedStep ls;
                ls.covered = st.boolean("covered", true);
                ls.optional = st.boolean("optional", false);
                ls.why = st.str("why");
                ls.packages = st.strings("packages");
                ls.inputs = inputs_from_json(st, "inputs");
                for (const auto& name : ls.packages)
                    if (!lock.packages.count(name)) st.invalid("packages", "names " + name + ", which is not locked");
                lock.steps[id] = std::move(ls);
            }
            locate_packages(text, lock);
            return lock;
        },
        invalid);
}

Status save_lockfile(const fs::path& file, const Lockfile& lock) {
    return core::write_file_atomic(file, to_json(lock));
}

Result<std::string> locked_requirements(const std::vector<const LockedPackage*>& packages,
                                        const std::map<std::string, fs::path>& artifact_paths) {
    std::string out;
    for (const auto* p : packages) {
        // Each line from the checked fields only (pyenv/requirement_line.hpp): one requirement.
        pyenv::HashedRequirement r{p->name, p->version, "", "", {p->sha256}};
        r.sha256.insert(r.sha256.end(), p->more_sha256.begin(), p->more_sha256.end());
        if (auto artifact = artifact_paths.find(p->name); artifact != artifact_paths.end())
            r.wheel = artifact->second.string();
        BS_TRY(auto line, pyenv::hashed_requirement_line(r));
        out += line + "\n";
    }
    return out;
}

std::vector<std::string> lock_drift(const Lockfile& lock, const Manifest& venv) { return lock_drift(lock, venv, {}); }

std::vector<std::string> lock_drift(const Lockfile& lock, const Manifest& venv,
                                    const std::set<std::string>& not_required) {
    std::vector<std::string> drift;
    for (const auto& [name, pkg] : venv.packages) {
        auto it = lock.packages.find(name);
        if (it == lock.packages.end())
            drift.push_back(fmt::format("{} {} is installed but not locked", name, pkg.version));
        else if (!it->second.version.empty() && it->second.version != pkg.version)
            drift.push_back(fmt::format("{} is {}, locked {}", name, pkg.version, it->second.version));
    }
    for (const auto& [name, p] : lock.packages)
        // A pylock's package with a marker may be meant for another environment only.
        if (!venv.packages.count(name) && p.marker.empty() && !not_required.count(name))
            drift.push_back(
                fmt::format("{}{}{} is locked but not installed", name, p.version.empty() ? "" : " ", p.version));
    return drift;
}

}  // namespace bootstrap::manifest
