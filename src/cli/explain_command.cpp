// `bootstrap explain LOG`: known faults in any log. Exit 0 whether or not a fault matched (1 an
// unreadable log, 2 an invalid recipe).

#include <algorithm>
#include <memory>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/doctor_run.hpp"
#include "cli/status.hpp"
#include "core/fs.hpp"
#include "core/strings.hpp"
#include "doctor/knowledge.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::cli {

namespace {

size_t count_lines(const std::string& text) {
    if (text.empty()) return 0;
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + (text.back() == '\n' ? 0 : 1);
}

struct ExplainArgs {
    std::string log;
    std::string recipe;
    bool json = false;
};

int execute_explain(const ExplainArgs& args) {
    auto text = core::read_regular_file(args.log, core::k_max_user_input);
    if (!text) return report_error(text.error(), args.json);
    std::vector<doctor::KnownFault> kb = doctor::builtin_faults();
    if (!args.recipe.empty()) {
        auto loaded = steps::load_recipe(args.recipe);
        if (!loaded) return report_error(loaded.error(), args.json);
        kb = doctor::knowledge_for(*loaded);
    }
    auto matches = doctor::match_log(*text, kb);
    if (args.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& m : matches)
            list.push_back({{"id", m.fault->id},
                            {"line", m.line},
                            {"text", m.text},
                            {"count", m.count},
                            {"explain", m.fault->explain},
                            {"fix", m.fault->fix},
                            {"step", m.fault->step},
                            {"source", m.fault->source}});
        nlohmann::json j{{"schema", 1}, {"ok", true}, {"log", args.log}, {"matches", list}};
        fmt::print("{}\n", j.dump(2));
    } else if (matches.empty()) {
        fmt::print("no known fault matched in {} ({} lines, {} known faults)\n", args.log, count_lines(*text),
                   kb.size());
    } else {
        fmt::print("{}", doctor::format_matches(matches, args.log));
    }
    return 0;
}

}  // namespace

void set_explain_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<ExplainArgs>();
    auto* cmd =
        app.add_subcommand("explain", "Match a log (a failing step's, or a training log) against the known faults");
    cmd->add_option("log", args->log, "Log file")->required();
    cmd->add_option("--recipe", args->recipe, "Also use this recipe's [[fault]] entries (first)");
    cmd->add_flag("--json", args->json, "Print the matches as JSON");
    cmd->footer("Exit codes: 0 (matched or not), 1 unreadable log, 2 invalid recipe.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_explain(*args); });
}

}  // namespace bootstrap::cli
