#include "pyenv/uv_cache.hpp"

#include <algorithm>
#include <cstdint>

#include "core/fs.hpp"

namespace bootstrap::pyenv {

namespace {

std::string env_value(const exec::EnvMap& env, const char* name) {
    auto it = env.find(name);
    return it == env.end() ? std::string() : it->second;
}

/// Just enough msgpack for the pointer: arrays, maps and strings, read front to back.
class MsgpackReader {
public:
    explicit MsgpackReader(std::string_view bytes) : m_bytes(bytes) {}

    /// An array's or a map's length (`map` picks which), nullopt for anything else.
    std::optional<size_t> container(bool map) {
        auto b = byte();
        if (!b) return std::nullopt;
        if (!map && (*b & 0xF0) == 0x90) return *b & 0x0F;
        if (map && (*b & 0xF0) == 0x80) return *b & 0x0F;
        if (*b == (map ? 0xDE : 0xDC)) return number(2);
        if (*b == (map ? 0xDF : 0xDD)) return number(4);
        return std::nullopt;
    }

    std::optional<std::string_view> string() {
        auto b = byte();
        if (!b) return std::nullopt;
        std::optional<size_t> n;
        if ((*b & 0xE0) == 0xA0) n = *b & 0x1F;
        else if (*b == 0xD9) n = number(1);
        else if (*b == 0xDA) n = number(2);
        else if (*b == 0xDB) n = number(4);
        if (!n || *n > m_bytes.size() - m_at) return std::nullopt;
        auto out = m_bytes.substr(m_at, *n);
        m_at += *n;
        return out;
    }

private:
    std::optional<unsigned char> byte() {
        if (m_at >= m_bytes.size()) return std::nullopt;
        return static_cast<unsigned char>(m_bytes[m_at++]);
    }
    std::optional<size_t> number(int width) {
        size_t out = 0;
        for (int i = 0; i < width; ++i) {
            auto b = byte();
            if (!b) return std::nullopt;
            out = (out << 8) | *b;
        }
        return out;
    }

    std::string_view m_bytes;
    size_t m_at = 0;
};

bool is_hex64(std::string_view s) {
    return s.size() == 64 &&
           std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

std::optional<fs::path> uv_cache_dir(const exec::EnvMap& env) {
    if (const std::string no_cache = env_value(env, "UV_NO_CACHE");
        !no_cache.empty() && no_cache != "0" && no_cache != "false")
        return std::nullopt;
    if (std::string dir = env_value(env, "UV_CACHE_DIR"); !dir.empty()) return fs::path(dir);
    if (std::string xdg = env_value(env, "XDG_CACHE_HOME"); !xdg.empty() && xdg.front() == '/')
        return fs::path(xdg) / "uv";
    if (std::string home = env_value(env, "HOME"); !home.empty()) return fs::path(home) / ".cache" / "uv";
    return std::nullopt;
}

std::optional<UvWheelRecord> parse_uv_wheel_pointer(std::string_view bytes) {
    MsgpackReader rd(bytes);
    auto items = rd.container(false);
    if (!items || *items < 3 || !rd.string()) return std::nullopt;  // the archive's id
    auto hashes = rd.container(false);
    if (!hashes) return std::nullopt;
    UvWheelRecord out;
    for (size_t i = 0; i < *hashes; ++i) {
        auto entries = rd.container(true);
        if (!entries) return std::nullopt;
        for (size_t j = 0; j < *entries; ++j) {
            auto algorithm = rd.string();
            auto digest = rd.string();
            if (!algorithm || !digest) return std::nullopt;
            if (*algorithm == "Sha256" && is_hex64(*digest)) out.sha256 = *digest;
        }
    }
    auto filename = rd.string();
    if (!filename || !filename->ends_with(".whl") || out.sha256.empty()) return std::nullopt;
    out.filename = *filename;
    return out;
}

std::vector<fs::path> uv_wheel_dirs(const fs::path& cache, std::string_view normalized_name) {
    return uv_bucket_dirs(cache, "wheels-v", normalized_name);
}

std::vector<fs::path> uv_bucket_dirs(const fs::path& cache, std::string_view bucket_prefix,
                                     std::string_view normalized_name) {
    std::vector<fs::path> name_dirs;
    std::error_code ec;
    for (const auto& bucket : fs::directory_iterator(cache, ec)) {
        if (!bucket.path().filename().string().starts_with(bucket_prefix)) continue;
        std::error_code inner;
        for (const auto& source : fs::directory_iterator(bucket.path(), inner)) {
            name_dirs.push_back(source.path() / std::string(normalized_name));
            std::error_code deeper;
            for (const auto& hash : fs::directory_iterator(source.path(), deeper))
                if (hash.is_directory(deeper)) name_dirs.push_back(hash.path() / std::string(normalized_name));
        }
    }
    return name_dirs;
}

std::vector<UvWheelRecord> uv_wheel_records(const fs::path& cache, std::string_view normalized_name,
                                            std::string_view version) {
    std::vector<UvWheelRecord> out;
    const std::string prefix = std::string(version) + "-";
    for (const auto& dir : uv_wheel_dirs(cache, normalized_name)) {
        std::error_code inner;
        for (const auto& entry : fs::directory_iterator(dir, inner)) {
            const std::string name = entry.path().filename().string();
            if (!name.starts_with(prefix) || !name.ends_with(".http")) continue;
            auto bytes = core::read_regular_file(entry.path(), 64 * 1024);  // a pointer is a few hundred bytes
            if (!bytes) continue;
            if (auto record = parse_uv_wheel_pointer(*bytes)) {
                record->pointer = entry.path();
                out.push_back(std::move(*record));
            }
        }
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.pointer < b.pointer; });
    return out;
}

}  // namespace bootstrap::pyenv
