// `history`: the snapshots a venv's runs, rollbacks and `snapshot --save` kept.
#include <algorithm>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/json_output.hpp"
#include "cli/status.hpp"
#include "cli/venv_choice.hpp"
#include "core/clock.hpp"
#include "engine/image_state.hpp"
#include "manifest/history.hpp"

namespace bootstrap::cli {

namespace {

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
void print_history_table(const std::vector<manifest::HistoryRow>& rows, const std::optional<std::string>& build_time) {
    auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
    struct Cells {
        std::string number, time, label, run, recipe, phase, result, packages, changes;
    };
    std::vector<Cells> table{{"#", "time", "label", "run", "recipe", "phase", "result", "packages", "changes"}};
    for (const auto& r : rows) {
        const std::string time = core::shown_time(r.time, build_time);
        Cells c{std::to_string(r.entry.number), time, r.entry.label, "-", "-", "-", "-", "?", ""};
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
    // A sealed image's records are dated SOURCE_DATE_EPOCH (engine/image_state.hpp).
    print_history_table(rows, engine::sealed_build_time(venv));
    return {};
}

}  // namespace

void set_history_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<HistoryArgs>();
    auto* cmd = app.add_subcommand("history",
                                   "List a venv's manifest history: number, time, label, the run that wrote each "
                                   "entry (run id, recipe, phase, ok/failed), package count and changes");
    add_venv_choice(*cmd, args->venv);
    cmd->add_flag("--json", args->json, "Print the history as JSON");
    cmd->callback([args, &outcome] {
        auto r = history(*args);
        outcome.exit_code = r ? 0 : report_error(r.error(), args->json);
    });
}

}  // namespace bootstrap::cli
