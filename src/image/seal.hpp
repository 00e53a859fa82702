#pragma once
// `bootstrap seal`: a venv's `.bootstrap/` reduced to what a run's inputs decide, for an image
// layer (or any copy that must be the same bytes when built twice).
//
// A venv's state holds records (history, journal: steps, keys, owners, digests, index URLs;
// overrides) next to things that belong to this host and this moment: the venv lock (a pid),
// run logs (timings, temp paths), caches keyed on file stats (packages.cache, *.facts,
// torch-probe.json), the journal's RECORD stat stamps, its venv_state (a digest of those stamps)
// and its timings, and uv's `*.dist-info/uv_cache.json` (the ctime of the wheel a package was
// installed from by path, listed in RECORD). Sealing removes or resets the second kind, keeping
// the venv at its fixed point (engine/image_state.hpp): the journal's venv_state becomes a
// content digest and `.bootstrap/sealed` is written, so a later `plan --check` passes and a run
// that finds every step up to date (RECORDs rehashed, not trusted by stamp) writes nothing.

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::image {

namespace fs = std::filesystem;

struct SealReport {
    std::vector<std::string> removed;  // venv-relative paths removed (lock, logs, caches, uv_cache.json)
    size_t journal_steps = 0;          // journal entries whose stamps and timings were reset
};

/// Seal `venv` (see above). Takes the venv lock for the work (waiting up to `lock_timeout`
/// seconds) and empties the lock file last. The history, the journal's records and every
/// installed file but uv_cache.json stay; a RECORD loses only its uv_cache.json row (its digest
/// in manifests and the journal leaves that row out already, so it does not change).
[[nodiscard]] Result<SealReport> seal_venv(const fs::path& venv, double lock_timeout);

}  // namespace bootstrap::image
