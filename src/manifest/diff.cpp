#include "manifest/diff.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/strings.hpp"
#include "pyenv/version.hpp"

namespace bootstrap::manifest {

namespace {

/// <0, 0, >0 as PEP 440 orders the versions; plain string order when either does not parse.
int compare_versions(const std::string& a, const std::string& b) {
    auto va = pyenv::Version::parse(a), vb = pyenv::Version::parse(b);
    if (va && vb) {
        auto c = *va <=> *vb;
        return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    return a.compare(b) < 0 ? -1 : a == b ? 0 : 1;
}

PackageChange::Kind classify(const Package& before, const Package& after, bool across_venvs, bool& changed) {
    changed = true;
    int c = compare_versions(before.version, after.version);
    if (c < 0) return PackageChange::Kind::upgraded;
    if (c > 0) return PackageChange::Kind::downgraded;
    // Same version: different files (rebuilt from source, another wheel of the same version,
    // files edited in place) show as a different RECORD.
    changed = !same_files(before, after, across_venvs) || before.version != after.version;
    return PackageChange::Kind::reinstalled;
}

/// Every key of two string maps, as "prefix.key" fact changes ("key" with no prefix).
void diff_map(const std::string& prefix, const std::map<std::string, std::string>& a,
              const std::map<std::string, std::string>& b, std::vector<FactChange>& out) {
    std::map<std::string, std::pair<std::string, std::string>> both;
    for (const auto& [k, v] : a) both[k].first = v;
    for (const auto& [k, v] : b) both[k].second = v;
    for (const auto& [k, v] : both)
        if (v.first != v.second) out.push_back({prefix.empty() ? k : prefix + "." + k, v.first, v.second});
}

std::string or_none(const std::string& v) { return v.empty() ? "(none)" : v; }

/// The interpreter, torch and host facts (without build_env.* and device.*).
std::map<std::string, std::string> core_facts(const Manifest& m) {
    Torch t = m.torch.value_or(Torch{});
    return {
        {"python.version", m.python.version},
        {"python.implementation", m.python.implementation},
        {"python.ext_suffix", m.python.ext_suffix},
        {"python.soabi", m.python.soabi},
        {"python.platform", m.python.platform},
        {"torch.version", t.version},
        {"torch.cuda", t.cuda},
        {"torch.cxx11_abi", t.cxx11_abi},
        {"host.glibc", m.host.glibc},
        {"host.glibcxx", m.host.glibcxx},
        {"host.gcc", m.host.gcc},
        {"host.nvcc", m.host.nvcc},
        {"host.driver", m.host.driver},
    };
}

}  // namespace

std::map<std::string, std::string> environment_facts(const Manifest& m) {
    auto facts = core_facts(m);
    for (const auto& [k, v] : m.build_env) facts["build_env." + k] = v;
    for (const auto& [k, v] : m.device) facts["device." + k] = v;
    return facts;
}

bool same_files(const Package& a, const Package& b, bool across_venvs) {
    if (across_venvs && !a.record_sha256_portable.empty() && !b.record_sha256_portable.empty())
        return a.record_sha256_portable == b.record_sha256_portable;
    return a.record_sha256 == b.record_sha256;
}

const char* to_string(PackageChange::Kind kind) {
    switch (kind) {
        case PackageChange::Kind::added: return "added";
        case PackageChange::Kind::removed: return "removed";
        case PackageChange::Kind::upgraded: return "upgraded";
        case PackageChange::Kind::downgraded: return "downgraded";
        case PackageChange::Kind::reinstalled: return "reinstalled";
    }
    return "?";
}

ManifestDiff diff(const Manifest& before, const Manifest& after) {
    ManifestDiff d;
    const bool across_venvs = !before.venv.empty() && !after.venv.empty() && before.venv != after.venv;
    auto b = before.packages.begin(), a = after.packages.begin();
    // Merge walk over two name-sorted maps.
    while (b != before.packages.end() || a != after.packages.end()) {
        if (a == after.packages.end() || (b != before.packages.end() && b->first < a->first)) {
            d.packages.push_back({PackageChange::Kind::removed, b->first, b->second.version, ""});
            ++b;
        } else if (b == before.packages.end() || a->first < b->first) {
            d.packages.push_back({PackageChange::Kind::added, a->first, "", a->second.version});
            ++a;
        } else {
            bool changed = false;
            auto kind = classify(b->second, a->second, across_venvs, changed);
            if (changed) d.packages.push_back({kind, a->first, b->second.version, a->second.version});
            ++a;
            ++b;
        }
    }
    // Interpreter, torch and host first, then the build environment and the device.
    diff_map("", core_facts(before), core_facts(after), d.facts);
    diff_map("build_env", before.build_env, after.build_env, d.facts);
    diff_map("device", before.device, after.device, d.facts);
    return d;
}

std::string ManifestDiff::summary() const {
    if (empty()) return "no change";
    std::map<PackageChange::Kind, int> counts;
    for (const auto& p : packages) ++counts[p.kind];
    std::vector<std::string> parts;
    for (auto kind : {PackageChange::Kind::added, PackageChange::Kind::removed, PackageChange::Kind::upgraded,
                      PackageChange::Kind::downgraded, PackageChange::Kind::reinstalled})
        if (counts[kind]) parts.push_back(fmt::format("{} {}", counts[kind], to_string(kind)));
    if (!facts.empty()) parts.push_back(fmt::format("{} fact{} changed", facts.size(), facts.size() == 1 ? "" : "s"));
    return core::join(parts, ", ");
}

std::string format_diff(const ManifestDiff& d) {
    std::string out;
    for (const auto& p : d.packages) {
        switch (p.kind) {
            case PackageChange::Kind::added: out += fmt::format("+ {} {}\n", p.name, p.to); break;
            case PackageChange::Kind::removed: out += fmt::format("- {} {}\n", p.name, p.from); break;
            case PackageChange::Kind::upgraded: out += fmt::format("^ {} {} -> {}\n", p.name, p.from, p.to); break;
            case PackageChange::Kind::downgraded: out += fmt::format("v {} {} -> {}\n", p.name, p.from, p.to); break;
            case PackageChange::Kind::reinstalled:
                out += p.from == p.to ? fmt::format("~ {} {} (reinstalled: files differ)\n", p.name, p.to)
                                      : fmt::format("~ {} {} -> {} (same version)\n", p.name, p.from, p.to);
                break;
        }
    }
    for (const auto& f : d.facts) out += fmt::format("{}: {} -> {}\n", f.field, or_none(f.from), or_none(f.to));
    return out;
}

std::string diff_json(const ManifestDiff& d) {
    nlohmann::json packages = nlohmann::json::array(), facts = nlohmann::json::array();
    for (const auto& p : d.packages)
        packages.push_back({{"kind", to_string(p.kind)}, {"name", p.name}, {"from", p.from}, {"to", p.to}});
    for (const auto& f : d.facts) facts.push_back({{"field", f.field}, {"from", f.from}, {"to", f.to}});
    nlohmann::json j{{"schema", 1},
                     {"same", d.empty()},
                     {"summary", d.summary()},
                     {"packages", std::move(packages)},
                     {"facts", std::move(facts)}};
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace bootstrap::manifest
