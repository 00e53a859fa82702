#pragma once
// Facts about a venv's interpreter, gathered with ONE `python -c` query and cached in the venv
// (keyed on pyvenv.cfg and the interpreter binary), so a no-op run spawns no Python at all.

#include <filesystem>
#include <map>
#include <string>

#include "core/error.hpp"
#include "exec/environment.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/marker.hpp"

namespace bootstrap::pyenv {

namespace fs = std::filesystem;

struct InterpreterFacts {
    std::string executable;      // sys.executable
    std::string version;         // "3.11.7"
    std::string version_short;   // "3.11"
    std::string implementation;  // "cpython"
    std::string ext_suffix;      // ".cpython-311-x86_64-linux-gnu.so"
    std::string soabi;
    std::string include_dir;
    fs::path purelib;  // site-packages
    fs::path platlib;
    std::string platform;  // sysconfig.get_platform()
    MarkerEnv markers;     // PEP 508 marker variables
};

/// `<venv>/bin/python`.
[[nodiscard]] fs::path venv_python(const fs::path& venv);

/// key = value pairs of `<venv>/pyvenv.cfg`; not_found when it is not a venv.
[[nodiscard]] Result<std::map<std::string, std::string>> read_pyvenv_cfg(const fs::path& venv);

/// The Python version a venv was made with ("3.11.7"), from pyvenv.cfg (`version` or
/// `version_info`); empty when the file does not say.
[[nodiscard]] std::string venv_python_version(const std::map<std::string, std::string>& cfg);

/// Does "3.11.7" satisfy a recipe's request "3.11" (or "3.11.7", or ">=3.11")?
[[nodiscard]] bool python_version_matches(const std::string& actual, const std::string& wanted);

/// Facts for the venv's interpreter; reads `<venv>/.bootstrap/python.facts` when its stamp still
/// matches, else runs the interpreter once (with `env`) and rewrites the cache atomically.
/// With `update_cache` false nothing is written (for `plan`).
[[nodiscard]] Result<InterpreterFacts> venv_facts(const fs::path& venv, const exec::EnvMap& env,
                                                  bool update_cache = true);

/// Every distribution the venv's interpreter sees: purelib, then platlib where it differs and
/// exists (lib64 layouts); purelib wins for a name in both, as on sys.path. `only`: just these
/// normalised names; `include_broken` and `memo` as scan_site_packages has them (a broken
/// dist-info in either site wins over a whole one of the same name).
[[nodiscard]] Result<std::map<std::string, Distribution>> scan_venv_packages(const InterpreterFacts& facts,
                                                                             const std::vector<std::string>& only = {},
                                                                             bool include_broken = false,
                                                                             const ScanMemo* memo = nullptr);

}  // namespace bootstrap::pyenv
