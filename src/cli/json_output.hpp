#pragma once
// `--json` documents on stdout.

#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "engine/fixed_point.hpp"
#include "engine/plan.hpp"
#include "engine/runner.hpp"
#include "engine/skip_rule.hpp"

namespace bootstrap::cli {

/// What `plan` says of the venv beside its steps.
struct PlanState {
    bool cut_short = false;  // an install a run did not see end awaits the files check
    std::string cut_short_note;
    std::vector<engine::Extra> extras;  // installed distributions no step accounts for
};

[[nodiscard]] std::string run_report_json(const engine::RunReport& report, const std::string& recipe);
[[nodiscard]] std::string plan_json(const engine::Plan& plan, const engine::Facts& facts,
                                    const std::vector<engine::StepDecision>& decisions, const PlanState& state);
/// `{"schema": 1, "ok": false, "error": error_object(error)}`: the document every command's
/// `--json` prints when it fails before it has anything else to say.
[[nodiscard]] std::string error_json(const Error& error);
/// `{"message", "detail", "exit_code"}`: the "error" member of every `--json` document.
[[nodiscard]] nlohmann::json error_object(const Error& error);

}  // namespace bootstrap::cli
