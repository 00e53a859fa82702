// `diff`: two manifests compared (history numbers, `last`, `last~N` or files).
#include <filesystem>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/status.hpp"
#include "cli/venv_choice.hpp"
#include "engine/run_manifests.hpp"
#include "manifest/diff.hpp"
#include "manifest/history.hpp"

namespace bootstrap::cli {

namespace {

namespace fs = std::filesystem;

struct DiffArgs {
    std::string a;
    std::string b;
    VenvChoice venv;
    bool json = false;
    bool exit_code = false;
};

Result<bool> diff(const DiffArgs& args) {
    // History references need a venv; two files do not.
    BS_TRY(std::string chosen, chosen_venv(args.venv));
    const fs::path venv = chosen;
    BS_TRY(auto before, manifest::load_reference(venv, args.a));
    BS_TRY(auto after, manifest::load_reference(venv, args.b));
    const auto d = manifest::diff(before, after);
    if (args.json) fmt::print("{}", manifest::diff_json(d));
    else if (d.empty()) fmt::print("no change\n");
    else fmt::print("{}", manifest::format_diff(d));
    return !d.empty();
}

}  // namespace

void set_diff_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<DiffArgs>();
    auto* cmd = app.add_subcommand("diff", "Compare two manifests: history numbers, `last`, `last~N` or files");
    cmd->add_option("a", args->a, "The older manifest")->required();
    cmd->add_option("b", args->b, "The newer manifest")->required();
    add_venv_choice(*cmd, args->venv);  // whose history numbers refer to
    cmd->add_flag("--json", args->json, "Print the differences as JSON");
    cmd->add_flag("--exit-code", args->exit_code, "Exit with 1 when the manifests differ");
    cmd->footer(
        "Manifests of two different venvs are compared without the venv's console scripts\n"
        "(their shebangs name each venv's own interpreter); manifests written before\n"
        "bootstrap recorded that digest are compared by their whole RECORD.\n"
        "Exit codes: 0 (also when they differ, without --exit-code), 1 they differ\n"
        "(with --exit-code) or a manifest cannot be read, 2 usage (no such history\n"
        "entry or file).");
    cmd->callback([args, &outcome] {
        auto r = diff(*args);
        if (!r) outcome.exit_code = report_error(r.error(), args->json);
        else outcome.exit_code = *r && args->exit_code ? 1 : 0;
    });
}

}  // namespace bootstrap::cli
