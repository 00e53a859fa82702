#include "core/ed25519.hpp"

#include <pwd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include <fmt/format.h>
// Declarations only: every function is looked up in the dlopen()ed libcrypto.so.3 (nothing of
// EVP is linked into the binary; see the header comment).
#include <openssl/evp.h>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "core/shared_library.hpp"
#include "core/strings.hpp"

namespace bootstrap::core {

namespace {

constexpr size_t k_key_bytes = 32;
constexpr size_t k_signature_bytes = 64;

struct EvpApi {
    decltype(&EVP_PKEY_new_raw_private_key) new_private = nullptr;
    decltype(&EVP_PKEY_new_raw_public_key) new_public = nullptr;
    decltype(&EVP_PKEY_get_raw_public_key) get_public = nullptr;
    decltype(&EVP_PKEY_free) pkey_free = nullptr;
    decltype(&EVP_MD_CTX_new) ctx_new = nullptr;
    decltype(&EVP_MD_CTX_free) ctx_free = nullptr;
    decltype(&EVP_DigestSignInit) sign_init = nullptr;
    decltype(&EVP_DigestSign) sign = nullptr;
    decltype(&EVP_DigestVerifyInit) verify_init = nullptr;
    decltype(&EVP_DigestVerify) verify = nullptr;
};

Result<const EvpApi*> evp_api() {
    static std::once_flag once;
    static EvpApi api{};
    static std::string problem;
    std::call_once(once, [] {
        // Never unmapped: OpenSSL keeps its provider state in the library until exit.
        static const SharedLibrary lib("libcrypto.so.3", SharedLibrary::Unload::never);
        if (!lib.loaded()) {
            problem = fmt::format(
                "signing and checking shared build-cache entries needs OpenSSL 3's libcrypto.so.3, "
                "which this system lacks ({}): install it (Debian/Ubuntu: `apt-get install libssl3`; "
                "Fedora/RHEL: `dnf install openssl-libs`)",
                lib.error());
            return;
        }
        bool all = true;
        auto load = [&](auto& fn, const char* name) {
            fn = lib.symbol<std::remove_reference_t<decltype(fn)>>(name);
            if (fn == nullptr) all = false;
        };
        load(api.new_private, "EVP_PKEY_new_raw_private_key");
        load(api.new_public, "EVP_PKEY_new_raw_public_key");
        load(api.get_public, "EVP_PKEY_get_raw_public_key");
        load(api.pkey_free, "EVP_PKEY_free");
        load(api.ctx_new, "EVP_MD_CTX_new");
        load(api.ctx_free, "EVP_MD_CTX_free");
        load(api.sign_init, "EVP_DigestSignInit");
        load(api.sign, "EVP_DigestSign");
        load(api.verify_init, "EVP_DigestVerifyInit");
        load(api.verify, "EVP_DigestVerify");
        if (!all) problem = "libcrypto.so.3 lacks OpenSSL 3's EVP_DigestSign/EVP_PKEY_new_raw_* functions";
    });
    if (!problem.empty()) return fail(ErrorCode::io, problem);
    return &api;
}

/// An EVP_PKEY and an EVP_MD_CTX, freed whatever happens.
struct EvpPair {
    explicit EvpPair(const EvpApi* evp) : api(evp) {}
    const EvpApi* api;
    EVP_PKEY* key = nullptr;
    EVP_MD_CTX* ctx = nullptr;
    ~EvpPair() {
        if (ctx != nullptr) api->ctx_free(ctx);
        if (key != nullptr) api->pkey_free(key);
    }
    EvpPair(const EvpPair&) = delete;
    EvpPair& operator=(const EvpPair&) = delete;
};

const unsigned char* bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

PublicKey make_public(std::string name, std::string raw) {
    PublicKey k;
    k.name = std::move(name);
    k.id = sha256_hex(raw).substr(0, 16);
    k.raw = std::move(raw);
    return k;
}

Result<PublicKey> public_of(const EvpApi& api, const std::string& name, const std::string& seed) {
    EvpPair p(&api);
    p.key = api.new_private(EVP_PKEY_ED25519, nullptr, bytes(seed), seed.size());
    if (p.key == nullptr) return fail(ErrorCode::io, "OpenSSL refused an Ed25519 private key");
    std::string raw(k_key_bytes, '\0');
    size_t len = raw.size();
    if (api.get_public(p.key, reinterpret_cast<unsigned char*>(raw.data()), &len) != 1 || len != k_key_bytes)
        return fail(ErrorCode::io, "OpenSSL cannot derive the Ed25519 public key");
    return make_public(name, raw);
}

std::string user_name() {
    if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_name != nullptr) return pw->pw_name;
    return "uid" + std::to_string(::geteuid());
}

/// Why another user could read or replace a private key file or its directory, or "".
std::string private_problem(const fs::path& path, bool dir) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return fmt::format("cannot stat it: {}", std::strerror(errno));
    if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) return "it is " + describe_file_type(st.st_mode);
    if (st.st_uid != ::geteuid()) return fmt::format("it belongs to uid {}, not to us", st.st_uid);
    if ((st.st_mode & 077) != 0)
        return fmt::format("its mode is {:04o}: others could {} it (it must be {})", st.st_mode & 07777,
                           dir ? "replace" : "read", dir ? "0700" : "0600");
    return {};
}

