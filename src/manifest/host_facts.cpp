#include "manifest/host_facts.hpp"

#include <dlfcn.h>
#include <link.h>

#include <gnu/libc-version.h>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/json_fields.hpp"
#include "core/strings.hpp"
#include "exec/process.hpp"
#include "pyenv/installer.hpp"

namespace bootstrap::manifest {

namespace {

// Bump when the cache's content or the way a value is derived changes.
constexpr std::string_view k_cache_scheme = "host-facts-v1";

/// The libstdc++ the dynamic loader gives a program here: the library whose GLIBCXX level an
/// extension built here would require. A bootstrap linked dynamically has it loaded already; a
/// portable one (libstdc++ linked statically) asks the loader for it, as an extension would.
fs::path loaded_libstdcxx() {
    fs::path found;
    ::dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            if (info->dlpi_name && std::strstr(info->dlpi_name, "libstdc++.so")) {
                *static_cast<fs::path*>(data) = info->dlpi_name;
                return 1;
            }
            return 0;
        },
        &found);
    if (!found.empty()) return found;
    if (void* handle = ::dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL)) {
        link_map* map = nullptr;
        if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) found = map->l_name;
        ::dlclose(handle);
    }
    return found;
}

std::vector<long> version_parts(std::string_view v) {
    std::vector<long> parts;
    for (const auto& p : core::split(v, '.'))
        parts.push_back(core::parse_leading_int<long>(p).value_or(0));  // "2.36" or "35-ubuntu"
    return parts;
}

/// The tools behind the cached facts; their identities make the cache's stamp.
struct Tools {
    fs::path gcc;
    fs::path nvcc;
    fs::path libstdcxx;

    std::string stamp() const {
        auto id = [](const char* what, const fs::path& p) {
            return p.empty() ? std::string(what) + " none" : pyenv::file_identity(p);
        };
        return fmt::format("{} | {} | {} | {}", k_cache_scheme, id("gcc", gcc), id("nvcc", nvcc),
                           id("libstdc++", libstdcxx));
    }
};

/// What decides which libstdc++ dlopen() finds: the LD_LIBRARY_PATH this process started with
/// and the loader's cache (/etc/ld.so.cache, rewritten by ldconfig when libraries change).
std::string loader_key() {
    const char* path = std::getenv("LD_LIBRARY_PATH");
    return fmt::format("LD_LIBRARY_PATH={} | {}", path ? path : "", pyenv::file_identity("/etc/ld.so.cache"));
}

/// `known`: where the loader found libstdc++ under the same loader_key() ("" when unknown). Only
/// otherwise is it asked again: a dlopen() of libstdc++ runs its constructors, which cost more
/// than the rest of a snapshot of a small venv.
Tools find_tools(const exec::EnvMap& env, const std::string& known) {
    auto get = [&](const char* name) {
        auto it = env.find(name);
        return it == env.end() ? std::string() : it->second;
    };
    Tools t;
    t.gcc = exec::find_program("gcc", env);
    t.nvcc = exec::find_program("nvcc", env);
    if (t.nvcc.empty() && !get("CUDA_HOME").empty())
        t.nvcc = exec::find_program("nvcc", (fs::path(get("CUDA_HOME")) / "bin").string());
    if (t.nvcc.empty()) t.nvcc = exec::find_program("nvcc", "/usr/local/cuda/bin");
    t.libstdcxx = !known.empty() && fs::is_regular_file(known) ? fs::path(known) : loaded_libstdcxx();
    return t;
}

/// Run `argv` and return its output; "" when it cannot start or fails (the fact is then
/// unknown, which a manifest records as ""). Only an interrupt is an error.
Result<std::string> tool_output(const std::vector<std::string>& argv, const exec::EnvMap& env) {
    exec::ProcessSpec spec;
    spec.argv = argv;
    spec.env = exec::compose_environment(env, {}, {});
    spec.timeout = std::chrono::seconds(30);
    spec.capture = true;
    auto result = exec::run_process(spec);
    if (!result) {
        if (result.error().code == ErrorCode::interrupted) return tl::unexpected(result.error());
        return std::string();
    }
    if (result->interrupted) return fail(ErrorCode::interrupted, fmt::format("interrupted while running {}", argv[0]));
    return result->ok() ? result->output : std::string();
}

struct CachedFacts {
    std::string gcc, nvcc, glibcxx;
};

/// The cache file: the facts under the tools' stamp, and where libstdc++ was found under which
/// loader_key().
struct CacheFile {
    std::string stamp;
    CachedFacts facts;
    std::string loader_key, libstdcxx;
};

Result<CachedFacts> probe_tools(const Tools& t, const exec::EnvMap& env) {
    CachedFacts f;
    if (!t.gcc.empty()) {
        BS_TRY(std::string out, tool_output({t.gcc.string(), "-dumpfullversion"}, env));
        f.gcc = std::string(core::trim(out.substr(0, out.find('\n'))));
    }
    if (!t.nvcc.empty()) {
        BS_TRY(std::string out, tool_output({t.nvcc.string(), "--version"}, env));
        f.nvcc = parse_nvcc_version(out);
    }
    if (!t.libstdcxx.empty())
        if (auto bytes = core::read_file(t.libstdcxx)) f.glibcxx = highest_glibcxx(*bytes);
    return f;
}

