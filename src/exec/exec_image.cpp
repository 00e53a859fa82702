#include "exec/exec_image.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "exec/process.hpp"

namespace bootstrap::exec {

ExecImage::ExecImage(const std::vector<std::string>& argv, const EnvMap& env) : m_args(argv) {
    m_entries.reserve(env.size());
    for (const auto& [name, value] : env) m_entries.push_back(name + "=" + value);
    m_argv.reserve(m_args.size() + 1);
    for (auto& arg : m_args) m_argv.push_back(arg.data());
    m_argv.push_back(nullptr);
    m_envp.reserve(m_entries.size() + 1);
    for (auto& entry : m_entries) m_envp.push_back(entry.data());
    m_envp.push_back(nullptr);
}

Error replace_process(const std::vector<std::string>& argv, const EnvMap& env) {
    if (argv.empty()) return Error{ErrorCode::usage, "no command to run", ""};
    auto path = env.find("PATH");
    const std::string path_var = path == env.end() ? std::string() : path->second;
    auto program = find_program(argv[0], path_var);
    if (program.empty())
        return Error{ErrorCode::not_found, fmt::format("{} not found on PATH {}", argv[0], path_var), ""};
    ExecImage image(argv, env);
    ::execve(program.c_str(), image.argv(), image.envp());
    return Error{ErrorCode::process, fmt::format("cannot exec {}: {}", program.string(), std::strerror(errno)), ""};
}

}  // namespace bootstrap::exec
