// `snapshot`: a manifest of what a venv holds (packages, origins, interpreter, torch, host).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/status.hpp"
#include "cli/venv_choice.hpp"
#include "core/fs.hpp"
#include "engine/run_manifests.hpp"
#include "exec/environment.hpp"
#include "manifest/history.hpp"
#include "manifest/snapshot.hpp"
#include "state/journal.hpp"

namespace bootstrap::cli {

namespace {

namespace fs = std::filesystem;

/// A device or pipe (`-o /dev/null`, `-o /dev/stderr`) is written in place: a temp file and
/// rename would replace it.
Status write_special(const std::string& path, const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (f && std::fclose(f) != 0) ok = false;
    if (!ok) return fail(ErrorCode::io, fmt::format("cannot write the manifest to {}", path));
    return {};
}

struct SnapshotArgs {
    VenvChoice venv;
    std::string label;
    std::string output;
    bool save = false;
};

Result<void> snapshot(const SnapshotArgs& args) {
    BS_TRY(std::string venv, required_venv(args.venv));
    const exec::EnvMap env = exec::current_environment();
    // Reads `<venv>/.bootstrap/python.facts`; Python runs only when that cache is stale.
    BS_TRY(auto python, pyenv::venv_facts(venv, exec::compose_environment(env, {}, {})));
    manifest::SnapshotRequest request;
    request.venv = venv;
    request.python = std::move(python);
    request.env = env;
    request.label = args.label;
    auto journal = state::Journal::load_in_background(venv);  // read while the venv is scanned
    BS_TRY(auto m, manifest::take_snapshot(request));
    // Origins the dist-info cannot tell (the owning step, the indexes it used) come from the
    // venv's journal and history when bootstrap manages it: a saved manifest is restorable.
    for (const auto& warning : engine::annotate_from_records(m, venv, journal.get()))
        fmt::print(stderr, "warning: {}\n", warning);
    // The manifest records a broken install ("broken": why); say it where a person looks too.
    for (const auto& [name, package] : m.packages)
        if (!package.broken.empty())
            fmt::print(stderr,
                       "warning: broken install of {}: {} (a run removes it, then its step installs it again; "
                       "`bootstrap doctor` says more)\n",
                       name, package.broken);
    std::error_code ec;
    if (args.output.empty() || args.output == "-") fmt::print("{}", manifest::to_json(m));
    else if (fs::exists(args.output, ec) && !fs::is_regular_file(args.output, ec))
        BS_CHECK(write_special(args.output, manifest::to_json(m)));
    else BS_CHECK(manifest::save_manifest(args.output, m));
    if (args.save) {
        BS_TRY(auto entry, manifest::append_history(venv, m));
        fmt::print(stderr, "saved as history entry {} ({})\n", entry.number, entry.file.string());
    }
    return {};
}

}  // namespace

void set_snapshot_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<SnapshotArgs>();
    auto* cmd =
        app.add_subcommand("snapshot", "Write a manifest of a venv: packages, origins, interpreter, torch, host");
    add_venv_choice(*cmd, args->venv);
    cmd->add_option("--label", args->label, "Label recorded in the manifest and history file name");
    cmd->add_option("-o,--output", args->output, "Write the manifest to FILE instead of stdout");
    cmd->add_flag("--save", args->save, "Also append it to the venv's history");
    cmd->callback([args, &outcome] {
        auto r = snapshot(*args);
        outcome.exit_code = r ? 0 : report_error(r.error(), false);
    });
}

}  // namespace bootstrap::cli
