#pragma once
// Turning a rollback plan into installer commands: as few as the installers allow, so that the
// whole change is one resolution wherever it can be (uv and pip resolve and download everything
// before they change the venv, so one command that fails has changed nothing).
//
// Each package goes to the installer that installed it (its INSTALLER), else the default one.
// Per installer:
//   - index packages: `name==version`; one command per index list (an index chooses versions
//     for every name it serves, so two lists cannot share a command);
//   - wheel files (the original local wheel, the artifact store, a --find-links wheel): the
//     path itself. A path pins the bytes and asks no index, so they join the first index
//     command, else they get one of their own with --no-index (an offline restore);
//   - URL sources (`name @ url`) and editables (`-e dir`): one command per kind, with the
//     installer's default index for build dependencies.
// Every command is --no-deps. Packages installed now at an equal version must be reinstalled:
// uv gets --reinstall-package for just those (its --reinstall refreshes every cached index
// page and the interpreter facts), pip --force-reinstall (with --no-deps it touches only the
// named requirements).

#include <functional>
#include <string>
#include <vector>

#include "pyenv/installer.hpp"
#include "rollback/plan.hpp"

namespace bootstrap::rollback {

struct InstallBatch {
    std::string installer;  // "uv" / "pip"
    pyenv::InstallRequest request;
    std::vector<const RollbackInstall*> members;  // point into the plan
    /// Availability is known only once the installer resolves (index and URL sources); wheel
    /// files were found and rehashed by the plan, editables are local directories.
    bool resolves = false;
    std::string from;  // for messages: "index http://…", "local wheels", "index … and local wheels"
};

/// The installer arguments that install exactly `install`: `name==version`, a wheel path,
/// `name @ url` or `-e dir`.
[[nodiscard]] std::vector<std::string> requirement_args(const RollbackInstall& install);

/// The commands for `plan.install`, in the order to run them: index commands first (the first
/// command needs no dry run: if it fails, nothing changed), then URL, editable, and wheel-only
/// commands. `installer_for` names the installer ("uv"/"pip") for a target package.
[[nodiscard]] std::vector<InstallBatch> batch_installs(
    const RollbackPlan& plan, const std::function<std::string(const manifest::Package&)>& installer_for);

}  // namespace bootstrap::rollback
