#pragma once
// A build step's source, made local and pristine: a directory as it is, a git commit checked
// out once into `$BOOTSTRAP_HOME/sources/git/`, or an archive downloaded (checksummed) into
// `$BOOTSTRAP_HOME/sources/downloads/`. Builds never run in these: each build gets a copy.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "net/download.hpp"
#include "steps/executor.hpp"
#include "steps/resolved_step.hpp"

namespace bootstrap::steps {

/// Digest of a source tree: every file's relative path, executable bit and content (symlinks by
/// their target), skipping what builds and VCSs write (`.git`, `__pycache__`, `*.egg-info`, and
/// the top-level `build` and `dist`). Each file's stat stamp is remembered in `cache_dir`, so an
/// unchanged tree is only stat()ed. "missing" when `dir` does not exist.
[[nodiscard]] Result<std::string> tree_digest(const fs::path& dir, const fs::path& cache_dir);

/// Whether a build source's `subdirectory` stays inside the source tree (relative, no "..").
[[nodiscard]] bool subdirectory_inside(std::string_view subdirectory);

/// When a build step's time (its `timeout`) runs out; none without one.
using Deadline = std::optional<std::chrono::steady_clock::time_point>;

/// Where the pristine source is once fetched: a directory (path, git) or an archive file (url).
struct FetchedSource {
    fs::path location;
    bool is_archive = false;
    std::string note;  // "downloaded 12.3 MB", "cloned at 1a2b3c4d", "" when already there
};

/// Make the step's source local (see the file comment). Git: `git init` + a shallow fetch of
/// the commit (a full fetch when the server refuses one by id), checked to be that commit;
/// submodules when asked. Archives: libcurl with retries, resume, the sha256 check and
/// `[network] max_download`. Both are published by rename, so an interrupted fetch leaves
/// nothing half-made behind; one process fetches a given source at a time (a file lock), and
/// the temporaries of dead ones are removed. Neither runs past `deadline` (ErrorCode::timeout,
/// naming the step's timeout). Transfers slower than 1 KiB/s over 60 s fail (retryably);
/// `BOOTSTRAP_LOW_SPEED_TIME=<seconds>` in the step's environment shortens that window (tests).
[[nodiscard]] Result<FetchedSource> fetch_source(const ResolvedStep& step, StepContext& ctx,
                                                 const Deadline& deadline = std::nullopt);

/// A `url` source's download: its URL and sha256 into
/// $BOOTSTRAP_HOME/sources/downloads/<sha256>/<name>, with the step's [network] settings (no
/// deadline, no progress). Nothing is fetched when the file is there with that sha256, so an
/// image's build context carries the archive in (image/containerfile.hpp) and the build needs
/// neither the network nor libcurl for it.
[[nodiscard]] net::DownloadRequest archive_request(const ResolvedStep& step);

/// Put a copy of the source into `dest` (which must not exist): a directory is copied (its
/// top-level `build` and `dist` left out), an archive extracted. Returns the project directory:
/// `dest / subdirectory`, checked to hold pyproject.toml or setup.py.
[[nodiscard]] Result<fs::path> stage_source(const ResolvedStep& step, const FetchedSource& source,
                                            const fs::path& dest);

}  // namespace bootstrap::steps
