#include "manifest/lockfile.hpp"

#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/strings.hpp"

namespace bootstrap::manifest {

namespace {

nlohmann::json origin_json(const Origin& o) {
    nlohmann::json j{{"kind", o.kind}};
    if (!o.url.empty()) j["url"] = o.url;
    if (!o.index_urls.empty()) j["index_urls"] = o.index_urls;
    if (!o.step.empty()) j["step"] = o.step;
    if (!o.artifact_sha256.empty()) j["artifact_sha256"] = o.artifact_sha256;
    if (!o.vcs.empty()) j["vcs"] = o.vcs;
    if (!o.commit.empty()) j["commit"] = o.commit;
    return j;
}

Origin origin_from(const nlohmann::json& j) {
    Origin o;
    o.kind = j.value("kind", "unknown");
    o.url = j.value("url", "");
    o.index_urls = j.value("index_urls", std::vector<std::string>{});
    o.step = j.value("step", "");
    o.artifact_sha256 = j.value("artifact_sha256", "");
    o.vcs = j.value("vcs", "");
    o.commit = j.value("commit", "");
    return o;
}

}  // namespace

std::string to_json(const Lockfile& lock) {
    nlohmann::json j;
    j["schema"] = lock.schema;
    j["recipe"] = {{"name", lock.recipe_name}, {"digest", lock.recipe_digest}};
    j["python"] = {{"version", lock.python_version}, {"platform", lock.platform}};
    j["packages"] = nlohmann::json::object();
    for (const auto& [name, p] : lock.packages)
        j["packages"][name] = {
            {"version", p.version}, {"wheel", p.wheel}, {"sha256", p.sha256}, {"origin", origin_json(p.origin)}};
    return j.dump(2) + "\n";
}

Result<Lockfile> load_lockfile(const fs::path& file) {
    BS_TRY(auto text, core::read_file(file));
    try {
        auto j = nlohmann::json::parse(text);
        int schema = j.value("schema", 0);
        if (schema > k_lockfile_schema)
            return fail(ErrorCode::usage,
                        fmt::format("{}: lockfile schema {} is newer than this bootstrap understands ({})",
                                    file.string(), schema, k_lockfile_schema));
        if (schema < 1) return fail(ErrorCode::usage, fmt::format("{}: not a bootstrap lockfile", file.string()));
        Lockfile lock;
        lock.recipe_name = j.at("recipe").at("name").get<std::string>();
        lock.recipe_digest = j.at("recipe").at("digest").get<std::string>();
        lock.python_version = j.at("python").value("version", "");
        lock.platform = j.at("python").value("platform", "");
        for (const auto& [name, p] : j.at("packages").items()) {
            LockedPackage lp;
            lp.name = name;
            lp.version = p.at("version").get<std::string>();
            lp.wheel = p.value("wheel", "");
            lp.sha256 = p.value("sha256", "");
            lp.origin = origin_from(p.value("origin", nlohmann::json::object()));
            lock.packages[name] = std::move(lp);
        }
        return lock;
    } catch (const nlohmann::json::exception& e) {
        return fail(ErrorCode::usage, fmt::format("{}: not a valid lockfile: {}", file.string(), e.what()));
    }
}

Status save_lockfile(const fs::path& file, const Lockfile& lock) {
    return core::write_file_atomic(file, to_json(lock));
}

std::string locked_requirements(const std::vector<const LockedPackage*>& packages,
                                const std::map<std::string, fs::path>& artifact_paths) {
    std::string out;
    for (const auto* p : packages) {
        auto artifact = artifact_paths.find(p->name);
        if (artifact != artifact_paths.end())
            out += fmt::format("{} --hash=sha256:{}\n", artifact->second.string(), p->sha256);
        else
            out += fmt::format("{}=={} --hash=sha256:{}\n", p->name, p->version, p->sha256);
    }
    return out;
}

std::vector<std::string> lock_drift(const Lockfile& lock, const Manifest& venv) {
    std::vector<std::string> drift;
    for (const auto& [name, pkg] : venv.packages) {
        auto it = lock.packages.find(name);
        if (it == lock.packages.end())
            drift.push_back(fmt::format("{} {} is installed but not locked", name, pkg.version));
        else if (it->second.version != pkg.version)
            drift.push_back(fmt::format("{} is {}, locked {}", name, pkg.version, it->second.version));
    }
    for (const auto& [name, p] : lock.packages)
        if (!venv.packages.count(name)) drift.push_back(fmt::format("{} {} is locked but not installed", name, p.version));
    return drift;
}

}  // namespace bootstrap::manifest
