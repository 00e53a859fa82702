// `seal`: a venv's state reduced to what its inputs decide, an image build step's last command
// (image/seal.hpp).
#include <cstdlib>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/status.hpp"
#include "image/seal.hpp"

namespace bootstrap::cli {

namespace {

struct SealArgs {
    std::string venv;
    double lock_timeout = 600;
};

int execute_seal(const SealArgs& args) {
    const char* active = std::getenv("VIRTUAL_ENV");
    const std::string venv = !args.venv.empty() ? args.venv : active ? active : "";
    if (venv.empty()) return report_error(Error{ErrorCode::usage, "no venv: pass --venv DIR (or activate one)", {}});
    auto sealed = image::seal_venv(venv, args.lock_timeout);
    if (!sealed) return report_error(sealed.error());
    fmt::print("sealed {}: removed {} path(s), reset {} journal entr{}\n", venv, sealed->removed.size(),
               sealed->journal_steps, sealed->journal_steps == 1 ? "y" : "ies");
    for (const auto& path : sealed->removed) fmt::print("  removed {}\n", path);
    return 0;
}

}  // namespace

void set_seal_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<SealArgs>();
    auto* cmd = app.add_subcommand(
        "seal", "Remove a venv's host-local state (lock, logs, caches, stat stamps, timings) before it is imaged");
    cmd->add_option("--venv", args->venv, "The venv (default: $VIRTUAL_ENV)");
    cmd->add_option("--lock-timeout", args->lock_timeout, "Seconds to wait for the venv lock")->capture_default_str();
    cmd->footer(
        "Removes VENV/.bootstrap/{logs/,*.cache,*.facts,torch-probe.json} and uv's\n"
        "*.dist-info/uv_cache.json (with its RECORD row), empties .bootstrap/lock, resets the journal's\n"
        "RECORD stat stamps, seconds and log paths, makes its venv_state a content digest, and writes\n"
        ".bootstrap/sealed: the venv stays at its fixed point wherever it is copied (`plan --check`\n"
        "passes, a first run writes nothing) until a run changes it. Keeps the history, the journal's steps, keys, owners and\n"
        "digests, and every installed file: `history`, `diff`, `doctor` and later runs work as before\n"
        "(a later run rehashes RECORDs and re-verifies). The Containerfile's build step ends with it, so\n"
        "two builds of the same inputs give the same venv layer.\n"
        "Exit codes: 0 ok, 1 failed, 2 usage.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_seal(*args); });
}

}  // namespace bootstrap::cli
