#include "pyenv/interpreter.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/json_fields.hpp"
#include "core/strings.hpp"
#include "exec/process.hpp"
#include "pyenv/specifier.hpp"
#include "state/layout.hpp"

namespace bootstrap::pyenv {

namespace {

// One query, printing `key=value` lines (no JSON library needed on either side).
constexpr const char* k_query = R"PY(
import os, platform, sys, sysconfig
v = sys.version_info
impl = sys.implementation
iv = impl.version
iver = "%d.%d.%d" % (iv.major, iv.minor, iv.micro)
if iv.releaselevel != "final":
    iver += iv.releaselevel[0] + str(iv.serial)
paths = sysconfig.get_paths()
facts = {
    "executable": sys.executable,
    "version": "%d.%d.%d" % (v.major, v.minor, v.micro),
    "version_short": "%d.%d" % (v.major, v.minor),
    "implementation": impl.name,
    "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX") or "",
    "soabi": sysconfig.get_config_var("SOABI") or "",
    "include_dir": paths.get("include", ""),
    "purelib": paths.get("purelib", ""),
    "platlib": paths.get("platlib", ""),
    "platform": sysconfig.get_platform(),
    "marker.os_name": os.name,
    "marker.sys_platform": sys.platform,
    "marker.platform_machine": platform.machine(),
    "marker.platform_python_implementation": platform.python_implementation(),
    "marker.platform_release": platform.release(),
    "marker.platform_system": platform.system(),
    "marker.platform_version": platform.version(),
    "marker.python_version": "%d.%d" % (v.major, v.minor),
    "marker.python_full_version": platform.python_version(),
    "marker.implementation_name": impl.name,
    "marker.implementation_version": iver,
}
for k, val in facts.items():
    print("%s=%s" % (k, str(val).replace("\n", " ")))
)PY";

std::string stamp_of(const fs::path& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return "missing";
    return fmt::format("{}:{}:{}", st.st_size, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, st.st_ino);
}

std::map<std::string, std::string> parse_lines(std::string_view text) {
    std::map<std::string, std::string> out;
    for (const auto& line : core::split(text, '\n')) {
        auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        out[std::string(core::trim(line.substr(0, eq)))] = std::string(core::trim(line.substr(eq + 1)));
    }
    return out;
}

InterpreterFacts facts_from(const std::map<std::string, std::string>& kv) {
    auto get = [&](const char* k) {
        auto it = kv.find(k);
        return it == kv.end() ? std::string() : it->second;
    };
    InterpreterFacts f;
    f.executable = get("executable");
    f.version = get("version");
    f.version_short = get("version_short");
    f.implementation = get("implementation");
    f.ext_suffix = get("ext_suffix");
    f.soabi = get("soabi");
    f.include_dir = get("include_dir");
    f.purelib = get("purelib");
    f.platlib = get("platlib");
    f.platform = get("platform");
    for (const auto& [k, v] : kv)
        if (auto marker = core::after_prefix(k, "marker.")) f.markers[std::string(*marker)] = v;
    return f;
}

// `<venv>/.bootstrap/python.facts`: {"version": 1, "stamp": "<pyvenv.cfg>/<python>", "facts":
// {"version": "3.11.2", ...}}. Another version, another stamp or anything unreadable (a file of
// an older bootstrap) is a miss, and the file is rewritten.
constexpr int k_facts_cache_version = 1;

std::optional<std::map<std::string, std::string>> read_facts_cache(const fs::path& cache, const std::string& stamp) {
    auto text = core::read_file(cache);
    if (!text) return std::nullopt;
    using Facts = std::map<std::string, std::string>;
    auto facts = core::read_json(
        *text,
        [&](const core::JsonFields& j) -> Result<Facts> {
            if (j.integer("version") != k_facts_cache_version || j.str("stamp") != stamp)
                return fail(ErrorCode::not_found, "stale");
            return j.string_map("facts");
        },
        [](const std::string& why) -> Result<Facts> { return fail(ErrorCode::io, why); });
    if (!facts) return std::nullopt;
    return std::move(*facts);
}