/// A trusted-keys file must be one only we or root could have written.
Status check_trusted_file(const fs::path& file) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) return {};
    if (st.st_uid != ::geteuid() && st.st_uid != 0)
        return fail(ErrorCode::invalid_recipe,
                    fmt::format("refusing the trusted keys in {}: the file belongs to uid {}, who could add a key",
                                file.string(), st.st_uid),
                    "a trusted-keys file must belong to you or root: `chown` it, or set BOOTSTRAP_TRUSTED_KEYS");
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return fail(ErrorCode::invalid_recipe,
                    fmt::format("refusing the trusted keys in {}: its mode {:04o} lets others add a key", file.string(),
                                st.st_mode & 07777),
                    fmt::format("chmod go-w {}", file.string()));
    return {};
}

}  // namespace

std::string base64_encode(std::string_view in) {
    static constexpr char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    for (size_t i = 0; i < in.size(); i += 3) {
        unsigned v = static_cast<unsigned char>(in[i]) << 16;
        if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
        if (i + 2 < in.size()) v |= static_cast<unsigned char>(in[i + 2]);
        out.push_back(k_alphabet[(v >> 18) & 63]);
        out.push_back(k_alphabet[(v >> 12) & 63]);
        out.push_back(i + 1 < in.size() ? k_alphabet[(v >> 6) & 63] : '=');
        out.push_back(i + 2 < in.size() ? k_alphabet[v & 63] : '=');
    }
    return out;
}

Result<std::string> base64_decode(std::string_view in) {
    auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    if (in.size() % 4 != 0) return fail(ErrorCode::invalid_recipe, "not base64 (length is not a multiple of 4)");
    std::string out;
    for (size_t i = 0; i < in.size(); i += 4) {
        int pad = 0;
        unsigned v = 0;
        for (size_t j = 0; j < 4; ++j) {
            char c = in[i + j];
            int d = value(c);
            if (c == '=' && i + 4 == in.size() && j >= 2) {
                ++pad;
                d = 0;
            } else if (d < 0 || pad > 0) {
                return fail(ErrorCode::invalid_recipe, fmt::format("not base64 (character '{}')", c));
            }
            v = (v << 6) | static_cast<unsigned>(d);
        }
        out.push_back(static_cast<char>((v >> 16) & 0xff));
        if (pad < 2) out.push_back(static_cast<char>((v >> 8) & 0xff));
        if (pad < 1) out.push_back(static_cast<char>(v & 0xff));
    }
    return out;
}

std::string PublicKey::line() const { return name + ":" + base64_encode(raw); }

