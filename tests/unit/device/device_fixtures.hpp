#pragma once
// Shared fixtures for the device tests: scoped environment variables (the stand-in NVIDIA
// libraries read theirs with getenv), executable scripts, and a real venv holding a stand-in
// `torch` package.

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "exec/environment.hpp"

namespace bootstrap::test {

namespace fs = std::filesystem;

/// Sets (or, with nullopt, unsets) one process environment variable; restores it on scope exit.
class ScopedEnv {
public:
    ScopedEnv(std::string name, std::optional<std::string> value);
    ~ScopedEnv();
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    std::string m_name;
    std::optional<std::string> m_old;
};

/// Write `body` to `path` with mode 0755 (parents created).
void write_script(const fs::path& path, const std::string& body);

/// A venv made once per test binary with `python3 -m venv --without-pip`, holding the stand-in
/// torch package (driven by FAKE_TORCH_* in the child's environment). nullopt, with `why` set,
/// when python3 or its venv module is missing.
const std::optional<fs::path>& fake_torch_venv(std::string* why = nullptr);

/// A minimal child environment: PATH=/usr/bin:/bin plus `extra`.
exec::EnvMap child_env(const exec::EnvMap& extra = {});

}  // namespace bootstrap::test
