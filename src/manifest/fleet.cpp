#include "manifest/fleet.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/strings.hpp"
#include "manifest/diff.hpp"

namespace bootstrap::manifest {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// "n2" before "n10": digit runs compare by value, everything else byte by byte.
bool natural_less(const std::string& a, const std::string& b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const bool da = is_digit(a[i]), db = is_digit(b[j]);
        if (da && db) {
            size_t ie = i, je = j;
            while (ie < a.size() && is_digit(a[ie])) ++ie;
            while (je < b.size() && is_digit(b[je])) ++je;
            std::string_view na(a.data() + i, ie - i), nb(b.data() + j, je - j);
            while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
            while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
            if (na.size() != nb.size()) return na.size() < nb.size();
            if (na != nb) return na < nb;
            i = ie;
            j = je;
        } else {
            if (a[i] != b[j]) return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

/// What decides whether two installs of a package are the same environment: version, files,
/// and whether the install is whole. Files: the portable RECORD digest (without the venv's
/// console scripts, whose shebangs name each node's venv), else the exact one.
std::string package_identity(const Package& p) {
    std::string files = !p.record_sha256_portable.empty() ? p.record_sha256_portable : p.record_sha256;
    return p.version + '\n' + files + '\n' + p.broken;
}

constexpr const char* k_absent = "absent";

/// The values of one package across the nodes, in the order of `nodes`.
struct Column {
    std::vector<std::string> identity;  // "" when the node lacks it
    std::vector<const Package*> package;
};

/// Group the nodes by identity: the most common identity first, ties in the order of their
/// first node (the nodes are in natural order).
std::vector<std::pair<std::string, std::vector<std::string>>> by_value(const std::vector<FleetNode>& nodes,
                                                                       const std::vector<std::string>& identity) {
    std::map<std::string, size_t> slot;
    std::vector<std::pair<std::string, std::vector<std::string>>> out;
    for (size_t i = 0; i < nodes.size(); ++i) {
        auto [it, fresh] = slot.emplace(identity[i], out.size());
        if (fresh) out.push_back({identity[i], {}});
        out[it->second].second.push_back(nodes[i].name);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
    return out;
}

std::string short_digest(const std::string& hex) { return hex.substr(0, 12); }

FleetDrift package_drift(const std::string& name, const std::vector<FleetNode>& nodes, const Column& column) {
    FleetDrift d{name, true, {}};
    auto groups = by_value(nodes, column.identity);
    // Versions shared by two groups are told apart by their files (or their broken state).
    std::map<std::string, int> versions;
    std::map<std::string, const Package*> sample;
    for (size_t i = 0; i < nodes.size(); ++i)
        if (column.package[i]) sample.emplace(column.identity[i], column.package[i]);
    for (const auto& [identity, members] : groups)
        if (!identity.empty() && sample.at(identity)->broken.empty()) ++versions[sample.at(identity)->version];
    for (auto& [identity, members] : groups) {
        std::string value = k_absent;
        if (!identity.empty()) {
            const Package& p = *sample.at(identity);
            value = p.version;
            if (!p.broken.empty()) value += " (broken: " + p.broken + ")";
            else if (versions[p.version] > 1)
                value += " (files " +
                         short_digest(!p.record_sha256_portable.empty() ? p.record_sha256_portable : p.record_sha256) +
                         ")";
        }
        d.values.push_back({std::move(value), std::move(members)});
    }
    return d;
}

std::string node_list(const std::vector<std::string>& nodes) {
    constexpr size_t k_shown = 8;
    if (nodes.size() <= k_shown) return core::join(nodes, ", ");
    std::vector<std::string> head(nodes.begin(), nodes.begin() + k_shown);
    return fmt::format("{} and {} more", core::join(head, ", "), nodes.size() - k_shown);
}

std::string nodes_word(size_t n) { return n == 1 ? "node" : "nodes"; }

}  // namespace

FleetReport fleet_diff(const std::vector<FleetNode>& nodes) {
    FleetReport report;
    report.nodes = nodes.size();
    std::vector<std::string> signature(nodes.size());

    std::set<std::string> names;
    for (const auto& n : nodes)
        for (const auto& [name, p] : n.manifest.packages) names.insert(name);
    for (const auto& name : names) {
        Column column{std::vector<std::string>(nodes.size()), std::vector<const Package*>(nodes.size())};
        for (size_t i = 0; i < nodes.size(); ++i) {
            auto it = nodes[i].manifest.packages.find(name);
            if (it == nodes[i].manifest.packages.end()) continue;
            column.package[i] = &it->second;
            column.identity[i] = package_identity(it->second);
        }
        for (size_t i = 0; i < nodes.size(); ++i) signature[i] += name + '\0' + column.identity[i] + '\0';
        if (std::adjacent_find(column.identity.begin(), column.identity.end(), std::not_equal_to<>()) !=
            column.identity.end())
            report.drift.push_back(package_drift(name, nodes, column));
    }

    std::vector<std::map<std::string, std::string>> facts;
    std::set<std::string> fields;
    for (const auto& n : nodes) {
        facts.push_back(environment_facts(n.manifest));
        for (const auto& [k, v] : facts.back()) fields.insert(k);
    }
    for (const auto& field : fields) {
        std::vector<std::string> values(nodes.size());
        for (size_t i = 0; i < nodes.size(); ++i) {
            auto it = facts[i].find(field);
            values[i] = it == facts[i].end() || it->second.empty() ? "(none)" : it->second;
            signature[i] += field + '\0' + values[i] + '\0';
        }
        if (std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) == values.end()) continue;
        FleetDrift d{field, false, {}};
        for (auto& [value, members] : by_value(nodes, values)) d.values.push_back({value, std::move(members)});
        report.drift.push_back(std::move(d));
    }

    for (auto& [sig, members] : by_value(nodes, signature)) report.groups.push_back(std::move(members));
    return report;
}

Result<std::vector<FleetNode>> load_fleet(const std::vector<std::filesystem::path>& inputs) {
    std::vector<std::filesystem::path> files;
    for (const auto& input : inputs) {
        std::error_code ec;
        if (!std::filesystem::is_directory(input, ec)) {
            if (!std::filesystem::exists(input, ec))
                return fail(ErrorCode::usage, fmt::format("no such manifest or directory: {}", input.string()));
            files.push_back(input);
            continue;
        }
        std::vector<std::filesystem::path> found;
        for (std::filesystem::directory_iterator it(input, ec), end; !ec && it != end; it.increment(ec))
            if (it->path().extension() == ".json" && it->is_regular_file(ec)) found.push_back(it->path());
        if (ec) return fail(ErrorCode::io, fmt::format("cannot list {}: {}", input.string(), ec.message()));
        if (found.empty()) return fail(ErrorCode::usage, fmt::format("{} holds no manifests (*.json)", input.string()));
        std::sort(found.begin(), found.end());
        files.insert(files.end(), found.begin(), found.end());
    }
    std::vector<FleetNode> nodes;
    std::map<std::string, std::filesystem::path> seen;
    for (const auto& file : files) {
        std::string name = file.stem().string();
        if (auto [it, fresh] = seen.emplace(name, file); !fresh)
            return fail(ErrorCode::usage, fmt::format("two manifests for node {}: {} and {} (a node is "
                                                      "named by its file name without .json)",
                                                      name, it->second.string(), file.string()));
        BS_TRY(auto m, load_manifest(file));
        nodes.push_back({std::move(name), std::move(m)});
    }
    if (nodes.size() < 2)
        return fail(ErrorCode::usage,
                    fmt::format("fleet diff compares two or more manifests (one per node); got {}", nodes.size()));
    std::sort(nodes.begin(), nodes.end(),
              [](const FleetNode& a, const FleetNode& b) { return natural_less(a.name, b.name); });
    return nodes;
}

std::string format_fleet(const FleetReport& report) {
    std::string out = fmt::format("{} nodes, {} environment{}", report.nodes, report.groups.size(),
                                  report.groups.size() == 1 ? "" : "s");
    if (report.same()) return out + ": no drift\n";
    out += "\n";
    for (const auto& g : report.groups)
        out += fmt::format("  {} {}: {}\n", g.size(), nodes_word(g.size()), node_list(g));
    for (const auto& d : report.drift) {
        const auto& top = d.values.front();
        const bool majority = d.values.size() == 2 && top.nodes.size() > d.values[1].nodes.size();
        if (majority) {
            const auto& odd = d.values[1];
            out += fmt::format("{}: {} {}, the other {} {} {}\n", node_list(odd.nodes), d.what, odd.value,
                               top.nodes.size(), nodes_word(top.nodes.size()), top.value);
            continue;
        }
        std::vector<std::string> parts;
        for (const auto& v : d.values)
            parts.push_back(v.nodes.size() > 3
                                ? fmt::format("{} on {} nodes ({})", v.value, v.nodes.size(), node_list(v.nodes))
                                : fmt::format("{} on {}", v.value, node_list(v.nodes)));
        out += fmt::format("{} differs: {}\n", d.what, core::join(parts, "; "));
    }
    return out;
}

std::string fleet_json(const FleetReport& report) {
    nlohmann::json drift = nlohmann::json::array();
    for (const auto& d : report.drift) {
        nlohmann::json values = nlohmann::json::array();
        for (const auto& v : d.values) values.push_back({{"value", v.value}, {"nodes", v.nodes}});
        drift.push_back({{"what", d.what}, {"kind", d.package ? "package" : "fact"}, {"values", std::move(values)}});
    }
    nlohmann::json j{{"schema", 1},
                     {"nodes", report.nodes},
                     {"same", report.same()},
                     {"groups", report.groups},
                     {"drift", std::move(drift)}};
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace bootstrap::manifest
