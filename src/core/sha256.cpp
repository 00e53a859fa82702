#include "core/sha256.hpp"

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
// The one-algorithm interface, not EVP: EVP's provider machinery (every algorithm's tables,
// the config loader) would be linked into the static binary and relocated at every start-up
// (~300 KiB of pointers, ~100 page faults) for a digest that needs none of it. OpenSSL 3 marks
// these functions deprecated in favour of EVP; they remain its supported SHA-256 code (the same
// SHA-NI/AVX2 assembly EVP ends up in).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

namespace bootstrap::core {

struct Sha256::Impl {
    SHA256_CTX ctx{};
};

Sha256::Sha256() : m_impl(std::make_unique<Impl>()) {
    if (SHA256_Init(&m_impl->ctx) != 1) throw std::runtime_error("OpenSSL: cannot initialise SHA-256");
}

Sha256::~Sha256() = default;

void Sha256::update(std::string_view data) { SHA256_Update(&m_impl->ctx, data.data(), data.size()); }

std::string Sha256::hex() {
    unsigned char md[SHA256_DIGEST_LENGTH];
    const unsigned len = SHA256_DIGEST_LENGTH;
    SHA256_Final(md, &m_impl->ctx);
    static constexpr char k_digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(len * 2);
    for (unsigned i = 0; i < len; ++i) {
        out.push_back(k_digits[md[i] >> 4]);
        out.push_back(k_digits[md[i] & 0xf]);
    }
    return out;
}

std::string sha256_hex(std::string_view data) {
    Sha256 h;
    h.update(data);
    return h.hex();
}

Result<std::string> sha256_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return fail(ErrorCode::io, fmt::format("cannot read {}", path.string()));
    Sha256 h;
    char buf[1 << 16];
    while (in) {
        in.read(buf, sizeof buf);
        h.update(std::string_view(buf, static_cast<size_t>(in.gcount())));
    }
    return h.hex();
}

bool is_sha256_hex(std::string_view s) {
    if (s.size() != 64) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

}  // namespace bootstrap::core
