#pragma once
// `lock` of a package uv built from an sdist (the index had no wheel of it for the venv: docopt
// 0.6.2, or any release that ships only its source): the lock records the sdist (its file name,
// URL, index and sha256: a locked run installs `name==version --hash=sha256:<sdist>`, so the
// installer checks the sdist's bytes and builds it) and the wheel built from it here, as a
// record (manifest::k_built_note): its file name and, when uv's cache kept it, its sha256.

#include <optional>
#include <string>
#include <vector>

#include "lockfile/hash_check.hpp"
#include "lockfile/index_page.hpp"
#include "manifest/lockfile.hpp"
#include "manifest/manifest.hpp"
#include "steps/source_build.hpp"

namespace bootstrap::lockfile {

/// The sdist of `pkg`'s release that `files` (a project page) lists, if any.
[[nodiscard]] std::optional<IndexFile> find_release_sdist(const std::vector<IndexFile>& files,
                                                          const manifest::Package& pkg);

/// `lp` locked to `sdist` (listed with a sha256): its sdist, sha256 and URL; hash_source
/// "uv-cache" when uv's cache recorded the same sha256 for the sdist it downloaded, else
/// "index"; and the wheel built from it (built_wheel, built_sha256) as uv's cache has it, else
/// its file name from the installed tags with no digest.
/// `built`: what the venv's record says an install step built from this package's sdist
/// (steps/source_build.hpp): when its sdist sha256 is the index's, the lock takes its wheel,
/// wheel digest and build-cache key, and hash_source "build-cache".
void lock_sdist(const BytesAtHand& at_hand, const manifest::Package& pkg, const IndexFile& sdist,
                manifest::LockedPackage& lp, const steps::SourceBuilt* built = nullptr);

}  // namespace bootstrap::lockfile
