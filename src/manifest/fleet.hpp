#pragma once
// Drift between nodes: many manifests (one per node) grouped by identical environment, and
// every package or fact whose value is not the same everywhere, with the nodes holding each
// value ("n17: nvidia-cublas 13.1.0.3, the other 31 nodes 13.4.1.1").

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "manifest/manifest.hpp"

namespace bootstrap::manifest {

struct FleetNode {
    std::string name;  // "n17": the manifest file's name without ".json"
    Manifest manifest;
};

/// One value of a drifting package or fact, and the nodes that have it.
struct FleetValue {
    std::string value;  // "13.4.1.1", "13.4.1.1 (files a1b2c3d4e5f6)", "absent", "(none)"
    std::vector<std::string> nodes;
};

/// A package (by normalised name) or a fact ("torch.cuda", "host.driver") that differs.
struct FleetDrift {
    std::string what;
    bool package = true;
    std::vector<FleetValue> values;  // most nodes first; ties in node order
};

struct FleetReport {
    std::size_t nodes = 0;
    /// Nodes with identical environments (same packages, versions, files and facts; venv paths,
    /// origins and run times are not compared), largest group first.
    std::vector<std::vector<std::string>> groups;
    std::vector<FleetDrift> drift;  // packages first, then facts, each by name
    [[nodiscard]] bool same() const { return drift.empty(); }
};

/// Compare every node with every other. Package files are compared by the portable RECORD
/// digest (without the venv's console scripts), so node-local venv paths do not count.
[[nodiscard]] FleetReport fleet_diff(const std::vector<FleetNode>& nodes);

/// Load the nodes from manifest files and directories (each directory: its `*.json` files).
/// Node names are the file names without `.json`; two files with one name are an error, as is
/// fewer than two nodes.
[[nodiscard]] Result<std::vector<FleetNode>> load_fleet(const std::vector<std::filesystem::path>& inputs);

/// "4 nodes, 2 environments" then a line per group and one per drifting value:
/// "n4: nvidia-cublas 13.1.0.3, the other 3 nodes 13.4.1.1".
[[nodiscard]] std::string format_fleet(const FleetReport& report);
[[nodiscard]] std::string fleet_json(const FleetReport& report);

}  // namespace bootstrap::manifest
