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

/// `$BOOTSTRAP_HOME`, default `$XDG_CACHE_HOME/bootstrap` or `~/.cache/bootstrap`.
[[nodiscard]] fs::path bootstrap_home(const std::map<std::string, std::string>& env);

class ArtifactStore {
public:
    explicit ArtifactStore(fs::path root) : m_root(std::move(root)) {}
    /// Copy a wheel into the store (no-op when present); returns its sha256.
    [[nodiscard]] Result<std::string> add(const fs::path& wheel);
    /// The stored wheel for a digest, if present and intact.
    [[nodiscard]] std::optional<fs::path> find(const std::string& sha256) const;
    [[nodiscard]] const fs::path& root() const { return m_root; }

private:
    fs::path m_root;
};

}  // namespace bootstrap::manifest
