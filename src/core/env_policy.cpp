#include "core/env_policy.hpp"

#include <algorithm>

namespace bootstrap::core {

namespace {

constexpr unsigned bits(EnvUse u) { return static_cast<unsigned>(u); }
constexpr unsigned operator|(EnvUse a, EnvUse b) { return bits(a) | bits(b); }
constexpr unsigned operator|(unsigned a, EnvUse b) { return a | bits(b); }

constexpr auto k_pass = EnvUse::pass_through;
constexpr auto k_volatile = EnvUse::volatile_;
constexpr auto k_secret = EnvUse::secret;
constexpr auto k_build = EnvUse::build_input;
constexpr auto k_recorded = EnvUse::build_recorded;
constexpr auto k_jobs = EnvUse::build_parallelism;
constexpr auto k_installer = EnvUse::installer_setting;
constexpr auto k_uv = EnvUse::uv_input;
constexpr auto k_pip = EnvUse::pip_input;
constexpr auto k_exact = EnvMatch::exact;
constexpr auto k_prefix = EnvMatch::prefix;

// clang-format off
constexpr EnvRule k_rules[] = {
    // identity, locale, terminal: a child needs them; they do not change what it builds
    {"PATH", k_exact, k_pass | k_volatile, false, "where programs are found (resolved to absolute paths in keys)"},
    {"HOME", k_exact, k_pass | k_volatile, false, "identity"},
    {"USER", k_exact, k_pass | k_volatile, false, "identity"},
    {"LOGNAME", k_exact, k_pass | k_volatile, false, "identity"},
    {"SHELL", k_exact, k_pass | k_volatile, false, "identity"},
    {"LANG", k_exact, k_pass | k_volatile, false, "locale"},
    {"LANGUAGE", k_exact, k_pass | k_volatile, false, "locale"},
    {"LC_", k_prefix, k_pass | k_volatile, false, "locale"},
    {"TZ", k_exact, k_pass | k_volatile, false, "time zone"},
    {"TMPDIR", k_exact, k_pass | k_volatile, false, "scratch space"},
    {"TERM", k_exact, k_pass | k_volatile, false, "terminal"},
    {"NO_COLOR", k_exact, k_pass | k_volatile, false, "terminal"},
    // network: proxies and CA bundles
    {"http_proxy", k_exact, bits(k_pass), false, "proxy"},
    {"https_proxy", k_exact, bits(k_pass), false, "proxy"},
    {"no_proxy", k_exact, bits(k_pass), false, "proxy"},
    {"all_proxy", k_exact, bits(k_pass), false, "proxy"},
    {"HTTP_PROXY", k_exact, bits(k_pass), false, "proxy"},
    {"HTTPS_PROXY", k_exact, bits(k_pass), false, "proxy"},
    {"NO_PROXY", k_exact, bits(k_pass), false, "proxy"},
    {"ALL_PROXY", k_exact, bits(k_pass), false, "proxy"},
    {"SSL_CERT_FILE", k_exact, bits(k_pass), false, "CA bundle"},
    {"SSL_CERT_DIR", k_exact, bits(k_pass), false, "CA bundle"},
    {"REQUESTS_CA_BUNDLE", k_exact, bits(k_pass), false, "CA bundle"},
    {"CURL_CA_BUNDLE", k_exact, bits(k_pass), false, "CA bundle"},
    // installers: every setting is passed on; those that change what is installed are inputs
    {"PIP_", k_prefix, k_pass | k_installer, false, "pip's settings"},
    {"UV_", k_prefix, k_pass | k_installer, false, "uv's settings"},
    {"UV_INDEX", k_exact, bits(k_uv), false, "uv: extra indexes"},
    {"UV_DEFAULT_INDEX", k_exact, bits(k_uv), false, "uv: the default index"},
    {"UV_INDEX_URL", k_exact, bits(k_uv), false, "uv: the default index"},
    {"UV_EXTRA_INDEX_URL", k_exact, bits(k_uv), false, "uv: extra indexes"},
    {"UV_FIND_LINKS", k_exact, bits(k_uv), false, "uv: find-links"},
    {"UV_NO_INDEX", k_exact, bits(k_uv), false, "uv: no index"},
    {"UV_INDEX_STRATEGY", k_exact, bits(k_uv), false, "uv: how indexes are combined"},
    {"UV_CONSTRAINT", k_exact, bits(k_uv), false, "uv: constraint files"},
    {"UV_OVERRIDE", k_exact, bits(k_uv), false, "uv: override files"},
    {"UV_BUILD_CONSTRAINT", k_exact, bits(k_uv), false, "uv: build constraint files"},
    {"UV_EXCLUDE_NEWER", k_exact, bits(k_uv), false, "uv: no release newer than a date"},
    {"UV_PRERELEASE", k_exact, bits(k_uv), false, "uv: pre-release strategy"},
    {"UV_RESOLUTION", k_exact, bits(k_uv), false, "uv: highest or lowest versions"},
    {"UV_NO_BINARY", k_exact, bits(k_uv), false, "uv: build from source"},
    {"UV_NO_BINARY_PACKAGE", k_exact, bits(k_uv), false, "uv: build from source"},
    {"UV_NO_BUILD", k_exact, bits(k_uv), false, "uv: wheels only"},
    {"UV_NO_BUILD_PACKAGE", k_exact, bits(k_uv), false, "uv: wheels only"},
    {"UV_NO_BUILD_ISOLATION", k_exact, bits(k_uv), false, "uv: build isolation"},
    {"UV_NO_BUILD_ISOLATION_PACKAGE", k_exact, bits(k_uv), false, "uv: build isolation"},
    {"UV_TORCH_BACKEND", k_exact, bits(k_uv), false, "uv: which torch index"},
    {"UV_CONFIG_FILE", k_exact, bits(k_uv), false, "uv: its configuration file"},
    {"UV_NO_CONFIG", k_exact, bits(k_uv), false, "uv: no configuration file"},
    {"UV_NO_SOURCES", k_exact, bits(k_uv), false, "uv sync: ignore tool.uv.sources"},
    {"UV_FROZEN", k_exact, bits(k_uv), false, "uv sync: the lock as it is"},
    {"UV_LOCKED", k_exact, bits(k_uv), false, "uv sync: the lock must be current"},
    {"UV_PYTHON", k_exact, bits(k_uv), false, "uv: the Python a venv gets"},
    {"UV_PYTHON_PREFERENCE", k_exact, bits(k_uv), false, "uv: managed or system Python"},
    {"PIP_INDEX_URL", k_exact, bits(k_pip), false, "pip: the index"},
    {"PIP_EXTRA_INDEX_URL", k_exact, bits(k_pip), false, "pip: extra indexes"},
    {"PIP_FIND_LINKS", k_exact, bits(k_pip), false, "pip: find-links"},
    {"PIP_NO_INDEX", k_exact, bits(k_pip), false, "pip: no index"},
    {"PIP_CONSTRAINT", k_exact, bits(k_pip), false, "pip: constraint files"},
    {"PIP_PRE", k_exact, bits(k_pip), false, "pip: pre-releases"},
    {"PIP_NO_BINARY", k_exact, bits(k_pip), false, "pip: build from source"},
    {"PIP_ONLY_BINARY", k_exact, bits(k_pip), false, "pip: wheels only"},
    {"PIP_PREFER_BINARY", k_exact, bits(k_pip), false, "pip: older wheels over newer sources"},
    {"PIP_NO_BUILD_ISOLATION", k_exact, bits(k_pip), false, "pip: build isolation"},
    {"PIP_USE_PEP517", k_exact, bits(k_pip), false, "pip: how it builds"},
    {"PIP_UPGRADE_STRATEGY", k_exact, bits(k_pip), false, "pip: what --upgrade upgrades"},
    {"PIP_CONFIG_FILE", k_exact, bits(k_pip), false, "pip: its configuration file"},
    // GPU
    {"CUDA_", k_prefix, bits(k_pass), false, "CUDA toolkit and runtime"},
    {"NVIDIA_", k_prefix, bits(k_pass), false, "NVIDIA container runtime"},
    {"NCCL_", k_prefix, bits(k_pass), false, "NCCL"},
    {"LD_LIBRARY_PATH", k_exact, bits(k_pass), false, "where CUDA libraries are found"},
    // native builds
    {"CC", k_exact, k_pass | k_build | k_recorded, false, "C compiler"},
    {"CXX", k_exact, k_pass | k_build | k_recorded, false, "C++ compiler"},
    {"CFLAGS", k_exact, k_pass | k_build | k_recorded, false, "compiler flags"},
    {"CXXFLAGS", k_exact, k_pass | k_build | k_recorded, false, "compiler flags"},
    {"LDFLAGS", k_exact, k_pass | k_build | k_recorded, false, "linker flags"},
    {"CPPFLAGS", k_exact, bits(k_build), false, "preprocessor flags"},
    {"LDSHARED", k_exact, bits(k_build), false, "the linker setuptools uses"},
    {"CPATH", k_exact, bits(k_pass), false, "header search path"},
    {"LIBRARY_PATH", k_exact, bits(k_pass), false, "link search path"},
    {"PKG_CONFIG_PATH", k_exact, bits(k_pass), false, "pkg-config search path"},
    {"CUDA_HOME", k_exact, k_build | k_recorded, false, "the CUDA toolkit a build uses"},
    {"CUDA_PATH", k_exact, k_build | k_recorded, false, "the CUDA toolkit a build uses"},
    {"CUDACXX", k_exact, bits(k_build), false, "the CUDA compiler CMake uses"},
    {"NVCC_", k_prefix, bits(k_build), false, "nvcc's settings"},
    {"TORCH_", k_prefix, bits(k_build), false, "torch extension builds (TORCH_CUDA_ARCH_LIST)"},
    {"APEX_", k_prefix, bits(k_build), false, "apex's build switches"},
    {"NVTE_", k_prefix, bits(k_build), false, "Transformer Engine's build switches"},
    {"CMAKE_", k_prefix, bits(k_build), false, "CMake-driven builds"},
    {"SETUPTOOLS_", k_prefix, bits(k_build), false, "setuptools' switches"},
    {"APEX_CPP_EXT", k_exact, bits(k_recorded), false, "apex's C++ extension switch"},
    {"APEX_CUDA_EXT", k_exact, bits(k_recorded), false, "apex's CUDA extension switch"},
    {"CMAKE_CUDA_ARCHITECTURES", k_exact, bits(k_recorded), false, "arches of CMake builds"},
    {"NVTE_CUDA_ARCHS", k_exact, bits(k_recorded), false, "arches of Transformer Engine"},
    {"NVTE_FRAMEWORK", k_exact, bits(k_recorded), false, "Transformer Engine's framework"},
    {"TORCH_CUDA_ARCH_LIST", k_exact, bits(k_recorded), false, "arches of torch extensions"},
    {"MAX_JOBS", k_exact, k_recorded | k_jobs, false, "parallel compile jobs"},
    {"NVCC_THREADS", k_exact, k_recorded | k_jobs, false, "nvcc's threads"},
    {"APEX_PARALLEL_BUILD", k_exact, k_recorded | k_jobs, false, "apex's parallel jobs"},
    {"CMAKE_BUILD_PARALLEL_LEVEL", k_exact, bits(k_jobs), false, "CMake's parallel jobs"},
    // caches, reproducibility, ourselves
    {"XDG_CACHE_HOME", k_exact, bits(k_pass), false, "caches"},
    {"XDG_CONFIG_HOME", k_exact, bits(k_pass), false, "configuration"},
    {"XDG_DATA_HOME", k_exact, bits(k_pass), false, "data"},
    {"SOURCE_DATE_EPOCH", k_exact, bits(k_pass), false, "reproducible builds"},
    {"BOOTSTRAP_", k_prefix, k_pass | k_volatile, false, "bootstrap's own settings"},
    // secrets: by what the name says, in any case
    {"TOKEN", EnvMatch::contains, bits(k_secret), true, "a credential"},
    {"SECRET", EnvMatch::contains, bits(k_secret), true, "a credential"},
    {"PASSWORD", EnvMatch::contains, bits(k_secret), true, "a credential"},
    {"PASSWD", EnvMatch::contains, bits(k_secret), true, "a credential"},
    {"CREDENTIAL", EnvMatch::contains, bits(k_secret), true, "a credential"},
    {"AUTH", EnvMatch::contains, bits(k_secret), true, "a credential"},
    {"_KEY", EnvMatch::suffix, bits(k_secret), true, "an API key"},
    {"KEY", k_exact, bits(k_secret), true, "an API key"},
};
// clang-format on

bool matches(const EnvRule& rule, std::string_view name) {
    std::string upper;
    if (rule.any_case) {
        upper.assign(name);
        for (auto& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
        name = upper;
    }
    switch (rule.match) {
        case EnvMatch::exact: return name == rule.pattern;
        case EnvMatch::prefix: return name.size() > rule.pattern.size() && name.starts_with(rule.pattern);
        case EnvMatch::contains: return name.find(rule.pattern) != std::string_view::npos;
        case EnvMatch::suffix: return name.ends_with(rule.pattern);
    }
    return false;
}

bool names_a_port(std::string_view name) {
    if (name.size() < 4) return false;
    std::string tail(name.substr(name.size() - 4));
    for (auto& c : tail) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    return tail == "PORT" && (name.size() == 4 || name[name.size() - 5] == '_');
}

}  // namespace

std::span<const EnvRule> env_policy() { return k_rules; }

bool env_has_use(std::string_view name, EnvUse use) {
    if (use == EnvUse::secret && names_a_port(name)) return false;
    for (const auto& rule : k_rules)
        if ((rule.uses & bits(use)) != 0 && matches(rule, name)) return true;
    return false;
}

std::vector<std::string> env_exact_names(EnvUse use) {
    std::vector<std::string> out;
    for (const auto& rule : k_rules)
        if ((rule.uses & bits(use)) != 0 && rule.match == EnvMatch::exact) out.emplace_back(rule.pattern);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace bootstrap::core
