#pragma once
// The explicit environment a child sees: a pass-through allowlist of the parent's variables
// plus the recipe's set/unset. Nothing else leaks in.
//
// Passed through (is_pass_through):
//   identity and locale  PATH HOME USER LOGNAME SHELL LANG LANGUAGE LC_* TZ TMPDIR TERM NO_COLOR
//   network              http_proxy https_proxy no_proxy all_proxy (lower and upper case),
//                        SSL_CERT_FILE SSL_CERT_DIR REQUESTS_CA_BUNDLE CURL_CA_BUNDLE
//   installers           PIP_* UV_*
//   GPU                  CUDA_* NVIDIA_* NCCL_* LD_LIBRARY_PATH
//   native builds        CC CXX CFLAGS CXXFLAGS LDFLAGS CPATH LIBRARY_PATH PKG_CONFIG_PATH
//   caches               XDG_CACHE_HOME XDG_CONFIG_HOME XDG_DATA_HOME
//   reproducibility      SOURCE_DATE_EPOCH
//   ourselves            BOOTSTRAP_*
// Deliberately not passed: VIRTUAL_ENV, PYTHONPATH, PYTHONHOME, PYTHONSTARTUP, CONDA_*,
// PIPENV_*, POETRY_* and the like. They redirect where an installer or interpreter reads and
// writes (an activated venv in the user's shell would make `uv pip install` target it instead
// of ours), so a build would depend on whichever shell it was started from. A recipe that
// really wants one sets it explicitly, which puts it in the step key.

#include <map>
#include <string>
#include <vector>

namespace bootstrap::exec {

using EnvMap = std::map<std::string, std::string>;

/// The current process environment as a map (entries without '=' are skipped).
[[nodiscard]] EnvMap current_environment();

/// True for variables a child inherits by default: the allowlist in the comment above.
[[nodiscard]] bool is_pass_through(const std::string& name);

/// The pass-through subset of `base`, then every name in `unset` erased, then `set` applied.
/// Explicit sets therefore win over unsets, and an unset can remove an allowlisted variable.
[[nodiscard]] EnvMap compose_environment(const EnvMap& base, const EnvMap& set,
                                         const std::vector<std::string>& unset);

}  // namespace bootstrap::exec
