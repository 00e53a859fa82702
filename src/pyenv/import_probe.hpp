#pragma once
// The import probe shared by step verification and `bootstrap doctor`: a Python script run as
// `<venv>/bin/python -c SCRIPT MODULE ATTR` that imports one module and prints the real
// exception and its root cause (the last link of __cause__/__context__), so a secondary error
// (Megatron's `name 'AutoTokenizer' is not defined`) never hides the first (no module `regex`).
//
// Output lines the callers read, all prefixed "bootstrap-verify: ":
//   import MOD failed: Type: message        exit 3
//   root cause: Type: message                (only when it differs from the first)
//   module MOD (file) has no attribute 'X'   exit 4
//   import MOD ok (file)                     exit 0

#include <filesystem>
#include <string>
#include <string_view>

#include "exec/process.hpp"

namespace bootstrap::pyenv {

inline constexpr std::string_view k_probe_prefix = "bootstrap-verify: ";

/// The probe script (argv[1] module, argv[2] attribute or "").
[[nodiscard]] const char *import_probe_script();

/// The probe as a child process of `python` (a venv's bin/python): cwd "/" so that a checkout
/// in the caller's directory cannot shadow the venv's modules, output captured, `env` as given.
/// With `preload_torch`, torch is imported first when it can be (extensions built with torch's
/// cpp_extension, apex's amp_C, find libc10 only then, which is how Megatron imports them).
/// The caller sets the timeout (and a log) and runs it.
[[nodiscard]] exec::ProcessSpec import_probe_spec(const std::filesystem::path& python,
                                                  const std::string& module, const std::string& attr,
                                                  exec::EnvMap env, bool preload_torch);

/// What a failed probe printed, parsed.
struct ImportFailure {
    std::string summary;        // the probe lines joined with "; " (prefix removed)
    std::string error;          // "ModuleNotFoundError: No module named 'regex'" (first)
    std::string root_cause;     // the last exception of the chain; == error when no chain
    std::string missing_module; // top-level module a ModuleNotFoundError names ("regex"), or ""
    bool missing_attribute = false;
};

/// Parse the probe's output (the whole captured text; non-probe lines are ignored).
[[nodiscard]] ImportFailure parse_import_probe(std::string_view output);

} // namespace bootstrap::pyenv
