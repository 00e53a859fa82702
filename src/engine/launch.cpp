#include "engine/launch.hpp"

#include "exec/environment.hpp"
#include "exec/exec_image.hpp"

namespace bootstrap::engine {

exec::EnvMap launch_environment(const recipe::Recipe& recipe, const std::filesystem::path& venv,
                                const exec::EnvMap& caller) {
    exec::EnvMap env = caller;
    for (const auto& name : recipe.env_unset) env.erase(name);
    exec::enter_venv(env, venv);
    env["VENV"] = venv.string();
    return env;
}

Error launch_command(const std::vector<std::string>& command, const exec::EnvMap& env) {
    Error err = exec::replace_process(command, env);
    err.message = "launch: " + err.message;
    return err;
}

}  // namespace bootstrap::engine
