#pragma once
// `run --recreate` replaces a venv only once the new one exists. The old venv's entries are
// moved aside into `.bootstrap/recreate-old/` (renames in one filesystem, so nothing is
// copied), the new venv is made in place (uv and `python -m venv` write the venv's own path
// into its scripts, so it cannot be made elsewhere and moved), and then:
//   success      the aside entries are removed;
//   failure      the partial new venv is removed and the old entries are moved back;
//   interrupted  (even by SIGKILL) the next venv step finds `recreate-old/` and moves the old
//                venv back first, so the venv is never left half-replaced.
// bootstrap's own state (`.bootstrap/`: journal, history, logs, the venv lock) never moves.

#include <functional>
#include <string>

#include "core/error.hpp"
#include "steps/resolved_step.hpp"

namespace bootstrap::steps {

/// Put back a venv whose recreation did not finish (a no-op when none is pending). The
/// returned flag says whether anything was restored.
[[nodiscard]] Result<bool> restore_unfinished_recreate(const fs::path& venv);

/// Whether `venv` may have its contents replaced (`run --recreate`). Refused, with a message
/// naming the path and why: `/`, a system directory, the home directory or one of its ancestors
/// (core::whole_directory_refusal), the directory of the recipe or one of its ancestors, the
/// current directory or one of its ancestors. `home`,
/// `recipe_dir` and `cwd` may be empty (unknown). Paths are compared after resolving symlinks.
[[nodiscard]] Status check_replaceable(const fs::path& venv, const fs::path& home, const fs::path& recipe_dir,
                                       const fs::path& cwd);

/// A recreation that did not finish waits to be undone (restore_unfinished_recreate would act).
[[nodiscard]] bool recreate_pending(const fs::path& venv);

/// Replace the venv's contents by what `create` makes; the old contents come back when it fails.
[[nodiscard]] Status recreate_venv(const fs::path& venv, const std::function<Status()>& create);

}  // namespace bootstrap::steps
