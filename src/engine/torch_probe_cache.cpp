#include "engine/torch_probe_cache.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/json_fields.hpp"
#include "core/log.hpp"
#include "core/strings.hpp"
#include "pyenv/name.hpp"
#include "state/layout.hpp"

namespace bootstrap::engine {

namespace {

// The file's layout; bump it (and the key's scheme) when the probe script or the answer changes.
// {"version": 1, "key": "<torch_probe_key>", "answer": {"torch_version": ..., "cuda_version":
// ..., "arch_flags": [...], "gpus": ["index|major|minor|name", ...], "notes": [...],
// "warnings": [...]}}
constexpr int k_cache_version = 1;
constexpr std::string_view k_key_scheme = "bootstrap-torch-probe-v1";

std::string stamp_of(const fs::path& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return "missing";
    return fmt::format("{} {} {}", st.st_size, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, st.st_ino);
}

/// "torch-2.11.0.dist-info/RECORD 1234 1700000000000000000 42" for torch and each nvidia-*
/// distribution in `site`, sorted; `found_torch` is set when torch's was among them.
std::vector<std::string> record_lines(const fs::path& site, bool& found_torch) {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(site, ec), end; !ec && it != end; it.increment(ec)) {
        std::string dir = it->path().filename().string();
        if (!dir.ends_with(".dist-info")) continue;
        std::string name = pyenv::normalize_name(dir.substr(0, dir.find('-')));
        bool torch = name == "torch";
        if (!torch && !name.starts_with("nvidia-")) continue;
        fs::path record = it->path() / "RECORD";
        std::string stamp = stamp_of(record);
        if (stamp == "missing") continue;
        found_torch = found_torch || torch;
        out.push_back(fmt::format("record {}/RECORD {}", dir, stamp));
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string gpu_text(const device::GpuInfo& g) { return fmt::format("{}|{}|{}|{}", g.index, g.major, g.minor, g.name); }

std::optional<device::GpuInfo> parse_gpu(const std::string& text) {
    auto fields = core::split(text, '|');
    if (fields.size() < 4) return std::nullopt;
    auto index = core::parse_int<int>(fields[0]);
    auto major = core::parse_int<int>(fields[1]);
    auto minor = core::parse_int<int>(fields[2]);
    if (!index || !major || !minor) return std::nullopt;
    return device::GpuInfo{*index, text.substr(fields[0].size() + fields[1].size() + fields[2].size() + 3), *major,
                           *minor};
}

std::string cache_json(const std::string& key, const device::ProbeAnswer& a) {
    std::vector<std::string> gpus;
    for (const auto& g : a.gpus) gpus.push_back(gpu_text(g));
    nlohmann::json answer{{"torch_version", a.torch_version},
                          {"cuda_version", a.cuda_version},
                          {"arch_flags", a.torch_arch_flags},
                          {"gpus", gpus},
                          {"notes", a.notes},
                          {"warnings", a.warnings}};
    nlohmann::json j{{"version", k_cache_version}, {"key", key}, {"answer", answer}};
    return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

/// The cached answer when the file is this version's and its key is `key`; else nullopt
/// (missing, stale or unreadable: the probe runs and the file is rewritten).
std::optional<device::ProbeAnswer> read_cache(const fs::path& cache, const std::string& key,
                                              const fs::path& interpreter) {
    auto text = core::read_file(cache);
    if (!text) return std::nullopt;
    auto answer = core::read_json(
        *text,
        [&](const core::JsonFields& j) -> Result<device::ProbeAnswer> {
            if (j.integer("version") != k_cache_version || j.str("key") != key)
                return fail(ErrorCode::not_found, "stale");
            auto body = j.object("answer");
            if (!body) return fail(ErrorCode::not_found, "no answer");
            device::ProbeAnswer a;
            a.probe = "torch";
            a.available = true;
            a.library = interpreter.string();
            a.torch_version = body->str("torch_version");
            a.cuda_version = body->str("cuda_version");
            a.torch_arch_flags = body->strings("arch_flags");
            for (const auto& g : body->strings("gpus")) {
                auto gpu = parse_gpu(g);
                if (!gpu) body->invalid("gpus", "expected 'index|major|minor|name' items");
                a.gpus.push_back(*gpu);
            }
            a.notes = body->strings("notes");
            a.warnings = body->strings("warnings");
            if (a.torch_version.empty()) return fail(ErrorCode::not_found, "no torch version");
            return a;
        },
        [](const std::string& why) -> Result<device::ProbeAnswer> { return fail(ErrorCode::io, why); });
    if (!answer) {
        core::log::debug("torch probe cache {}: not used ({})", cache.string(), answer.error().message);
        return std::nullopt;
    }
    return std::move(*answer);
}

}  // namespace

fs::path torch_probe_cache_path(const fs::path& venv) { return state::Layout(venv).torch_probe(); }

std::optional<std::string> torch_probe_key(const fs::path& venv, const pyenv::InterpreterFacts& python,
                                           const std::string& view) {
    bool found_torch = false;
    std::vector<std::string> records;
    if (!python.purelib.empty()) records = record_lines(python.purelib, found_torch);
    std::error_code ec;
    if (!python.platlib.empty() && python.platlib != python.purelib && fs::exists(python.platlib, ec)) {
        auto more = record_lines(python.platlib, found_torch);
        records.insert(records.end(), more.begin(), more.end());
    }
    if (!found_torch) return std::nullopt;
    fs::path interpreter = fs::canonical(pyenv::venv_python(venv), ec);
    std::string key = fmt::format("{}\ninterpreter {} {}\npyvenv.cfg {}\n", k_key_scheme, interpreter.string(),
                                  stamp_of(interpreter), stamp_of(venv / "pyvenv.cfg"));
    for (const auto& line : records) key += line + "\n";
    return key + view;
}

device::ProbeAnswer cached_probe_torch(const fs::path& venv, const pyenv::InterpreterFacts* python,
                                       const fs::path& interpreter, const exec::EnvMap& env, const std::string& view,
                                       bool write) {
    std::optional<std::string> key;
    if (python) key = torch_probe_key(venv, *python, view);
    const fs::path cache = torch_probe_cache_path(venv);
    if (key) {
        if (auto cached = read_cache(cache, *key, interpreter)) {
            core::log::debug("torch probe: the answer cached in {} (torch {})", cache.string(), cached->torch_version);
            return std::move(*cached);
        }
    } else {
        core::log::debug("torch probe: no torch RECORD in {}'s site-packages, not cached", venv.string());
    }
    auto answer = device::probe_torch(interpreter, env);
    // A speed-up only: a venv we cannot write to still gets the right answer.
    if (key && write && answer.available)
        (void)core::write_file_atomic(cache, cache_json(*key, answer), 0644, core::Durability::unsynced);
    return answer;
}

}  // namespace bootstrap::engine
