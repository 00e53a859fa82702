#pragma once
// Installer backends (uv, pip) as argv builders. Both name the venv explicitly and are meant to
// run from a neutral working directory, so neither project discovery nor VIRTUAL_ENV can
// redirect them (README pitfalls P5, P7).

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "exec/environment.hpp"

namespace bootstrap::pyenv {

namespace fs = std::filesystem;

struct InstallRequest {
    std::vector<std::string> requirements;
    std::optional<std::string> index_url;
    std::vector<std::string> extra_index_urls;
    std::vector<std::string> find_links;
    bool upgrade = false;
    bool reinstall = false;
    bool no_deps = false;
    bool pre = false;
    bool no_index = false;  // only find_links (offline restores)
    bool dry_run = false;   // resolve and report, change nothing (uv; pip >= 22.2)
    /// Reinstall just these (by name) even when the same version is installed (uv only:
    /// `--reinstall-package`; pip's --force-reinstall would reinstall every dependency too).
    std::vector<std::string> reinstall_packages;
    /// Pins that later resolutions must keep (deliberate overrides of earlier steps): uv reads
    /// the file as `--override` (it replaces every dependency's requirement on those names),
    /// pip as `--constraint` (pip cannot override a pin; a conflict fails the resolution).
    std::optional<fs::path> overrides_file;
    /// Packages built against the venv (uv's `--no-build-isolation-package`): their build may
    /// import what the venv holds (torch). pip has no per-package switch: it ignores these.
    std::vector<std::string> no_build_isolation_packages;
};

/// Build one wheel from a source tree (PEP 517), for the venv's interpreter.
struct BuildRequest {
    fs::path project;                 // the directory holding pyproject.toml / setup.py
    fs::path out_dir;                 // where the wheel is written
    bool no_build_isolation = false;  // build with the venv's own packages (apex imports torch)
    /// Pins for the isolated build environment (`uv build --build-constraint`), "" for none.
    std::optional<fs::path> build_constraints;
    /// Where build dependencies come from (an install step's indexes; a build step's come from
    /// the environment): only `index_url`, `extra_index_urls`, `find_links` are read.
    std::optional<InstallRequest> sources;
    std::vector<std::pair<std::string, std::string>> config_settings;  // PEP 517, in order
};

struct NetworkOptions {
    int timeout = 30;  // seconds per read
    int retries = 3;
};

/// What to run: argv plus the environment changes the installer needs.
struct Command {
    std::vector<std::string> argv;
    exec::EnvMap env_set;
    std::vector<std::string> env_unset;
};

class Installer {
public:
    virtual ~Installer() = default;
    [[nodiscard]] virtual std::string name() const = 0;  // "uv" / "pip"
    /// What identifies this installer in step keys: program path, size and mtime (no subprocess).
    [[nodiscard]] virtual std::string identity() const = 0;
    /// The program that runs (uv, or the interpreter that creates pip venvs).
    [[nodiscard]] virtual fs::path program() const = 0;
    [[nodiscard]] virtual Command create_venv(const fs::path& venv, const std::string& python) const = 0;
    [[nodiscard]] virtual Command install(const fs::path& venv, const InstallRequest& request,
                                          const NetworkOptions& net) const = 0;
    /// Build a wheel: `uv build --wheel --python <venv python>` / `<venv python> -m pip wheel`.
    [[nodiscard]] virtual Command build_wheel(const fs::path& venv, const BuildRequest& request,
                                              const NetworkOptions& net) const = 0;
    /// The resolution of `request` for the venv's interpreter as a PEP 751 lock written to `out`
    /// (`uv pip compile --format pylock.toml`; its requirements read from `requirements_in`):
    /// which packages have no wheel for it, before anything is installed. Empty argv for pip.
    [[nodiscard]] virtual Command resolve(const fs::path& venv, const InstallRequest& request,
                                          const fs::path& requirements_in, const fs::path& out,
                                          const NetworkOptions& net) const = 0;
    /// Remove distributions (by name) from the venv without asking.
    [[nodiscard]] virtual Command uninstall(const fs::path& venv, const std::vector<std::string>& names) const = 0;
};

/// `uv` resolved on `path_var`; the error tells how to install it.
[[nodiscard]] Result<fs::path> find_uv(const std::string& path_var);

/// The backend by name ("uv" or "pip"). uv must be found on `path_var`; pip's interpreter for
/// venv creation is `python_request` itself when it is a path (holds a '/'; the venv step checks
/// that it exists), else `python<X.Y>` (then `python3`) from `path_var`. With `allow_missing` (for
/// `plan`), a program that is not found is kept by its bare name instead of failing.
[[nodiscard]] Result<std::unique_ptr<Installer>> make_installer(const std::string& name, const std::string& path_var,
                                                                const std::string& python_request,
                                                                bool allow_missing = false);

/// `uv sync` of a project into `venv` (UV_PROJECT_ENVIRONMENT names the venv explicitly).
[[nodiscard]] Command uv_sync(const fs::path& uv, const fs::path& project, const fs::path& venv,
                              const std::vector<std::string>& args, const NetworkOptions& net);

/// Identity of a program file for keys: "path size mtime_ns" ("path missing" when absent).
[[nodiscard]] std::string file_identity(const fs::path& program);

}  // namespace bootstrap::pyenv
