#pragma once
// Content-addressed store of wheels, `$BOOTSTRAP_HOME/artifacts/sha256/<2>/<64>/<wheel name>`:
// every wheel a step built or installed from a local path is kept, so rollback can restore it
// offline. Entries are published by rename; a store is safe to share between venvs and nodes.

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "core/error.hpp"

namespace bootstrap::manifest {

namespace fs = std::filesystem;

/// `$BOOTSTRAP_HOME`, default `$XDG_CACHE_HOME/bootstrap` or `~/.cache/bootstrap`.
[[nodiscard]] fs::path bootstrap_home(const std::map<std::string, std::string>& env);

/// `bootstrap_home(env) / "artifacts"`: the store every venv shares by default.
[[nodiscard]] fs::path artifact_store_root(const std::map<std::string, std::string>& env);

class ArtifactStore {
public:
    explicit ArtifactStore(fs::path root) : m_root(std::move(root)) {}
    /// Copy a wheel into the store (no-op when an entry of the same size is present); returns
    /// its sha256. The copy goes to a temp file in the entry's directory, is hashed while it is
    /// written (a wheel that changes meanwhile is refused), keeps the source's mtime (uv records
    /// it in RECORD), is fsynced and renamed into place, so concurrent adders are safe.
    [[nodiscard]] Result<std::string> add(const fs::path& wheel);
    /// The stored wheel for a digest, if present. Cheap: checks only that a non-empty `*.whl`
    /// was published under the digest (entries appear by rename); `verify` rehashes it.
    [[nodiscard]] std::optional<fs::path> find(const std::string& sha256) const;
    /// Full check: the entry exists and its bytes hash to `sha256` (not_found / io otherwise).
    [[nodiscard]] Status verify(const std::string& sha256) const;
    [[nodiscard]] const fs::path& root() const { return m_root; }

private:
    [[nodiscard]] fs::path entry_dir(const std::string& sha256) const;
    fs::path m_root;
};

}  // namespace bootstrap::manifest
