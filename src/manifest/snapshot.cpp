#include "manifest/snapshot.hpp"

#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/env_policy.hpp"
#include "core/fs.hpp"
#include "core/redact.hpp"
#include "core/strings.hpp"
#include "manifest/host_facts.hpp"
#include "manifest/package_cache.hpp"
#include "pyenv/dist_info.hpp"
#include "state/layout.hpp"

namespace bootstrap::manifest {

namespace {

/// A dist-info file that may legitimately be absent: "" then; other read errors (a FIFO, a
/// device, a file over the size cap) propagate.
Result<std::string> read_optional(const fs::path& file) {
    auto text = core::read_regular_file(file, pyenv::k_max_dist_info_file);
    if (!text && text.error().code == ErrorCode::not_found) return std::string();
    return text;
}

/// WHEEL's "Tag:" lines, in file order, joined with ",".
std::string wheel_tags(std::string_view wheel) {
    std::vector<std::string> tags;
    for (const auto& line : core::split(wheel, '\n')) {
        std::string_view l = core::trim(line);
        if (auto tag = core::after_prefix(l, "Tag:")) tags.emplace_back(core::trim(*tag));
    }
    return core::join(tags, ",");
}

/// The facts of one dist-info beyond the scan. A broken dist-info gives what it can: what
/// cannot be read stays empty.
Result<CachedPackageFacts> read_facts(const pyenv::Distribution& dist) {
    const bool broken = !dist.broken.empty();
    // Whole: a read error is an error. Broken: it is already the finding.
    auto tolerate = [&](Result<std::string> text) -> Result<std::string> {
        if (!text && broken) return std::string();
        return text;
    };
    CachedPackageFacts f;
    BS_TRY(std::string wheel, tolerate(read_optional(dist.dist_info() / "WHEEL")));
    f.wheel_tag = wheel_tags(wheel);
    // A RECORD-less install (old distutils) has no digest (scan_site_packages could not stat
    // it: the stamp is all zero); an unreadable one is an error.
    if (dist.record_stamp != core::FileStamp{}) {
        auto digests = pyenv::record_digests(dist);
        if (digests) {
            f.record_sha256 = std::move(digests->exact);
            f.record_sha256_portable = std::move(digests->portable);
        } else if (!broken) {
            return tl::unexpected(digests.error());
        }
    }
    BS_TRY(std::string direct_url, tolerate(read_optional(dist.dist_info() / "direct_url.json")));
    f.origin = parse_origin(direct_url, dist.installer);
    return f;
}

/// read_facts, from the cache while its RECORD is unchanged. Broken dist-infos are not cached:
/// a repaired one is read afresh.
Result<CachedPackageFacts> read_package_facts(const pyenv::Distribution& dist, PackageCache& cache) {
    if (!dist.broken.empty()) return read_facts(dist);
    if (auto cached = cache.find(dist)) return std::move(*cached);
    BS_TRY(auto f, read_facts(dist));
    cache.put(dist, f);
    return f;
}

Package to_package(pyenv::Distribution&& dist, CachedPackageFacts facts) {
    Package p;
    p.name = std::move(dist.normalized_name);
    p.display_name = std::move(dist.name);
    p.version = std::move(dist.version);
    p.installer = std::move(dist.installer);
    p.requested = dist.requested;
    p.wheel_tag = std::move(facts.wheel_tag);
    p.record_sha256 = std::move(facts.record_sha256);
    p.record_sha256_portable = std::move(facts.record_sha256_portable);
    p.origin = std::move(facts.origin);
    p.broken = std::move(dist.broken);
    return p;
}

/// `name: Optional[str] = '12.4'` or `__version__ = '2.5.1'` → the quoted value; "" for None.
std::string python_assignment(std::string_view text, std::string_view name) {
    for (const auto& raw : core::split(text, '\n')) {
        std::string_view line = core::trim(raw);
        if (!core::starts_with(line, name)) continue;
        std::string_view rest = core::trim(line.substr(name.size()));
        if (rest.empty() || (rest.front() != '=' && rest.front() != ':')) continue;
        size_t eq = rest.find('=');
        if (eq == std::string_view::npos) continue;
        std::string_view value = core::trim(rest.substr(eq + 1));
        if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') && value.back() == value.front())
            return std::string(value.substr(1, value.size() - 2));
        return {};  // None, or an expression we do not evaluate
    }
    return {};
}

std::string path_without_trailing_slash(const fs::path& p) {
    std::string s = fs::absolute(p).lexically_normal().string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
}

}  // namespace

const std::vector<std::string>& build_env_names() {
    static const std::vector<std::string> names = core::env_exact_names(core::EnvUse::build_recorded);
    return names;
}

Result<Package> read_package(const pyenv::Distribution& dist) {
    BS_TRY(auto facts, read_facts(dist));
    return to_package(pyenv::Distribution(dist), std::move(facts));
}

Origin parse_origin(std::string_view direct_url_json, std::string_view installer) {
    Origin o;
    if (core::trim(direct_url_json).empty()) {
        o.kind = installer == "uv" || installer == "pip" ? OriginKind::index : OriginKind::unknown;
        return o;
    }
    // PEP 610: exactly one of dir_info, archive_info, vcs_info next to "url".
    auto j = nlohmann::json::parse(direct_url_json, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("url") || !j["url"].is_string()) return o;  // unknown
    // PEP 610 asks installers to leave credentials out; what one left in is never recorded.
    o.url = core::redact_url(j["url"].get<std::string>());
    const bool file_url = core::starts_with(o.url, "file:");
    auto object = [&](const char* key) -> const nlohmann::json* {
        auto it = j.find(key);
        return it != j.end() && it->is_object() ? &*it : nullptr;
    };
    auto string_at = [](const nlohmann::json& obj, const char* key) {
        auto it = obj.find(key);
        return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (const auto* vcs = object("vcs_info")) {
        o.kind = OriginKind::vcs;
        o.vcs = string_at(*vcs, "vcs");
        o.commit = string_at(*vcs, "commit_id");
    } else if (const auto* dir = object("dir_info")) {
        auto editable = dir->find("editable");
        o.kind = editable != dir->end() && editable->is_boolean() && editable->get<bool>() ? OriginKind::editable
                                                                                           : OriginKind::local;
    } else if (const auto* archive = object("archive_info")) {
        o.kind = file_url ? OriginKind::local : OriginKind::url;
        // `hashes` (a dict) supersedes the deprecated single `hash` ("sha256=<hex>").
        auto hashes = archive->find("hashes");
        if (hashes != archive->end() && hashes->is_object() && hashes->contains("sha256") &&
            (*hashes)["sha256"].is_string())
            o.archive_hash = "sha256=" + (*hashes)["sha256"].get<std::string>();
        else o.archive_hash = string_at(*archive, "hash");
    } else {
        o.kind = file_url ? OriginKind::local : OriginKind::url;
    }
    return o;
}

Torch read_torch(const fs::path& site_packages) {
    Torch t;
    const fs::path dir = site_packages / "torch";
    if (auto text = core::read_file(dir / "version.py")) {
        t.version = python_assignment(*text, "__version__");
        t.cuda = python_assignment(*text, "cuda");
    }
    // The ABI flag lives in compiled code (torch._C._GLIBCXX_USE_CXX11_ABI), which cannot be
    // read without importing torch; the CMake config shipped in the wheel states the same flag
    // for extensions ("-D_GLIBCXX_USE_CXX11_ABI=1"). Without that file the flag stays "".
    if (auto cmake = core::read_file(dir / "share/cmake/Torch/TorchConfig.cmake")) {
        constexpr std::string_view k_flag = "_GLIBCXX_USE_CXX11_ABI=";
        size_t at = cmake->find(k_flag);
        if (at != std::string::npos && at + k_flag.size() < cmake->size()) {
            char c = (*cmake)[at + k_flag.size()];
            if (c == '0' || c == '1') t.cxx11_abi = std::string(1, c);
        }
    }
    return t;
}

Result<Manifest> take_snapshot(const SnapshotRequest& request) {
    Manifest m;
    m.label = request.label;
    m.venv = path_without_trailing_slash(request.venv);
    const auto& py = request.python;
    m.python = {py.version, py.implementation, py.ext_suffix, py.soabi, py.platform};

    std::vector<fs::path> sites;
    if (!py.purelib.empty()) sites.push_back(py.purelib);
    if (!py.platlib.empty() && py.platlib != py.purelib) sites.push_back(py.platlib);
    if (sites.empty())
        return fail(ErrorCode::internal, fmt::format("no site-packages known for {}", request.venv.string()));
    PackageCache cache = PackageCache::of_venv(request.venv);
    auto scan = [&]() -> Status {
        m.packages.clear();
        for (const auto& site : sites) {
            // platlib may not exist when it differs from purelib (lib64 layouts).
            if (site != sites.front() && !fs::exists(site)) continue;
            // Broken dist-infos too: a snapshot must show them (doctor and rollback act on them).
            BS_TRY(auto dists, pyenv::scan_site_packages(site, {}, /*include_broken=*/true, &cache));
            for (auto& [name, dist] : dists) {
                if (m.packages.count(name)) continue;  // purelib first, as sys.path has it
                BS_TRY(auto facts, read_package_facts(dist, cache));
                if (name == "torch") m.torch = read_torch(site);
                m.packages.emplace_hint(m.packages.end(), name, to_package(std::move(dist), std::move(facts)));
            }
        }
        return {};
    };
    BS_CHECK(scan());
    // Packages installed moments ago (the after-snapshot of a run) were read within their
    // stamps' timestamp tick, so the cache cannot vouch for them yet, and a no-op (which writes
    // nothing) would read them again every time. When there are many and that tick is over
    // within 100 ms, they are read once more then (the rest is recalled) and cached. A few are
    // cheaper to read again later than to wait for (a rollback's before-snapshot).
    constexpr size_t k_worth_waiting = 64;
    if (auto wait = cache.unsettled_wait_ns(k_worth_waiting); wait > 0 && wait <= 100'000'000) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
        cache.start_pass();
        BS_CHECK(scan());
    }
    cache.save();

    if (request.host) {
        m.host = *request.host;
    } else {
        BS_TRY(m.host, probe_host(request.env, state::Layout(request.venv).host_facts()));
    }
    for (const auto& name : build_env_names())
        if (auto it = request.env.find(name); it != request.env.end()) m.build_env[name] = it->second;
    m.recipe_name = request.recipe_name;
    m.recipe_digest = request.recipe_digest;
    return m;
}

}  // namespace bootstrap::manifest
