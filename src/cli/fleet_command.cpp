// `fleet diff`: many nodes' manifests grouped by identical environment, the odd ones named.
#include <filesystem>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/status.hpp"
#include "manifest/fleet.hpp"

namespace bootstrap::cli {

namespace {

namespace fs = std::filesystem;

struct FleetArgs {
    std::vector<std::string> inputs;
    bool json = false;
};

Result<bool> fleet_diff(const FleetArgs& args) {
    std::vector<fs::path> inputs(args.inputs.begin(), args.inputs.end());
    BS_TRY(auto nodes, manifest::load_fleet(inputs));
    const auto report = manifest::fleet_diff(nodes);
    fmt::print("{}", args.json ? manifest::fleet_json(report) : manifest::format_fleet(report));
    return !report.same();
}

}  // namespace

void set_fleet_command(CLI::App& app, Outcome& outcome) {
    auto* fleet = app.add_subcommand("fleet", "Compare the environments of many nodes");
    fleet->require_subcommand(1);
    auto args = std::make_shared<FleetArgs>();
    auto* cmd =
        fleet->add_subcommand("diff", "Group nodes by identical environment and name the odd ones and what differs");
    cmd->add_option("manifests", args->inputs,
                    "Manifest files (one per node, named by file name: n17.json is node n17), or "
                    "directories of them")
        ->required();
    cmd->add_flag("--json", args->json, "Print the groups and differences as JSON");
    cmd->footer(
        "Packages are compared by version and files (the RECORD digest without the venv's\n"
        "console scripts, so node-local venv paths do not count), then the interpreter,\n"
        "torch, host, build-environment and device facts. Origins and run times are not.\n"
        "Write each node's manifest with `bootstrap snapshot --venv DIR -o DIR/$(hostname).json`.\n"
        "Exit codes: 0 every node the same, 1 they differ or a manifest cannot be read,\n"
        "2 usage (no such file, fewer than two manifests, two with one name).");
    cmd->callback([args, &outcome] {
        auto r = fleet_diff(*args);
        outcome.exit_code = !r ? report_error(r.error(), args->json) : *r ? 1 : 0;
    });
}

}  // namespace bootstrap::cli
