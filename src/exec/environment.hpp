#pragma once
// The explicit environment a child sees: a pass-through allowlist of the parent's variables
// plus the recipe's set/unset. Nothing else leaks in.

#include <map>
#include <string>
#include <vector>

namespace bootstrap::exec {

using EnvMap = std::map<std::string, std::string>;

/// The current process environment as a map.
[[nodiscard]] EnvMap current_environment();

/// True for variables a child inherits by default: PATH, HOME, USER, LANG, LC_*, TZ, TMPDIR,
/// TERM, proxies and CA bundles, CUDA_*, NVIDIA_*, LD_LIBRARY_PATH, UV_*, PIP_*, and a few more.
[[nodiscard]] bool is_pass_through(const std::string& name);

/// allowlisted(base) + set - unset (an unset name also removes one that `set` added earlier
/// in the same call only if it was not set explicitly: explicit sets win over unsets).
[[nodiscard]] EnvMap compose_environment(const EnvMap& base, const EnvMap& set,
                                         const std::vector<std::string>& unset);

}  // namespace bootstrap::exec
