#pragma once
// `bootstrap lint`: a training configuration checked against a recipe's [[lint]] rules.
//
// Flags are compared after normalize_flag ('_' -> '-') and after mapping every alias to its
// canonical name, so one rule covers Megatron branches that renamed a flag. A rule applies when
// all its `when` conditions hold and, with `unless_import`, the module fails to import in the
// venv; an import whose result is unknown (no venv given) turns the rule into one info finding.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "doctor/flags.hpp"
#include "exec/environment.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::doctor {

/// Canonical flag names: built-in pairs plus a recipe's [flag_aliases].
class FlagAliases {
public:
    /// The built-in groups (Megatron renamed these flags between branches):
    /// --enable-hyper-connections = --enable-mhc-connections, --num-residual-streams =
    /// --mhc-num-residual-streams, --cuda-graph-scope = --cuda-graph-modules.
    FlagAliases();
    /// Add a group; a flag already in a group moves to this one (recipe entries win).
    void add(const std::string& canonical, const std::vector<std::string>& aliases);
    /// The canonical form of a (normalized) flag name.
    [[nodiscard]] std::string canonical(const std::string& flag) const;
    /// Other spellings of a canonical flag, for messages ("" when none).
    [[nodiscard]] std::string spellings(const std::string& canonical) const;

private:
    std::map<std::string, std::string> m_to_canonical;
};

/// Built-in aliases plus the recipe's.
[[nodiscard]] FlagAliases aliases_for(const recipe::Recipe& recipe);

/// Whether a Python module imports in the target venv.
struct ImportFact {
    enum class State { imports, fails, unknown };
    State state = State::unknown;
    std::string detail;  // fails: the last line of the error; unknown: why
};

/// Answers import questions; a seam so tests can inject facts.
class ImportProbe {
public:
    virtual ~ImportProbe() = default;
    [[nodiscard]] virtual ImportFact can_import(const std::string& module) = 0;
};

/// Runs `<venv>/bin/python -c "import torch (if it can); import MODULE"` for each module in its
/// own interpreter, cwd "/", the pass-through environment; results are cached per module.
class VenvImportProbe final : public ImportProbe {
public:
    explicit VenvImportProbe(std::filesystem::path venv) : m_venv(std::move(venv)) {}
    [[nodiscard]] ImportFact can_import(const std::string& module) override;

private:
    std::filesystem::path m_venv;
    std::map<std::string, ImportFact> m_cache;
};

/// No venv given: every import is unknown.
class UnknownImportProbe final : public ImportProbe {
public:
    [[nodiscard]] ImportFact can_import(const std::string& module) override;
};

/// One problem found. `evidence` lists where (first: the offending flag or line), "file:line:
/// text" or "environment: NAME=value".
struct Finding {
    std::string rule;
    recipe::Severity severity = recipe::Severity::error;
    std::string message;
    std::vector<std::string> evidence;
    std::string explain;
    std::string fix;
    std::string rule_loc;  // where the rule is written in the recipe
};

struct LintInput {
    const TrainingConfig* config = nullptr;
    const std::vector<recipe::LintRule>* rules = nullptr;
    const FlagAliases* aliases = nullptr;
    ImportProbe* imports = nullptr;
    /// The environment the training would start from (the caller's); variables set in it count
    /// for `forbid_env` like assignments in the config script.
    exec::EnvMap environment;
};

/// Evaluate every rule; findings in rule order.
[[nodiscard]] std::vector<Finding> lint_config(const LintInput& input);

/// Convenience: the recipe's rules and aliases.
[[nodiscard]] std::vector<Finding> lint_config(const TrainingConfig& config, const recipe::Recipe& recipe,
                                               ImportProbe& imports, const exec::EnvMap& environment);

[[nodiscard]] size_t count_severity(const std::vector<Finding>& findings, recipe::Severity severity);

/// Text for a terminal:
///   error [rule-id] message
///     at: file:line: text
///     why: ...
///     fix: ...
[[nodiscard]] std::string format_findings(const std::vector<Finding>& findings);

}  // namespace bootstrap::doctor
