#include "lockfile/sdist_lock.hpp"

#include <algorithm>

#include "core/redact.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "pyenv/name.hpp"
#include "pyenv/sdist_name.hpp"
#include "pyenv/uv_sdist_cache.hpp"
#include "pyenv/wheel_name.hpp"

namespace bootstrap::lockfile {

namespace {

/// "docopt-0.6.2-py2.py3-none-any.whl" for the installed tags {py2-none-any, py3-none-any}.
std::string wheel_name_for(const manifest::Package& pkg) {
    std::vector<std::vector<std::string>> parts(3);
    for (const auto& tag : core::split(pkg.wheel_tag, ',')) {
        auto fields = core::split(tag, '-');
        for (size_t i = 0; i < 3 && i < fields.size(); ++i)
            if (std::find(parts[i].begin(), parts[i].end(), fields[i]) == parts[i].end()) parts[i].push_back(fields[i]);
    }
    std::string name = pyenv::normalize_name(pkg.name);
    std::replace(name.begin(), name.end(), '-', '_');
    if (parts[0].empty() || parts[1].empty() || parts[2].empty()) return {};
    return name + "-" + pkg.version + "-" + core::join(parts[0], ".") + "-" + core::join(parts[1], ".") + "-" +
           core::join(parts[2], ".") + ".whl";
}

}  // namespace

std::optional<IndexFile> find_release_sdist(const std::vector<IndexFile>& files, const manifest::Package& pkg) {
    for (const auto& f : files)
        if (pyenv::is_sdist_of(f.filename, pkg.name, pkg.version)) return f;
    return std::nullopt;
}

void lock_sdist(const BytesAtHand& at_hand, const manifest::Package& pkg, const IndexFile& sdist,
                manifest::LockedPackage& lp, const steps::SourceBuilt* built) {
    lp.wheel.clear();
    lp.sdist = sdist.filename;
    lp.sha256 = sdist.sha256;
    lp.url = core::strip_credentials(sdist.url);
    lp.hash_source = k_hash_from_index;
    lp.built_wheel = wheel_name_for(pkg);
    if (built != nullptr && built->sha256 == sdist.sha256 && built->version == pkg.version) {
        lp.hash_source = k_hash_from_build_cache;
        lp.built_wheel = built->wheel;
        lp.built_sha256 = built->wheel_sha256;
        lp.built_key = built->key;
        return;
    }
    if (!at_hand.uv_cache) return;
    auto tags = pyenv::expand_tags(core::split(pkg.wheel_tag, ','));
    for (const auto& build : pyenv::uv_sdist_builds(*at_hand.uv_cache, pyenv::normalize_name(pkg.name), pkg.version)) {
        if (build.sdist_sha256 != sdist.sha256) continue;
        lp.hash_source = k_hash_from_uv_cache;  // uv hashed the sdist it downloaded to the index's digest
        for (const auto& path : build.wheels) {
            auto wheel = pyenv::parse_wheel_name(path.filename().string());
            if (!wheel || !tags || wheel->tags != *tags || !pyenv::is_release_of(*wheel, pkg.name, pkg.version))
                continue;
            if (auto digest = core::sha256_file(path)) {
                lp.built_wheel = wheel->file_name;
                lp.built_sha256 = *digest;
                return;
            }
        }
    }
}

}  // namespace bootstrap::lockfile
