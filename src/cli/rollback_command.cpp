// `rollback`: make a venv match a manifest exactly.
#include <cstdlib>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/json_output.hpp"
#include "cli/status.hpp"
#include "cli/venv_choice.hpp"
#include "manifest/history.hpp"
#include "rollback/rollback.hpp"

namespace bootstrap::cli {

namespace {

namespace fs = std::filesystem;

struct RollbackArgs {
    std::string to;
    bool last = false;
    VenvChoice venv;
    bool dry_run = false;
    std::vector<std::string> find_links;
    std::string index_url;
    std::string installer;
    bool json = false;
    double lock_timeout = 600;
};

/// `--last`: the state before the newest run (the newest history entry whose run phase is
/// "before"); with no run entries, the newest entry.
Result<std::pair<manifest::Manifest, std::string>> last_target(const fs::path& venv) {
    BS_TRY(auto entries, manifest::list_history(venv));
    if (entries.empty())
        return fail(ErrorCode::usage, fmt::format("--last: {} has no history yet", venv.string()),
                    "take one with `bootstrap snapshot --venv DIR --save` or run a recipe");
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
        auto m = manifest::load_manifest(it->file);
        if (m && m->run && m->run->phase == "before") return std::pair{*m, it->file.string()};
    }
    BS_TRY(auto newest, manifest::load_manifest(entries.back().file));
    return std::pair{newest, entries.back().file.string()};
}

nlohmann::json source_json(const rollback::InstallSource& s) {
    nlohmann::json j{{"kind", rollback::to_string(s.kind)}};
    if (!s.wheel.empty()) j["wheel"] = s.wheel.string();
    if (!s.index_urls.empty()) j["index_urls"] = s.index_urls;
    if (!s.url.empty()) j["url"] = s.url;
    return j;
}

nlohmann::json plan_json(const rollback::RollbackPlan& plan) {
    nlohmann::json remove = nlohmann::json::array(), install = nlohmann::json::array(),
                   unreachable = nlohmann::json::array();
    for (const auto& r : plan.remove) remove.push_back({{"name", r.name}, {"version", r.version}});
    for (const auto& i : plan.install)
        install.push_back({{"name", i.name},
                           {"version", i.version},
                           {"current", i.current},
                           {"reason", i.reason},
                           {"source", source_json(i.source)}});
    for (const auto& u : plan.unreachable)
        unreachable.push_back({{"name", u.name}, {"version", u.version}, {"why", u.why}});
    return {{"remove", remove}, {"install", install}, {"unreachable", unreachable}};
}

int execute_rollback(const RollbackArgs& args) {
    std::optional<rollback::RollbackPlan> shown;
    std::string target_name;
    auto finish = [&](const Result<rollback::RollbackReport>& result) {
        if (args.json) {
            nlohmann::json doc{
                {"schema", 1}, {"ok", result.has_value()}, {"target", target_name}, {"dry_run", args.dry_run}};
            if (shown) doc["plan"] = plan_json(*shown);
            if (result) {
                doc["venv"] = result->venv.string();
                doc["changed"] = result->changed;
                doc["log"] = result->log.string();
                doc["seconds"] = result->seconds;
                if (result->history) doc["history"] = result->history->number;
            } else {
                doc["error"] = error_object(result.error());
            }
            fmt::print("{}\n", doc.dump(2));
        }
        if (!result) {
            TerminalStatus status;
            status.error(result.error());
            return exit_code_for(result.error());
        }
        if (!args.json) {
            if (result->dry_run) fmt::print(stderr, "dry run: nothing was changed\n");
            else if (!result->changed)
                fmt::print(stderr, "{} already matches {}\n", result->venv.string(), target_name);
            else
                fmt::print(stderr, "rolled back {} to {}{} in {:.1f}s\n", result->venv.string(), target_name,
                           result->history ? fmt::format(" (history #{})", result->history->number) : "",
                           result->seconds);
        }
        return 0;
    };
    auto usage = [&](std::string message) {
        return finish(tl::unexpected(Error{ErrorCode::usage, std::move(message), {}}));
    };

    auto chosen = required_venv_choice(args.venv);
    if (!chosen) return finish(tl::unexpected(chosen.error()));
    const std::string venv = *chosen;
    if (args.last == !args.to.empty()) return usage("give exactly one of --to N|FILE and --last");

    manifest::Manifest target;
    if (args.last) {
        auto t = last_target(venv);
        if (!t) return finish(tl::unexpected(t.error()));
        std::tie(target, target_name) = *t;
    } else {
        auto t = manifest::load_reference(venv, args.to);
        if (!t) return finish(tl::unexpected(t.error()));
        target = *t;
        target_name = args.to;
    }

    rollback::RollbackOptions options;
    for (const auto& d : args.find_links) options.find_links.push_back(fs::absolute(d));
    if (!args.index_url.empty()) options.index_url = args.index_url;
    options.installer = args.installer;
    options.dry_run = args.dry_run;
    options.lock_timeout = args.lock_timeout;
    rollback::RollbackObserver observer;
    observer.on_plan = [&](const rollback::RollbackPlan& plan) {
        shown = plan;
        if (args.json) return;
        fmt::print("rollback {} to {}: {}\n{}", venv, target_name, plan.summary(), plan.format());
        std::fflush(stdout);
    };
    observer.on_message = [&](std::string_view text) {
        if (!args.json) fmt::print(stderr, "{}\n", text);
    };
    return finish(rollback::rollback(fs::absolute(venv), target, options, observer));
}

}  // namespace

void set_rollback_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<RollbackArgs>();
    auto* cmd =
        app.add_subcommand("rollback",
                           "Make a venv match a manifest exactly: remove extras, install missing and changed "
                           "packages at their recorded versions from their recorded origins (local wheels from the "
                           "artifact store). Prints the plan first and changes nothing when any package cannot be "
                           "restored.");
    auto* to =
        cmd->add_option("--to", args->to, "Target: a history number of the venv, last, last~N, or a manifest file");
    auto* last = cmd->add_flag("--last", args->last,
                               "Target: the state before the newest run (the newest history entry "
                               "of phase \"before\"); without run entries, the newest entry");
    to->excludes(last);
    add_venv_choice(*cmd, args->venv);
    cmd->add_flag("--dry-run", args->dry_run,
                  "Print the plan and check every source (installer dry runs), change nothing");
    cmd->add_option("--find-links", args->find_links, "A wheelhouse directory to restore packages from (repeatable)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_option("--index-url", args->index_url,
                    "Install index packages from this index instead of the recorded ones");
    cmd->add_option("--installer", args->installer,
                    "uv or pip (default: each package's original installer when available, else "
                    "uv for venvs made by uv or without pip, pip otherwise)")
        ->check(CLI::IsMember({"uv", "pip"}));
    cmd->add_option("--lock-timeout", args->lock_timeout, "Seconds to wait for another run on the same venv to finish")
        ->capture_default_str();
    cmd->add_flag("--json", args->json, "Print one JSON result document on stdout");
    cmd->footer(
        "Artifacts: $BOOTSTRAP_HOME/artifacts (default ~/.cache/bootstrap/artifacts).\n"
        "Exit codes: 0 done (or nothing to do), 1 refused or failed, 2 usage, 130 interrupted.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_rollback(*args); });
}

}  // namespace bootstrap::cli
