#include "exec/environment.hpp"

#include <string_view>

#include <unistd.h>

#include "core/strings.hpp"

extern char** environ;

namespace bootstrap::exec {

namespace {

// Keep in sync with the list in environment.hpp.
// clang-format off
constexpr std::string_view k_exact_names[] = {
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
    "NO_COLOR",
    "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "LD_LIBRARY_PATH",
    "CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "CPATH", "LIBRARY_PATH", "PKG_CONFIG_PATH",
    "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
    "SOURCE_DATE_EPOCH",
};
// clang-format on

constexpr std::string_view k_prefixes[] = {
    "LC_", "PIP_", "UV_", "CUDA_", "NVIDIA_", "NCCL_", "BOOTSTRAP_",
};

}  // namespace

EnvMap current_environment() {
    EnvMap env;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
        std::string_view text(*entry);
        auto eq = text.find('=');
        if (eq == std::string_view::npos) continue;
        // First occurrence wins, as getenv() does when a name appears twice.
        env.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
    }
    return env;
}

bool is_pass_through(const std::string& name) {
    for (auto exact : k_exact_names)
        if (name == exact) return true;
    for (auto prefix : k_prefixes)
        if (name.size() > prefix.size() && core::starts_with(name, prefix)) return true;
    return false;
}

EnvMap compose_environment(const EnvMap& base, const EnvMap& set,
                           const std::vector<std::string>& unset) {
    EnvMap env;
    for (const auto& [name, value] : base)
        if (is_pass_through(name)) env.emplace(name, value);
    for (const auto& name : unset) env.erase(name);
    for (const auto& [name, value] : set) env.insert_or_assign(name, value);
    return env;
}

}  // namespace bootstrap::exec
