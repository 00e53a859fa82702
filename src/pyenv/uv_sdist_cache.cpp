#include "pyenv/uv_sdist_cache.hpp"

#include <algorithm>

#include "core/fs.hpp"
#include "pyenv/uv_cache.hpp"

namespace bootstrap::pyenv {

namespace {

bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

std::optional<std::string> sha256_in_uv_revision(std::string_view bytes) {
    // msgpack: the key "Sha256" (fixstr 0xA6) then its value, a str8 (0xD9) of 64 bytes.
    constexpr std::string_view k_key = "\xA6Sha256\xD9\x40";
    for (size_t at = bytes.find(k_key); at != std::string_view::npos; at = bytes.find(k_key, at + 1)) {
        const auto digest = bytes.substr(at + k_key.size(), 64);
        if (digest.size() == 64 && std::all_of(digest.begin(), digest.end(), is_lower_hex)) return std::string(digest);
    }
    return std::nullopt;
}

std::vector<UvSdistBuild> uv_sdist_builds(const fs::path& cache, std::string_view normalized_name,
                                          std::string_view version) {
    std::vector<UvSdistBuild> out;
    for (const auto& dir : uv_bucket_dirs(cache, "sdists-v", normalized_name)) {
        const fs::path release = dir / std::string(version);
        for (const char* name : {"revision.http", "revision.rev"}) {
            auto bytes = core::read_regular_file(release / name, 64 * 1024);  // a few hundred bytes
            if (!bytes) continue;
            auto sha = sha256_in_uv_revision(*bytes);
            if (!sha) continue;
            UvSdistBuild build{*sha, {}, release / name};
            // The revision's directory is named by its id, which the revision file holds.
            std::error_code ec;
            for (const auto& rev : fs::directory_iterator(release, ec)) {
                const std::string id = rev.path().filename().string();
                std::error_code inner;
                if (id.empty() || !rev.is_directory(inner) || bytes->find(id) == std::string::npos) continue;
                for (const auto& f : fs::directory_iterator(rev.path(), inner))
                    if (f.path().extension() == ".whl" && f.is_regular_file(inner)) build.wheels.push_back(f.path());
            }
            std::sort(build.wheels.begin(), build.wheels.end());
            out.push_back(std::move(build));
        }
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.pointer < b.pointer; });
    return out;
}

}  // namespace bootstrap::pyenv
