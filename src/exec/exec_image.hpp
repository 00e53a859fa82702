#pragma once
// argv and envp as posix_spawn and execve take them, built once for both.

#include <string>
#include <vector>

#include "core/error.hpp"
#include "exec/environment.hpp"

namespace bootstrap::exec {

/// NUL-terminated argv/envp arrays that point into strings this object owns ("NAME=value").
class ExecImage {
public:
    ExecImage(const std::vector<std::string>& argv, const EnvMap& env);
    ExecImage(const ExecImage&) = delete;
    ExecImage& operator=(const ExecImage&) = delete;

    [[nodiscard]] char* const* argv() { return m_argv.data(); }
    [[nodiscard]] char* const* envp() { return m_envp.data(); }

private:
    std::vector<std::string> m_args;
    std::vector<std::string> m_entries;
    std::vector<char*> m_argv;
    std::vector<char*> m_envp;
};

/// Replace this process with `argv` (argv[0] looked up on `env`'s PATH) in exactly `env`.
/// Returns only on failure: not_found (naming the PATH searched) or process (exec's errno).
[[nodiscard]] Error replace_process(const std::vector<std::string>& argv, const EnvMap& env);

}  // namespace bootstrap::exec
