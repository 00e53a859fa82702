#pragma once
// SHA-256 (OpenSSL's libcrypto): streaming digests for keys, files and wheels.

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace bootstrap::core {

class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(std::string_view data);
    /// Lower-case hex digest; the object may not be updated afterwards.
    std::string hex();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

[[nodiscard]] std::string sha256_hex(std::string_view data);
/// True for a sha256 digest as this program writes one: 64 lower-case hex digits.
[[nodiscard]] bool is_sha256_hex(std::string_view s);
[[nodiscard]] Result<std::string> sha256_file(const std::filesystem::path& path);

}  // namespace bootstrap::core
