#include "core/sha256.hpp"

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

namespace bootstrap::core {

struct Sha256::Impl {
    EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : m_impl(std::make_unique<Impl>()) {
    // Only a digest is asked of libcrypto: the system's openssl.cnf (TLS policy, provider
    // modules, which a static libcrypto from another distribution may not be able to load) is
    // not read.
    [[maybe_unused]] static const bool initialised = OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr) == 1;
    m_impl->ctx = EVP_MD_CTX_new();
    if (m_impl->ctx == nullptr || EVP_DigestInit_ex(m_impl->ctx, EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("OpenSSL: cannot initialise SHA-256");
}

Sha256::~Sha256() { EVP_MD_CTX_free(m_impl->ctx); }

void Sha256::update(std::string_view data) { EVP_DigestUpdate(m_impl->ctx, data.data(), data.size()); }

std::string Sha256::hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(m_impl->ctx, md, &len);
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
