// `bootstrap relocate`: fix a copied venv's paths.

#include <memory>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/doctor_run.hpp"
#include "cli/status.hpp"
#include "pyenv/relocate.hpp"

namespace bootstrap::cli {

namespace {

struct RelocateArgs {
    std::string venv;
    std::string from;
    bool json = false;
};

int execute_relocate(const RelocateArgs& args) {
    auto report = pyenv::relocate_venv(args.venv, args.from);
    if (!report) return report_error(report.error(), args.json);
    if (args.json) {
        nlohmann::json files = nlohmann::json::array();
        for (const auto& f : report->rewritten) files.push_back(f.string());
        nlohmann::json j{{"schema", 1},
                         {"ok", true},
                         {"venv", std::filesystem::absolute(args.venv).string()},
                         {"from", report->old_prefix.string()},
                         {"rewritten", files}};
        fmt::print("{}\n", j.dump(2));
        return 0;
    }
    for (const auto& f : report->rewritten) fmt::print("rewrote {}\n", f.string());
    fmt::print("relocated {} from {}: {} file(s) rewritten\n", args.venv, report->old_prefix.string(),
               report->rewritten.size());
    return 0;
}

}  // namespace

void set_relocate_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<RelocateArgs>();
    auto* cmd = app.add_subcommand("relocate", "Rewrite a moved or copied venv's bin/ shebangs and activate scripts");
    cmd->add_option("--venv", args->venv, "The venv, at its new place")->required();
    cmd->add_option("--from", args->from, "The old path (default: read from bin/activate's VIRTUAL_ENV= line)");
    cmd->add_flag("--json", args->json, "Print what was rewritten as JSON");
    cmd->footer(
        "Each file is rewritten atomically with its mode kept. A directory without pyvenv.cfg is refused.\n"
        "Exit codes: 0 ok, 1 failure, 2 not a venv.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_relocate(*args); });
}

}  // namespace bootstrap::cli
