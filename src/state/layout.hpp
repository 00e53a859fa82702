#pragma once
// Where bootstrap keeps its state in a venv: every path under `<venv>/.bootstrap/`, named once.
// What each file holds is its owner's business (the journal, the history, the caches); this
// says only where it is and which of it belongs to this host and moment (left out of a pack,
// removed by seal).

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::state {

namespace fs = std::filesystem;

/// The state directory's name in a venv.
inline constexpr std::string_view k_state_dir = ".bootstrap";

class Layout {
public:
    explicit Layout(fs::path venv) : m_venv(std::move(venv)) {}

    [[nodiscard]] const fs::path& venv() const { return m_venv; }
    [[nodiscard]] fs::path dir() const { return m_venv / k_state_dir; }  // .bootstrap/
    /// Whether the state directory is there: a venv bootstrap made (or began to make).
    [[nodiscard]] bool exists() const;

    // The run's record of the venv
    [[nodiscard]] fs::path lock() const { return dir() / "lock"; }             // the venv lock
    [[nodiscard]] fs::path journal() const { return dir() / "journal.json"; }  // steps' keys, outcomes
    [[nodiscard]] fs::path history() const { return dir() / "history"; }       // manifests, one per change
    [[nodiscard]] fs::path logs() const { return dir() / "logs"; }             // logs/<run id>/
    [[nodiscard]] fs::path run_logs(std::string_view run_id) const { return logs() / std::string(run_id); }
    /// A step that changes the venv is marked while it runs (engine/install_repair.hpp).
    [[nodiscard]] fs::path changing() const { return dir() / "changing"; }
    [[nodiscard]] fs::path changing_records() const { return dir() / "changing.records"; }

    // What steps hand their installer
    [[nodiscard]] fs::path overrides(std::string_view step_id) const {
        return dir() / "overrides" / (std::string(step_id) + ".txt");
    }
    [[nodiscard]] fs::path declared_overrides() const { return dir() / "declared-overrides.txt"; }
    /// A `--locked` run's requirements files.
    [[nodiscard]] fs::path locked() const { return dir() / "locked"; }
    /// The requirements file of a `--locked` run's install command `index` (0-based) of a step.
    [[nodiscard]] fs::path locked_requirements(std::string_view step_id, size_t index) const;
    /// The hashed requirements file an install step with `pylock` hands its installer.
    [[nodiscard]] fs::path pylock_requirements(std::string_view step_id) const {
        return dir() / "pylock" / (std::string(step_id) + ".txt");
    }

    // Stat-keyed caches and facts of this host (host-local: see is_host_local_state)
    [[nodiscard]] fs::path packages_cache() const { return dir() / "packages.cache"; }
    [[nodiscard]] fs::path verified_files_cache() const { return dir() / "verified-files.cache"; }
    [[nodiscard]] fs::path host_facts() const { return dir() / "host.facts"; }
    [[nodiscard]] fs::path python_facts() const { return dir() / "python.facts"; }
    [[nodiscard]] fs::path torch_facts() const { return dir() / "torch.facts"; }
    [[nodiscard]] fs::path torch_probe() const { return dir() / "torch-probe.json"; }
    /// Build-cache entries installed from here: another user's, copied to be checked, and
    /// builds a shared cache this user may not write could not take (host-local).
    [[nodiscard]] fs::path builds() const { return dir() / "builds"; }
    /// An install step's sdist builds: its resolution, the pinned build requirements and the
    /// wheels its installer takes (a --find-links directory), remade each time it runs.
    [[nodiscard]] fs::path source_builds_of(const std::string& step_id) const {
        return builds() / "from-source" / step_id;
    }
    /// What install steps built from sdists through the build cache, per package: the sdist, the
    /// key, the wheel (steps/source_build.hpp); `lock` records it.
    [[nodiscard]] fs::path source_builds() const { return dir() / "source-builds.json"; }

    // A venv step's --recreate (steps/venv_swap.hpp)
    [[nodiscard]] fs::path recreate_aside() const { return dir() / "recreate-old"; }
    [[nodiscard]] fs::path recreate_trash(long pid) const {
        return dir() / (std::string(k_recreate_trash_prefix) + std::to_string(pid));
    }
    static constexpr std::string_view k_recreate_trash_prefix = "recreate-trash-";

private:
    fs::path m_venv;
};

/// True for a path under the venv (relative, generic form) that belongs to this host and this
/// moment: `.bootstrap/lock`, `.bootstrap/logs[/...]`, `*.facts`, `*.cache`, `torch-probe.json`
/// and temp files under `.bootstrap/`. Shared by `pack` (left out) and seal (removed).
[[nodiscard]] bool is_host_local_state(const std::string& rel);

/// Remove what is_host_local_state names under `venv`/.bootstrap/, but the lock (whoever holds
/// it removes it last). Returns the venv-relative paths removed.
[[nodiscard]] Result<std::vector<std::string>> drop_host_local_state(const fs::path& venv);

}  // namespace bootstrap::state
