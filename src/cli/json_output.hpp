#pragma once
// `--json` documents on stdout.

#include <string>

#include "core/error.hpp"
#include "engine/plan.hpp"
#include "engine/runner.hpp"
#include "engine/skip_rule.hpp"

namespace bootstrap::cli {

[[nodiscard]] std::string run_report_json(const engine::RunReport& report, const std::string& recipe);
[[nodiscard]] std::string plan_json(const engine::Plan& plan, const engine::Facts& facts,
                                    const std::vector<engine::StepDecision>& decisions);
[[nodiscard]] std::string error_json(const Error& error);

}  // namespace bootstrap::cli
