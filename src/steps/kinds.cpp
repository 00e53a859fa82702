// The registry of step kinds: one line per kind.

#include <fmt/format.h>

#include "exec/process.hpp"
#include "steps/kind.hpp"

namespace bootstrap::steps {

extern const Kind k_venv_kind;
extern const Kind k_install_kind;
extern const Kind k_sync_kind;
extern const Kind k_run_kind;
extern const Kind k_check_kind;
extern const Kind k_pybind11_kind;
extern const Kind k_build_kind;

namespace {

const Kind* const k_kinds[] = {
    &k_venv_kind, &k_install_kind, &k_sync_kind, &k_run_kind, &k_check_kind, &k_pybind11_kind,
    &k_build_kind,
};

}  // namespace

const Kind& kind_of(recipe::StepKind kind) {
    for (const Kind* k : k_kinds)
        if (k->kind == kind) return *k;
    // Every recipe::StepKind is registered above; the unit tests check each one.
    return k_check_kind;
}

Result<std::vector<std::string>> PlanContext::texts(const std::vector<recipe::Text>& ts,
                                                    ResolvedStep& step) {
    std::vector<std::string> values;
    for (const auto& t : ts) {
        BS_TRY(auto v, text(t, step));
        values.push_back(std::move(v));
    }
    return values;
}

std::string program_identity(const std::string& program) {
    std::error_code ec;
    fs::path real = fs::canonical(program, ec);
    return ec ? program + " (not found)" : pyenv::file_identity(real);
}

std::string on_path(const std::string& program, const exec::EnvMap& env) {
    if (program.find('/') != std::string::npos) return program;
    auto it = env.find("PATH");
    auto found = exec::find_program(program, it == env.end() ? "" : it->second);
    return found.empty() ? program : found.string();
}

}  // namespace bootstrap::steps
