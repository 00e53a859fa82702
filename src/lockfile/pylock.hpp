#pragma once
// PEP 751 `pylock.toml`, both ways: the standard lock format uv, pip, PDM and pipenv read and
// write, for the same lock bootstrap keeps as JSON (manifest/lockfile.hpp).
//
// Written (`bootstrap lock --format pylock`): lock-version 1.0, created-by "bootstrap",
// requires-python (the interpreter's minor version), environments (its sys_platform and
// platform_machine), and per package its name, version, index (credentials stripped) and one
// wheel: `url` on that index, or `path` for a wheel kept in the artifact store (a build's
// own), with its sha256; a package installed from an sdist is its [packages.sdist] (name, url,
// sha256), with the wheel built from it under [packages.tool.bootstrap] (built-wheel,
// built-sha256, built-note). An editable project is a `directory` (editable, no version, as the
// PEP wants for a source tree). What only bootstrap needs goes under [tool.bootstrap] (schema,
// recipe name and digest, Python version and platform, per step its coverage and closure,
// packages no step installs which are locked by version only) and [packages.tool.bootstrap]
// (the origin: kind, step, recorded index URLs, artifact sha256; a directory's version), so
// bootstrap reads its own pylock back as it reads its JSON.
//
// Read (`run --locked --lockfile X.toml`; the format through steps/pylock_data.hpp, the reader
// an install step's `pylock` uses too): any pylock whose major version is 1 and whose
// packages are wheels or sdists (an sdist-only package is installed `name==version` with the
// sdist's sha256: the installer checks its bytes and builds it; vcs- and archive-only entries
// are refused; a `directory` entry is left to the recipe's steps, as an editable project is). One written by another tool (no
// [tool.bootstrap]) has no recipe and no steps: Lockfile::foreign_tool says so.

#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "manifest/lockfile.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::lockfile {

namespace fs = std::filesystem;

/// The pylock.toml text of `lock`. Every URL is written without credentials ([tool.bootstrap]
/// keeps the recorded ones, redacted); nothing secret is written.
[[nodiscard]] std::string to_pylock(const manifest::Lockfile& lock);

/// Read a pylock.toml's text (`file` names it in messages and anchors relative paths). Every
/// problem is reported as FILE:LINE:COL (the first in the message, all in the detail): no
/// lock-version or created-by, a major version other than 1, a package without a name,
/// version or wheels, a wheel without url or path, a hash that is not sha256 hex.
[[nodiscard]] Result<manifest::Lockfile> parse_pylock(std::string_view text, const fs::path& file);

/// A lockfile of either format: a `.toml` file (or one that does not start with '{') is a
/// pylock, anything else bootstrap's JSON.
[[nodiscard]] Result<manifest::Lockfile> load_any_lockfile(const fs::path& file);

/// Whether `file` is read as a pylock.toml (load_any_lockfile's rule, by name only).
[[nodiscard]] bool is_pylock_name(const fs::path& file);

/// `pylock.<name>.toml` in `dir`, the PEP 751 name for a named lock (a '.' in the recipe's
/// name, which the PEP's name may not hold, becomes '-').
[[nodiscard]] fs::path pylock_path_in(const fs::path& dir, std::string_view recipe_name);

}  // namespace bootstrap::lockfile
