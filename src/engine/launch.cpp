#include "engine/launch.hpp"

#include "exec/exec_image.hpp"

namespace bootstrap::engine {

exec::EnvMap launch_environment(const recipe::Recipe& recipe, const std::filesystem::path& venv,
                                const exec::EnvMap& caller) {
    exec::EnvMap env = caller;
    for (const auto& name : recipe.env_unset) env.erase(name);
    auto old_path = env.find("PATH");
    env["PATH"] = (venv / "bin").string() +
                  (old_path == env.end() || old_path->second.empty() ? "" : ":" + old_path->second);
    env["VIRTUAL_ENV"] = venv.string();
    env["VENV"] = venv.string();
    env.erase("PYTHONHOME");
    return env;
}

Error launch_command(const std::vector<std::string>& command, const exec::EnvMap& env) {
    Error err = exec::replace_process(command, env);
    err.message = "launch: " + err.message;
    return err;
}

}  // namespace bootstrap::engine
