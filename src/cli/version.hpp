#pragma once
// The version `bootstrap --version` prints, generated at build time by cmake/version.cmake.

namespace bootstrap::cli {

/// "0.1.0 (c4d4646-dirty)": the project version, plus `git describe --always --dirty` when the
/// binary was built from a git checkout; just "0.1.0" when built from a tarball.
[[nodiscard]] const char* bootstrap_version();

}  // namespace bootstrap::cli