Result<PublicKey> parse_public_key(std::string_view text, std::string_view where) {
    text = trim(text);
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0)
        return fail(ErrorCode::invalid_recipe,
                    fmt::format("{}: '{}' is not a key: write NAME:BASE64, as `bootstrap cache keygen` prints it",
                                where, text));
    auto raw = base64_decode(text.substr(colon + 1));
    if (!raw || raw->size() != k_key_bytes)
        return fail(ErrorCode::invalid_recipe,
                    fmt::format("{}: key '{}' is not a base64 Ed25519 public key ({})", where, text.substr(0, colon),
                                raw ? fmt::format("{} bytes, not 32", raw->size()) : raw.error().message));
    return make_public(std::string(text.substr(0, colon)), *raw);
}

Result<SigningKey> generate_signing_key(std::string name) {
    BS_TRY(const EvpApi* api, evp_api());
    SigningKey key;
    key.seed.resize(k_key_bytes);
    size_t got = 0;
    while (got < k_key_bytes) {
        ssize_t n = ::getrandom(key.seed.data() + got, k_key_bytes - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail(ErrorCode::io, fmt::format("getrandom: {}", std::strerror(errno)));
        got += static_cast<size_t>(n);
    }
    key.name = std::move(name);
    BS_TRY(key.public_key, public_of(*api, key.name, key.seed));
    return key;
}

Result<std::string> sign(const SigningKey& key, std::string_view message) {
    BS_TRY(const EvpApi* api, evp_api());
    EvpPair p(api);
    p.key = api->new_private(EVP_PKEY_ED25519, nullptr, bytes(key.seed), key.seed.size());
    p.ctx = api->ctx_new();
    if (p.key == nullptr || p.ctx == nullptr) return fail(ErrorCode::io, "OpenSSL cannot load the Ed25519 key");
    // Ed25519 hashes the message itself: no digest is named (NULL md).
    std::string sig(k_signature_bytes, '\0');
    size_t len = sig.size();
    if (api->sign_init(p.ctx, nullptr, nullptr, nullptr, p.key) != 1 ||
        api->sign(p.ctx, reinterpret_cast<unsigned char*>(sig.data()), &len, bytes(message), message.size()) != 1 ||
        len != k_signature_bytes)
        return fail(ErrorCode::io, "OpenSSL failed to sign with Ed25519");
    return base64_encode(sig);
}

Result<bool> verify(const PublicKey& key, std::string_view message, std::string_view signature) {
    auto sig = base64_decode(signature);
    if (!sig || sig->size() != k_signature_bytes) return false;
    BS_TRY(const EvpApi* api, evp_api());
    EvpPair p(api);
    p.key = api->new_public(EVP_PKEY_ED25519, nullptr, bytes(key.raw), key.raw.size());
    p.ctx = api->ctx_new();
    if (p.key == nullptr || p.ctx == nullptr) return fail(ErrorCode::io, "OpenSSL cannot load an Ed25519 public key");
    if (api->verify_init(p.ctx, nullptr, nullptr, nullptr, p.key) != 1)
        return fail(ErrorCode::io, "OpenSSL cannot verify Ed25519 signatures");
    return api->verify(p.ctx, bytes(*sig), sig->size(), bytes(message), message.size()) == 1;
}

fs::path key_dir(const fs::path& home) { return home / "keys" / user_name(); }

Result<SigningKey> create_signing_key(const fs::path& home, std::string name) {
    const fs::path dir = key_dir(home);
    const fs::path secret = dir / "ed25519.key";
    std::error_code ec;
    if (fs::exists(secret, ec))
        return fail(ErrorCode::usage, fmt::format("a signing key already exists: {}", secret.string()),
                    "remove it first to make a new one (entries it signed then need the new key trusted)");
    BS_TRY(SigningKey key, generate_signing_key(std::move(name)));
    BS_CHECK(core::create_directories(dir.parent_path()));
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return fail(ErrorCode::io, fmt::format("cannot create {}: {}", dir.string(), std::strerror(errno)));
    if (::chmod(dir.c_str(), 0700) != 0)
        return fail(ErrorCode::io, fmt::format("cannot chmod 0700 {}: {}", dir.string(), std::strerror(errno)));
    if (auto why = private_problem(dir, true); !why.empty())
        return fail(ErrorCode::io, fmt::format("refusing to keep a private key in {}: {}", dir.string(), why));
    BS_CHECK(write_file_atomic(secret, key.name + ":" + base64_encode(key.seed) + "\n", 0600));
    BS_CHECK(write_file_atomic(dir / "ed25519.pub", key.public_key.line() + "\n", 0644));
    return key;
}

Result<std::optional<SigningKey>> load_signing_key(const fs::path& home) {
    const fs::path dir = key_dir(home);
    const fs::path secret = dir / "ed25519.key";
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(secret, ec))) return std::optional<SigningKey>();
    for (const auto& [path, is_dir] : {std::pair{dir, true}, std::pair{secret, false}})
        if (auto why = private_problem(path, is_dir); !why.empty())
            return fail(ErrorCode::io, fmt::format("refusing to use the signing key {}: {}", path.string(), why),
                        fmt::format("chmod {} {} (or make a new key with `bootstrap cache keygen`)",
                                    is_dir ? "700" : "600", path.string()));
    BS_TRY(auto text, read_regular_file(secret, 4096));
    auto line = trim(text);
    auto colon = line.rfind(':');
    auto seed = colon == std::string_view::npos ? Result<std::string>(fail(ErrorCode::io, "no ':'"))
                                                : base64_decode(line.substr(colon + 1));
    if (!seed || seed->size() != k_key_bytes)
        return fail(ErrorCode::io, fmt::format("{} is not a signing key (NAME:BASE64 of 32 bytes)", secret.string()),
                    "make a new one with `bootstrap cache keygen`");
    BS_TRY(const EvpApi* api, evp_api());
    SigningKey key;
    key.name = std::string(line.substr(0, colon));
    key.seed = *seed;
    BS_TRY(key.public_key, public_of(*api, key.name, key.seed));
    return std::optional<SigningKey>(std::move(key));
}

