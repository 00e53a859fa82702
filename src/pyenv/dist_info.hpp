#pragma once
// Installed distributions, read straight from `*.dist-info` directories (no pip, no uv).

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "pyenv/marker.hpp"
#include "pyenv/requirement.hpp"
#include "pyenv/version.hpp"

namespace bootstrap::pyenv {

struct Distribution {
    std::string name;             // from METADATA, as written
    std::string normalized_name;  // PEP 503
    std::string version;          // as written in METADATA
    std::string dist_info_path;   // the *.dist-info directory (a string: a scan of thousands builds no path)
    [[nodiscard]] std::filesystem::path dist_info() const { return dist_info_path; }
    core::FileStamp record_stamp;  // stat of RECORD
    core::FileStamp dir_stamp;     // stat of the dist-info directory (its entries' names)
    std::string installer;         // INSTALLER file content ("uv", "pip"), "" if none
    bool requested = false;        // REQUESTED file present
    /// The Requires-Dist header values as written (a folded one joined with a space), read by
    /// the scan from the same METADATA headers as name and version; nullopt for a
    /// Distribution made another way (read_requires_dist then reads METADATA).
    std::optional<std::vector<std::string>> requires_dist;
    /// Why the dist-info cannot be used, "" when it can: "METADATA missing" (an install cut
    /// short, e.g. by a full disk), "METADATA is not a regular file (a FIFO)", "RECORD is larger
    /// than 64 MiB", ... Name and version then come from the directory name.
    std::string broken;
};

/// The most bytes read from one dist-info file (METADATA, RECORD, ...): real ones are KiBs to
/// a few MiB (RECORD of a large wheel); anything larger is treated as damaged.
inline constexpr std::uint64_t k_max_dist_info_file = 64ull * 1024 * 1024;

/// What a scan may take from an earlier one instead of opening METADATA, INSTALLER, REQUESTED
/// and RECORD: the Distribution it read from a dist-info whose directory stamp (size, mtime,
/// inode) is still the same. An install makes a new dist-info directory, and every file added
/// to, removed from or renamed into one (REQUESTED, a RECORD rewritten atomically, as pip, uv
/// and bootstrap do) changes its mtime; what it does not catch is a file edited in place, which
/// doctor's files check reports against RECORD's hashes. A memo must not offer an entry whose
/// stamp is so recent that a change in the same clock tick would leave it equal (PackageCache
/// trusts only entries read after that tick was over).
class ScanMemo {
public:
    virtual ~ScanMemo() = default;
    /// Fill `out` with the whole (never broken) distribution read from `site_packages`/`entry`
    /// when its directory had the stamp `dir`; false (and `out` as it was) when there is none.
    /// `out.dist_info_path` is left to the scan.
    [[nodiscard]] virtual bool recall(const std::filesystem::path& site_packages, std::string_view entry,
                                      const core::FileStamp& dir, Distribution& out) const = 0;
};

/// Every distribution in `site_packages`, keyed by normalised name. Reads only the METADATA
/// headers it needs (stops at the first blank line). With `only` (normalised names), reads just
/// the `*.dist-info` directories named for those. A broken dist-info (Distribution::broken) is
/// left out, unless `include_broken`: then it is listed, and wins over a whole one of the same
/// name. Never blocks on or reads more than k_max_dist_info_file bytes of a dist-info file.
/// With a `memo`, a dist-info whose stamp it recognises costs one stat call and no open.
[[nodiscard]] Result<std::map<std::string, Distribution>> scan_site_packages(const std::filesystem::path& site_packages,
                                                                             const std::vector<std::string>& only = {},
                                                                             bool include_broken = false,
                                                                             const ScanMemo* memo = nullptr);

/// The Requires-Dist lines of an installed distribution, parsed: those the scan kept
/// (Distribution::requires_dist), else read from METADATA. A METADATA that is not a regular
/// file, or whose headers run past k_max_dist_info_file, is an error naming it; so is a line
/// that does not parse.
[[nodiscard]] Result<std::vector<Requirement>> read_requires_dist(const Distribution& dist);

/// SHA-256 of the distribution's RECORD file (which itself lists a hash of every file), less
/// the rows of installer bookkeeping that changes with how, not what, was installed: uv's
/// `*.dist-info/uv_cache.json` holds the source wheel's ctime, so a copy never matches.
[[nodiscard]] Result<std::string> record_digest(const Distribution& dist);

/// The same digest, of RECORD text already in memory.
[[nodiscard]] std::string record_text_digest(std::string_view record_text);

/// record_text_digest, also leaving out the rows of files installed into the venv's scripts
/// directory (`../../../bin/NAME`): a console script's shebang names the venv's own interpreter,
/// so the same packages in two venvs at different paths differ only there. For comparing venvs;
/// never for deciding that a venv is exactly as recorded.
[[nodiscard]] std::string portable_record_text_digest(std::string_view record_text);

struct RecordDigests {
    std::string exact;     // record_text_digest
    std::string portable;  // portable_record_text_digest
};

/// Both digests of the distribution's RECORD, from one read. RECORD must be a regular file of
/// at most k_max_dist_info_file bytes (else an io error naming it).
[[nodiscard]] Result<RecordDigests> record_digests(const Distribution& dist);

/// Does the installed set satisfy `req` (and, transitively, the requirements of what satisfies
/// it, with markers evaluated in `env` and extras followed)? `why_not` gets a one-line reason.
/// Pre-releases: the installed version of `req` itself must pass its specifier with
/// `prereleases` (PEP 440 rules: a specifier naming a pre-release allows them; a bare name
/// accepts whatever is installed). Transitive dependencies accept installed pre-releases, as
/// `pip check` does: a resolver already chose them. A `name @ url` requirement is never
/// satisfied, since the installed files cannot be tied to the URL.
/// `allowed_conflicts` holds {dependent, dependency} pairs of normalised names whose pin the
/// recipe overrides on purpose (a step's `allow_conflicts`): that dependency only needs to be
/// installed, at any version.
[[nodiscard]] bool is_satisfied(const Requirement& req, const std::map<std::string, Distribution>& installed,
                                const MarkerEnv& env, bool prereleases, std::string* why_not,
                                const std::set<std::pair<std::string, std::string>>& allowed_conflicts = {});

/// Every installed distribution `requirements` need (normalised names, sorted): each one whose
/// marker holds in `env`, and what its installed distribution requires, transitively, with
/// extras followed. Names that are not installed are left out (the caller compares). Versions
/// are not checked: this is what a resolution of `requirements` brought into the venv.
[[nodiscard]] Result<std::vector<std::string>> installed_closure(const std::vector<Requirement>& requirements,
                                                                 const std::map<std::string, Distribution>& installed,
                                                                 const MarkerEnv& env);

}  // namespace bootstrap::pyenv