// `<venv>/.bootstrap/host.facts`: {"version": 2, "stamp": "<the tools' identities>", "gcc": ...,
// "nvcc": ..., "glibcxx": ..., "loader_key": ..., "libstdcxx": "<path>"}. Another version, or an
// unreadable file (an older bootstrap's "stamp=..." lines), is a miss, and the file is
// rewritten; another stamp keeps only where libstdc++ is (if its loader_key still holds).
constexpr int k_cache_version = 2;

std::string render_cache(const CacheFile& c) {
    nlohmann::json j{{"version", k_cache_version}, {"stamp", c.stamp},           {"gcc", c.facts.gcc},
                     {"nvcc", c.facts.nvcc},       {"glibcxx", c.facts.glibcxx}, {"loader_key", c.loader_key},
                     {"libstdcxx", c.libstdcxx}};
    return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::optional<CacheFile> parse_cache(std::string_view text) {
    auto file = core::read_json(
        text,
        [&](const core::JsonFields& j) -> Result<CacheFile> {
            if (j.integer("version") != k_cache_version) return fail(ErrorCode::not_found, "stale");
            return CacheFile{j.str("stamp"), CachedFacts{j.str("gcc"), j.str("nvcc"), j.str("glibcxx")},
                             j.str("loader_key"), j.str("libstdcxx")};
        },
        [](const std::string& why) -> Result<CacheFile> { return fail(ErrorCode::io, why); });
    if (!file) return std::nullopt;
    return *file;
}

}  // namespace

std::string parse_nvcc_version(std::string_view output) {
    constexpr std::string_view k_release = "release ";
    size_t at = output.find(k_release);
    if (at == std::string_view::npos) return {};
    std::string_view rest = output.substr(at + k_release.size());
    size_t end = 0;
    while (end < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[end])) || rest[end] == '.')) ++end;
    return std::string(rest.substr(0, end));
}

std::string parse_driver_version(std::string_view text) {
    std::string_view line = text.substr(0, text.find('\n'));
    // The first token shaped like "N.N[.N]" after the "Kernel Module" words.
    size_t from = line.find("Kernel Module");
    if (from == std::string_view::npos) from = 0;
    for (const auto& token : core::split(line.substr(from), ' ')) {
        if (token.empty() || !std::isdigit(static_cast<unsigned char>(token[0]))) continue;
        if (token.find('.') != std::string::npos && token.find_first_not_of("0123456789.") == std::string::npos)
            return token;
    }
    return {};
}

std::string highest_glibcxx(std::string_view bytes) {
    constexpr std::string_view k_prefix = "GLIBCXX_";
    std::string best;
    std::vector<long> best_parts;
    for (size_t at = bytes.find(k_prefix); at != std::string_view::npos; at = bytes.find(k_prefix, at + 1)) {
        size_t start = at + k_prefix.size(), end = start;
        while (end < bytes.size() && (std::isdigit(static_cast<unsigned char>(bytes[end])) || bytes[end] == '.')) ++end;
        // A version string is NUL-terminated in .dynstr; "GLIBCXX_TUNABLES" and the like are not
        // versions at all.
        if (end == start || end >= bytes.size() || bytes[end] != '\0') continue;
        std::string_view v = bytes.substr(start, end - start);
        if (v.front() == '.' || v.back() == '.') continue;
        auto parts = version_parts(v);
        if (best.empty() || parts > best_parts) {
            best = std::string(v);
            best_parts = std::move(parts);
        }
    }
    return best;
}

Result<Host> probe_host(const exec::EnvMap& env, const fs::path& cache_file) {
    Host host;
    host.glibc = ::gnu_get_libc_version();
    if (auto text = core::read_file("/proc/driver/nvidia/version")) host.driver = parse_driver_version(*text);

    std::optional<CacheFile> file;
    if (!cache_file.empty())
        if (auto text = core::read_file(cache_file)) file = parse_cache(*text);
    const std::string lib_key = loader_key();
    const Tools tools = find_tools(env, file && file->loader_key == lib_key ? file->libstdcxx : std::string());
    const std::string stamp = tools.stamp();
    std::optional<CachedFacts> cached;
    if (file && file->stamp == stamp) cached = file->facts;
    if (!cached) {
        BS_TRY(cached, probe_tools(tools, env));
    }
    CacheFile now{stamp, *cached, lib_key, tools.libstdcxx.string()};
    // The cache lives in the venv's own state dir; failing to write it only costs speed.
    if (!cache_file.empty() &&
        (!file || file->stamp != now.stamp || file->loader_key != now.loader_key || file->libstdcxx != now.libstdcxx))
        (void)core::write_file_atomic(cache_file, render_cache(now), 0644, core::Durability::unsynced);
    host.gcc = cached->gcc;
    host.nvcc = cached->nvcc;
    host.glibcxx = cached->glibcxx;
    return host;
}

}  // namespace bootstrap::manifest
