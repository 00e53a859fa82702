#pragma once
// Planning a rollback: what to remove and what to install, from where, so that a venv that now
// looks like `current` ends up exactly like `target`. Pure apart from reading the file system
// (the artifact store, --find-links directories, recorded local wheels): no subprocess, no
// network. Reachability of index and URL sources is checked by the engine with a dry run.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "manifest/artifacts.hpp"
#include "manifest/manifest.hpp"
#include "pyenv/dist_info.hpp"

namespace bootstrap::rollback {

namespace fs = std::filesystem;

/// Where a rollback may take packages from, besides what each package's Origin records.
struct RollbackSources {
    const manifest::ArtifactStore* store = nullptr;  // may be null: no store
    std::vector<fs::path> find_links;                // wheelhouse directories (--find-links), in order
    std::optional<std::string> index_url;            // --index-url: replaces the recorded index URLs
};

struct InstallSource {
    enum class Kind {
        original_file,  // the local wheel the package was installed from, still there
        artifact,       // the wheel kept in the artifact store
        find_links,     // a matching wheel in a --find-links directory
        index,          // name==version from index_urls
        direct_url,     // `name @ url` (remote archive or vcs)
        editable,       // `-e <dir>` (the source directory still exists)
    };
    Kind kind = Kind::index;
    fs::path wheel;                       // original_file, artifact, find_links
    std::vector<std::string> index_urls;  // index: first is --index-url, the rest extras
    std::string url;                      // direct_url: the requirement URL; editable: the dir
    /// "artifact store: /…/x.whl", "index http://…", "find-links: /w/x.whl", …
    [[nodiscard]] std::string describe() const;
    friend bool operator==(const InstallSource&, const InstallSource&) = default;
};
[[nodiscard]] const char* to_string(InstallSource::Kind kind);

struct RollbackInstall {
    std::string name;          // normalised
    std::string display_name;  // as in METADATA, used in requirements
    std::string version;
    std::string current;     // installed version now, "" when missing
    std::string reason;      // "missing", "1.1.0 -> 1.0.0", "reinstall: RECORD differs"
    bool reinstall = false;  // installed now at an equal version: the installer must be told
    InstallSource source;
    manifest::Package target;  // the package as the target records it
};

struct RollbackRemove {
    std::string name;
    std::string version;
};

struct Unreachable {
    std::string name;
    std::string version;
    std::string why;
};

struct RollbackPlan {
    std::vector<RollbackRemove> remove;    // sorted by name
    std::vector<RollbackInstall> install;  // sorted by name
    std::vector<Unreachable> unreachable;  // sorted by name
    [[nodiscard]] bool empty() const { return remove.empty() && install.empty(); }
    /// "- foo 1.0 (remove)", "~ demo-core 2.0.0 -> 1.0.0 from index http://…", "! x 1.0: why".
    [[nodiscard]] std::string format() const;
    /// "1 to remove, 3 to install" / "nothing to do".
    [[nodiscard]] std::string summary() const;
};

/// Compare and choose sources. A target package is installed when it is missing, has another
/// version, or has another RECORD digest (when both digests are known). Source order: the
/// original local wheel (if its sha256 matches a recorded artifact_sha256), the artifact
/// store, a --find-links wheel of the same name and version (and sha256, when recorded), the
/// index (--index-url, else the recorded index URLs), the recorded remote/vcs URL. A package
/// with none of these is listed in `unreachable` with the reason.
[[nodiscard]] RollbackPlan plan_rollback(const manifest::Manifest& target, const manifest::Manifest& current,
                                         const RollbackSources& sources);

/// How `actual`'s packages differ from `target`'s, one line per package, sorted by name:
/// "demo-core: 2.0.0 installed, expected 1.0.0", "regex 2024.1.0: missing", "click 8.1.7: not in
/// the target", "mylocal 1.0: RECORD differs (sha256 0123456789ab, expected ba9876543210)".
/// RECORD digests are compared when the target records one. Empty when they match.
[[nodiscard]] std::vector<std::string> package_mismatches(const manifest::Manifest& target,
                                                          const manifest::Manifest& actual);

/// What is wrong with `target` as a rollback target, one line per problem, by package name:
/// a key that is not a normalised PEP 503 name, a display name of another project, a version
/// that is not PEP 440, a record or artifact sha256 that is not 64 lower-case hex digits, a
/// URL with blanks.
/// Everything a rollback puts on an installer's command line comes from these fields, so they
/// are checked before anything changes. Empty when the target is valid.
[[nodiscard]] std::vector<std::string> target_problems(const manifest::Manifest& target);

/// The package an installed dist-info states, as a snapshot records it (RECORD digest, WHEEL
/// tags, direct_url.json origin; no engine annotations): for reading back only what a
/// rollback changed.
[[nodiscard]] Result<manifest::Package> read_installed_package(const pyenv::Distribution& dist);

/// The first wheel for `name` (normalised) at `version` (PEP 440 equality) in `dirs`;
/// among several in one directory, one whose tag equals `tag` wins, else the first by name.
[[nodiscard]] std::optional<fs::path> find_wheel(const std::vector<fs::path>& dirs, const std::string& name,
                                                 const std::string& version, const std::string& tag = {});

/// The local path of a `file://` URL (percent-decoded), or nullopt for other URLs.
[[nodiscard]] std::optional<fs::path> file_url_path(const std::string& url);

}  // namespace bootstrap::rollback