Result<std::vector<PublicKey>> parse_trusted_keys(std::string_view text, const std::string& file) {
    std::vector<PublicKey> keys;
    size_t number = 0;
    for (const auto& raw : split(text, '\n')) {
        ++number;
        std::string_view line = raw;
        if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
        line = trim(line);
        if (line.empty()) continue;
        BS_TRY(auto key, parse_public_key(line, fmt::format("{}:{}", file, number)));
        keys.push_back(std::move(key));
    }
    return keys;
}

Result<TrustedKeys> load_trusted_keys(const fs::path& home, const std::map<std::string, std::string>& env,
                                      const fs::path& system_file) {
    TrustedKeys out;
    auto add = [&](std::vector<PublicKey> keys) {
        for (auto& k : keys) out.by_id.emplace(k.id, std::move(k));
    };
    if (auto it = env.find("BOOTSTRAP_TRUSTED_KEYS"); it != env.end()) {
        std::vector<PublicKey> keys;
        std::string words = it->second;
        for (char& c : words)
            if (c == '\t' || c == '\n') c = ' ';
        for (const auto& word : split(words, ' ')) {
            if (word.empty()) continue;
            BS_TRY(auto key, parse_public_key(word, "BOOTSTRAP_TRUSTED_KEYS"));
            keys.push_back(std::move(key));
        }
        add(std::move(keys));
        out.sources.emplace_back("BOOTSTRAP_TRUSTED_KEYS");
    } else {
        for (const fs::path& file : {home / "trusted-keys", system_file}) {
            std::error_code ec;
            if (!fs::exists(file, ec)) continue;
            BS_CHECK(check_trusted_file(file));
            BS_TRY(auto text, read_regular_file(file, 1 << 20));
            BS_TRY(auto keys, parse_trusted_keys(text, file.string()));
            add(std::move(keys));
            out.sources.push_back(file.string());
        }
    }
    BS_TRY(auto own, load_signing_key(home));
    if (own) {
        out.by_id.emplace(own->public_key.id, own->public_key);
        out.sources.push_back("your own key");
    }
    return out;
}

}  // namespace bootstrap::core
