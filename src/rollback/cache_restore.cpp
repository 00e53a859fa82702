#include "rollback/cache_restore.hpp"

#include <map>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "pyenv/broken_install.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/record.hpp"

namespace bootstrap::rollback {

namespace {

RestoreTarget restore_target(const fs::path& venv, const fs::path& site, const exec::EnvMap& env) {
    // uv links from its cache unless told otherwise (UV_LINK_MODE): the restore does as uv would.
    auto mode = env.find("UV_LINK_MODE");
    const bool hardlink = mode == env.end() || mode->second.empty() || mode->second == "hardlink";
    return {site, venv / "bin", venv / "bin" / "python", hardlink};
}

/// The installed `name` (if any) lists no file outside site-packages but in the venv's bin/
/// (its scripts, put in `scripts`): those a restore removes with it.
bool scripts_only_outside(const std::map<std::string, pyenv::Distribution>& installed, const std::string& name,
                          const fs::path& venv, std::vector<fs::path>& scripts) {
    auto it = installed.find(name);
    if (it == installed.end()) return true;
    const fs::path dist_info = it->second.dist_info();
    const fs::path site = dist_info.parent_path();
    auto record = core::read_regular_file(dist_info / "RECORD", pyenv::k_max_dist_info_file);
    if (!record) return false;
    const fs::path bin = (venv / "bin").lexically_normal();
    for (const auto& row : pyenv::parse_record(*record)) {
        if (row.path.empty() || row.path.front() == '/') return false;
        if (!row.path.starts_with("../")) continue;
        const fs::path file = (site / row.path).lexically_normal();
        if (file.parent_path() != bin) return false;
        scripts.push_back(file);
    }
    return true;
}

}  // namespace

Result<CacheRestores> plan_cache_restores(const std::vector<RollbackInstall>& installs, const fs::path& venv,
                                          const pyenv::InterpreterFacts& python, const exec::EnvMap& env,
                                          const std::function<bool(const RollbackInstall&)>& eligible) {
    CacheRestores out;
    const auto cache = uv_cache_dir(env);
    if (!cache) {
        out.rest = installs;
        return out;
    }
    std::vector<std::string> names;
    for (const auto& i : installs) names.push_back(i.name);
    BS_TRY(auto installed, pyenv::scan_venv_packages(python, names));
    const RestoreTarget where = restore_target(venv, python.purelib, env);
    for (const auto& i : installs) {
        std::optional<CachedRestore> found;
        std::vector<fs::path> old_scripts;
        if (eligible(i) && scripts_only_outside(installed, i.name, venv, old_scripts)) {
            for (const auto& wheel : cached_wheels(*cache, i.name, i.version)) {
                std::string why;
                BS_TRY(auto planned, plan_cached_restore(wheel, i.target, where, why));
                if (planned) {
                    found = std::move(planned);
                    break;
                }
                out.notes.push_back(fmt::format("{} {}: uv's cached {} does not restore it: {}", i.name, i.version,
                                                wheel.string(), why));
            }
        }
        if (found) out.cached.push_back({i.name, std::move(*found), std::move(old_scripts)});
        else out.rest.push_back(i);
    }
    return out;
}

Status restore_from_cache(const std::vector<CachedPackage>& cached, const fs::path& venv,
                          const pyenv::InterpreterFacts& python, const exec::EnvMap& env) {
    std::vector<std::string> names;
    for (const auto& c : cached) names.push_back(c.name);
    BS_TRY(auto installed, pyenv::scan_venv_packages(python, names));
    for (const auto& c : cached) {
        fs::path site = python.purelib;
        if (auto it = installed.find(c.name); it != installed.end()) {
            site = it->second.dist_info().parent_path();
            BS_TRY(auto removed, pyenv::remove_install(site, it->second));
            (void)removed;
            for (const auto& script : c.old_scripts) {
                std::error_code ec;
                fs::remove(script, ec);
            }
        }
        BS_CHECK(install_cached(c.restore, restore_target(venv, site, env)));
    }
    return {};
}

}  // namespace bootstrap::rollback
