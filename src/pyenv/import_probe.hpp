#pragma once
// The import probe shared by step verification, `bootstrap doctor` and `bootstrap lint`: Python
// that imports one module and prints the real exception and its root cause (the last link of
// __cause__/__context__), so a secondary error (Megatron's `name 'AutoTokenizer' is not
// defined`) never hides the first (no module `regex`).
//
// Output lines the callers read, all prefixed "bootstrap-verify: ":
//   import MOD failed: Type: message        exit 3
//   root cause: Type: message                (only when it differs from the first)
//   root cause at: FILE:LINE                 (where the root exception was raised)
//   module MOD (file) has no attribute 'X'   exit 4
//   import MOD ok (file)                     exit 0
//
// One rule decides what is imported first (probe_preload): torch when the module's own shared
// object needs libc10/libtorch* (DT_NEEDED), plus what a verify clause's `preload` names.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exec/process.hpp"

namespace bootstrap::pyenv {

inline constexpr std::string_view k_probe_prefix = "bootstrap-verify: ";

/// The probe script (argv[1] module, argv[2] attribute or "", argv[3] optional: modules to
/// import first, comma-separated).
[[nodiscard]] const char* import_probe_script();
/// The Python function behind it, `_bs_probe(mod, attr)` returning the exit code (the server
/// defines it too).
[[nodiscard]] const char* import_probe_function();

/// What to import before a probed module, and why (the one rule for verify, doctor and lint).
struct ProbePreload {
    std::vector<std::string> modules;  // imported first, in this order ("torch")
    std::string reason;                // "amp_C.cpython-311-x86_64-linux-gnu.so needs libc10.so"
};

/// The rule: the `declared` modules (a verify clause's `preload`) and torch when the shared
/// object `module` resolves to in `search_dirs` names libc10* or libtorch* in its DT_NEEDED
/// (read with libelf). A pure-Python module, a package or an unreadable file adds nothing;
/// `torch` itself never preloads torch.
[[nodiscard]] ProbePreload probe_preload(const std::string& module,
                                         const std::vector<std::filesystem::path>& search_dirs,
                                         const std::vector<std::string>& declared = {});

/// The extension module file (`NAME.<tag>.so`, `NAME.so`) `module` ("a.b") resolves to in the
/// first of `search_dirs` that has it; empty when the first match is Python (a package or a
/// .py file) or none has it.
[[nodiscard]] std::filesystem::path find_extension_module(const std::string& module,
                                                          const std::vector<std::filesystem::path>& search_dirs);

/// `site_packages` followed by the existing directories its *.pth files add (editable
/// installs), in file-name order; empty when `site_packages` is empty.
[[nodiscard]] std::vector<std::filesystem::path> module_search_dirs(const std::filesystem::path& site_packages);

/// The probe as a child process of `python` (a venv's bin/python): cwd "/" so that a checkout
/// in the caller's directory cannot shadow the venv's modules, output captured, `env` as given,
/// `preload` imported first (failures there are left to the module's own import to report).
/// `equals`, when set: `str(MOD.ATTR)` must be exactly that (exit 5 and a line saying both
/// otherwise). The caller sets the timeout (and a log) and runs it.
[[nodiscard]] exec::ProcessSpec import_probe_spec(const std::filesystem::path& python, const std::string& module,
                                                  const std::string& attr, exec::EnvMap env,
                                                  const std::vector<std::string>& preload,
                                                  const std::optional<std::string>& equals = {});

/// "import MOD" / "import MOD.ATTR" (+ " after torch"): what a probe's argv stands for in an
/// error's `command:` line (the script itself says nothing to a reader).
[[nodiscard]] std::string describe_probe(const std::filesystem::path& python, const std::string& module,
                                         const std::string& attr, const std::vector<std::string>& preload,
                                         const std::optional<std::string>& equals = {});

// ---- many probes, one interpreter ------------------------------------------------------------

/// One import for run_probe_server.
struct ProbeRequest {
    std::string module;
    std::string attr;
};

/// How each probe ended: what it printed, and its exit status, signal or timeout.
struct ProbeServerResult {
    std::vector<exec::ProcessResult> results;  // in request order
    std::vector<std::string> preloaded;        // the preloads that imported in the server
    double seconds = 0;
};

/// Run every request in a child forked from one interpreter that imported `preload` first
/// (torch once, not once per module), up to `jobs` at a time, each killed after `timeout`: a
/// crash, `sys.exit` or hang in one import touches no other. Should a preload crash the
/// server or take longer than `timeout`, it is started again without preloads. Error: the interpreter cannot run at all
/// (argv, exit status, its last lines).
[[nodiscard]] Result<ProbeServerResult> run_probe_server(const std::filesystem::path& python,
                                                         const std::vector<ProbeRequest>& requests,
                                                         const exec::EnvMap& env,
                                                         const std::vector<std::string>& preload, size_t jobs,
                                                         std::chrono::milliseconds timeout);

/// What a failed probe printed, parsed.
struct ImportFailure {
    std::string summary;         // the probe lines joined with "; " (prefix removed)
    std::string error;           // "ModuleNotFoundError: No module named 'regex'" (first)
    std::string root_cause;      // the last exception of the chain; == error when no chain
    std::string root_cause_at;   // "FILE:LINE" where the root exception was raised, or ""
    std::string missing_module;  // top-level module a ModuleNotFoundError names ("regex"), or ""
    /// The module a root cause such as "cannot import name 'X' from 'M'" or "module 'M' has no
    /// attribute 'X'" blames ("M"), or "".
    std::string blamed_module;
    bool missing_attribute = false;
};

/// Parse the probe's output (the whole captured text; non-probe lines are ignored).
[[nodiscard]] ImportFailure parse_import_probe(std::string_view output);

}  // namespace bootstrap::pyenv
