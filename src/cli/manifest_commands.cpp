// `snapshot`, `history`, `diff` and `fleet diff`: manifests of what a venv holds.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/json_output.hpp"
#include "cli/status.hpp"
#include "cli/venv_choice.hpp"
#include "core/fs.hpp"
#include "engine/run_manifests.hpp"
#include "exec/environment.hpp"
#include "manifest/diff.hpp"
#include "manifest/fleet.hpp"
#include "manifest/history.hpp"
#include "manifest/snapshot.hpp"
#include "pyenv/interpreter.hpp"

namespace bootstrap::cli {

namespace {

namespace fs = std::filesystem;

int report(const Error& e, bool json) {
    TerminalStatus status;
    status.error(e);
    if (json) fmt::print("{}", error_json(e));
    return exit_code_for(e);
}

/// The venv to work on, which must be one (has pyvenv.cfg).
Result<std::string> required_venv(const VenvChoice& choice) {
    BS_TRY(std::string v, required_venv_choice(choice));
    BS_TRY(auto cfg, pyenv::read_pyvenv_cfg(v));
    (void)cfg;
    return v;
}

/// A device or pipe (`-o /dev/null`, `-o /dev/stderr`) is written in place: a temp file and
/// rename would replace it.
Status write_special(const std::string& path, const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (f && std::fclose(f) != 0) ok = false;
    if (!ok) return fail(ErrorCode::io, fmt::format("cannot write the manifest to {}", path));
    return {};
}

// ---- snapshot --------------------------------------------------------------------------------

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
    BS_TRY(auto m, manifest::take_snapshot(request));
    // Origins the dist-info cannot tell (the owning step, the indexes it used) come from the
    // venv's journal and history when bootstrap manages it: a saved manifest is restorable.
    for (const auto& warning : engine::annotate_from_records(m, venv)) fmt::print(stderr, "warning: {}\n", warning);
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

// ---- history ---------------------------------------------------------------------------------

struct HistoryArgs {
    VenvChoice venv;
    bool json = false;
};

/// "ok" / "failed" for an entry a run or rollback wrote, "" otherwise.
std::string run_result(const manifest::HistoryRow& r) {
    if (!r.run) return {};
    return r.run->ok ? "ok" : "failed";
}

nlohmann::json history_row_json(const manifest::HistoryRow& r) {
    nlohmann::json j{
        {"number", r.entry.number}, {"file", r.entry.file.string()}, {"label", r.entry.label}, {"time", r.time}};
    if (!r.error.empty()) {
        j["error"] = r.error;
        return j;
    }
    j["packages"] = r.package_count;
    j["changes"] = r.changes;
    j["recipe"] = r.recipe;
    if (r.run)
        j["run"] = {{"run_id", r.run->run_id}, {"phase", r.run->phase}, {"ok", r.run->ok}, {"result", run_result(r)}};
    else j["run"] = nullptr;
    return j;
}

/// The text table: one row per entry; run, recipe, phase and result are "-" for entries no run
/// wrote (`snapshot --save`).
void print_history_table(const std::vector<manifest::HistoryRow>& rows) {
    auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
    struct Cells {
        std::string number, time, label, run, recipe, phase, result, packages, changes;
    };
    std::vector<Cells> table{{"#", "time", "label", "run", "recipe", "phase", "result", "packages", "changes"}};
    for (const auto& r : rows) {
        Cells c{std::to_string(r.entry.number), r.time, r.entry.label, "-", "-", "-", "-", "?", ""};
        if (!r.error.empty()) {
            c.changes = "error: " + r.error;
        } else {
            c.recipe = or_dash(r.recipe);
            if (r.run) {
                c.run = or_dash(r.run->run_id);
                c.phase = or_dash(r.run->phase);
                c.result = run_result(r);
            }
            c.packages = std::to_string(r.package_count);
            c.changes = r.changes.empty() ? "(first)" : r.changes;
        }
        table.push_back(std::move(c));
    }
    size_t w[8] = {};
    for (const auto& c : table) {
        const std::string* cells[8] = {&c.number, &c.time,  &c.label,  &c.run,
                                       &c.recipe, &c.phase, &c.result, &c.packages};
        for (size_t i = 0; i < 8; ++i) w[i] = std::max(w[i], cells[i]->size());
    }
    for (const auto& c : table)
        fmt::print("{:>{}}  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {:>{}}  {}\n", c.number, w[0], c.time, w[1],
                   c.label, w[2], c.run, w[3], c.recipe, w[4], c.phase, w[5], c.result, w[6], c.packages, w[7],
                   c.changes);
}

Result<void> history(const HistoryArgs& args) {
    BS_TRY(std::string venv, required_venv(args.venv));
    BS_TRY(auto rows, manifest::describe_history(venv));
    if (args.json) {
        nlohmann::json entries = nlohmann::json::array();
        for (const auto& r : rows) entries.push_back(history_row_json(r));
        nlohmann::json doc{{"schema", 1}, {"venv", venv}, {"entries", std::move(entries)}};
        fmt::print("{}\n", doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
        return {};
    }
    if (rows.empty()) {
        fmt::print(
            "no history for {} yet (`bootstrap snapshot --save` or `bootstrap run` "
            "records entries)\n",
            venv);
        return {};
    }
    print_history_table(rows);
    return {};
}

// ---- diff ------------------------------------------------------------------------------------

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

// ---- fleet diff --------------------------------------------------------------------------------

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
        outcome.exit_code = !r ? report(r.error(), args->json) : *r ? 1 : 0;
    });
}

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
        outcome.exit_code = r ? 0 : report(r.error(), false);
    });
}

void set_history_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<HistoryArgs>();
    auto* cmd = app.add_subcommand("history",
                                   "List a venv's manifest history: number, time, label, the run that wrote each "
                                   "entry (run id, recipe, phase, ok/failed), package count and changes");
    add_venv_choice(*cmd, args->venv);
    cmd->add_flag("--json", args->json, "Print the history as JSON");
    cmd->callback([args, &outcome] {
        auto r = history(*args);
        outcome.exit_code = r ? 0 : report(r.error(), args->json);
    });
}

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
        if (!r) outcome.exit_code = report(r.error(), args->json);
        else outcome.exit_code = *r && args->exit_code ? 1 : 0;
    });
}

}  // namespace bootstrap::cli
