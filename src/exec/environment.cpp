#include "exec/environment.hpp"

#include <string_view>

#include <unistd.h>

#include "core/env_policy.hpp"

extern char** environ;

namespace bootstrap::exec {

EnvMap current_environment() {
    EnvMap env;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
        std::string_view text(*entry);
        auto eq = text.find('=');
        if (eq == std::string_view::npos) continue;
        // First occurrence wins, as getenv() does when a name appears twice.
        env.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
    }
    return env;
}

bool is_pass_through(const std::string& name) { return core::env_has_use(name, core::EnvUse::pass_through); }

EnvMap compose_environment(const EnvMap& base, const EnvMap& set, const std::vector<std::string>& unset) {
    EnvMap env;
    for (const auto& [name, value] : base)
        if (is_pass_through(name)) env.emplace(name, value);
    for (const auto& name : unset) env.erase(name);
    for (const auto& [name, value] : set) env.insert_or_assign(name, value);
    return env;
}

void enter_venv(EnvMap& env, const std::filesystem::path& venv, const std::set<std::string>& keep) {
    if (!keep.count("VIRTUAL_ENV")) env["VIRTUAL_ENV"] = venv.string();
    if (!keep.count("PATH")) {
        auto path = env.find("PATH");
        env["PATH"] = (venv / "bin").string() + (path == env.end() || path->second.empty() ? "" : ":" + path->second);
    }
    if (!keep.count("PYTHONHOME")) env.erase("PYTHONHOME");
}

EnvMap launch_environment(const EnvMap& caller, const std::filesystem::path& venv,
                          const std::vector<std::string>& unset) {
    EnvMap env = caller;
    for (const auto& name : unset) env.erase(name);
    enter_venv(env, venv);
    env["VENV"] = venv.string();
    return env;
}

}  // namespace bootstrap::exec