std::string facts_cache_json(const std::string& stamp, const std::map<std::string, std::string>& kv) {
    nlohmann::json j{{"version", k_facts_cache_version}, {"stamp", stamp}, {"facts", kv}};
    return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

fs::path venv_python(const fs::path& venv) { return venv / "bin" / "python"; }

Result<std::map<std::string, std::string>> read_pyvenv_cfg(const fs::path& venv) {
    auto text = core::read_file(venv / "pyvenv.cfg");
    if (!text) {
        if (text.error().code == ErrorCode::not_found)
            return fail(ErrorCode::not_found,
                        fmt::format("{} is not a virtual environment (no pyvenv.cfg)", venv.string()));
        return tl::unexpected(text.error());
    }
    return parse_lines(*text);
}

std::string venv_python_version(const std::map<std::string, std::string>& cfg) {
    for (const char* k : {"version_info", "version"}) {
        auto it = cfg.find(k);
        if (it != cfg.end() && !it->second.empty()) return it->second;
    }
    return {};
}

bool python_version_matches(const std::string& actual, const std::string& wanted) {
    if (wanted.empty()) return true;
    auto actual_v = Version::parse(actual);
    if (!actual_v) return false;
    // A bare version ("3.12", "3.12.1") is a prefix match; anything else is a specifier.
    if (std::isdigit(static_cast<unsigned char>(wanted.front()))) {
        auto spec = SpecifierSet::parse("==" + wanted + (wanted.find('.') == wanted.rfind('.') ? ".*" : ""));
        if (!spec) return false;
        return spec->contains(actual_v->base_version(), true);
    }
    auto spec = SpecifierSet::parse(wanted);
    return spec && spec->contains(actual_v->base_version(), true);
}

Result<InterpreterFacts> venv_facts(const fs::path& venv, const exec::EnvMap& env, bool update_cache) {
    const fs::path python = venv_python(venv);
    std::error_code ec;
    const std::string stamp = stamp_of(venv / "pyvenv.cfg") + "/" + stamp_of(fs::canonical(python, ec));
    const fs::path cache = state::Layout(venv).python_facts();
    if (auto cached = read_facts_cache(cache, stamp)) return facts_from(*cached);

    exec::ProcessSpec spec;
    spec.argv = {python.string(), "-I", "-c", k_query};
    spec.env = env;
    spec.cwd = "/";
    spec.capture = true;
    spec.timeout = std::chrono::seconds(60);
    BS_TRY(auto result, exec::run_process(spec));
    if (!result.ok())
        return fail(ErrorCode::process,
                    fmt::format("cannot query the interpreter {}: {}", python.string(), result.describe()),
                    core::last_lines(result.output, 20));
    auto kv = parse_lines(result.output);
    InterpreterFacts facts = facts_from(kv);
    if (facts.version.empty() || facts.purelib.empty())
        return fail(ErrorCode::process,
                    fmt::format("unexpected answer from {} when asking for its facts", python.string()), result.output);
    // The cache lives inside the venv's own state dir; failing to write it only costs speed.
    if (update_cache)
        (void)core::write_file_atomic(cache, facts_cache_json(stamp, kv), 0644, core::Durability::unsynced);
    return facts;
}

Result<std::map<std::string, Distribution>> scan_venv_packages(const InterpreterFacts& facts,
                                                               const std::vector<std::string>& only,
                                                               bool include_broken, const ScanMemo* memo) {
    BS_TRY(auto dists, scan_site_packages(facts.purelib, only, include_broken, memo));
    if (!facts.platlib.empty() && facts.platlib != facts.purelib && fs::exists(facts.platlib)) {
        BS_TRY(auto more, scan_site_packages(facts.platlib, only, include_broken, memo));
        dists.merge(more);               // keeps purelib's entry for a name in both...
        for (auto& [name, dist] : more)  // ...unless platlib's is broken and purelib's is not
            if (!dist.broken.empty() && dists.at(name).broken.empty()) dists.at(name) = std::move(dist);
    }
    return dists;
}

}  // namespace bootstrap::pyenv
