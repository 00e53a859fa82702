#include "cli/json_output.hpp"

#include "core/redact.hpp"
#include "core/strings.hpp"
#include "steps/kind.hpp"

#include <nlohmann/json.hpp>

namespace bootstrap::cli {

nlohmann::json error_object(const Error& e) {
    // The last line of defence: nothing printed carries a URL's credentials.
    return {{"message", core::redact_text(e.message)},
            {"detail", core::redact_text(e.detail)},
            {"exit_code", exit_code_for(e)}};
}

std::string run_report_json(const engine::RunReport& report, const std::string& recipe) {
    nlohmann::json j;
    j["schema"] = 1;
    j["recipe"] = recipe;
    j["run_id"] = report.run_id;
    j["venv"] = report.venv.string();
    j["ok"] = report.ok();
    j["seconds"] = report.seconds;
    j["steps"] = nlohmann::json::array();
    for (const auto& s : report.steps) {
        nlohmann::json js{{"id", s.id},         {"kind", s.kind},       {"result", engine::to_string(s.result)},
                          {"reason", s.reason}, {"seconds", s.seconds}, {"attempts", s.attempts},
                          {"log", s.log}};
        if (s.error) js["error"] = error_object(*s.error);
        j["steps"].push_back(std::move(js));
    }
    if (report.error) j["error"] = error_object(*report.error);
    j["history"] = {{"before", report.history_before ? nlohmann::json(*report.history_before) : nlohmann::json()},
                    {"after", report.history_after ? nlohmann::json(*report.history_after) : nlohmann::json()}};
    j["changes"] = report.changes_summary;
    j["rolled_back"] = report.rolled_back;
    j["warnings"] = report.warnings;
    return j.dump(2) + "\n";
}

std::string plan_json(const engine::Plan& plan, const engine::Facts& facts,
                      const std::vector<engine::StepDecision>& decisions, const PlanState& state) {
    nlohmann::json j;
    j["schema"] = 1;
    j["recipe"] = plan.recipe->name;
    j["recipe_file"] = plan.recipe->file.string();
    j["venv"] = plan.venv.string();
    j["venv_exists"] = facts.python.has_value();
    if (facts.python) j["python"] = {{"version", facts.python->version}, {"ext_suffix", facts.python->ext_suffix}};
    j["installer"] = {{"name", plan.installer->name()}, {"identity", plan.installer->identity()}};
    j["notes"] = plan.notes;
    j["cut_short"] = state.cut_short ? nlohmann::json(state.cut_short_note) : nlohmann::json(nullptr);
    j["extras"] = nlohmann::json::array();
    for (const auto& e : state.extras) j["extras"].push_back({{"name", e.name}, {"version", e.version}});
    j["steps"] = nlohmann::json::array();
    for (const auto& s : plan.steps) {
        std::vector<std::string> argv;
        for (const auto& a : s.argv) argv.push_back(core::redact_text(a));
        std::map<std::string, std::string> env_set;
        for (const auto& [k, v] : s.env_set) env_set[k] = core::shown_value(k, v, plan.recipe->env_secret);
        nlohmann::json js{{"id", s.id},
                          {"kind", s.kind},
                          {"argv", argv},
                          {"cwd", s.cwd.string()},
                          {"env", {{"set", env_set}, {"unset", s.env_unset}}},
                          {"key", s.key.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.key)},
                          {"complete", s.complete},
                          {"timeout", s.timeout},
                          {"attempts", s.attempts},
                          {"optional", s.optional}};
        if (!s.note.empty()) js["note"] = s.note;
        steps::describe_step_json(s, js);
        js["verify"] = nlohmann::json::array();
        for (const auto& v : s.verify) js["verify"].push_back(v.describe());
        if (s.index < decisions.size()) {
            js["would"] = {{"action", engine::to_string(decisions[s.index].decision)},
                           {"reason", decisions[s.index].reason}};
            if (!decisions[s.index].changes.empty()) js["would"]["changes"] = decisions[s.index].changes;
        }
        j["steps"].push_back(std::move(js));
    }
    return j.dump(2) + "\n";
}

std::string error_json(const Error& error) {
    nlohmann::json j{{"schema", 1}, {"ok", false}, {"error", error_object(error)}};
    return j.dump(2) + "\n";
}

}  // namespace bootstrap::cli
