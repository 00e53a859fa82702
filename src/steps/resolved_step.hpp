#pragma once
// A step after placeholder expansion: exactly what will run, where, with which environment.
// Built by engine/plan; executed by the executors in this module.

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/key.hpp"
#include "device/arch.hpp"
#include "exec/environment.hpp"
#include "pyenv/installer.hpp"
#include "pyenv/requirement.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::steps {

namespace fs = std::filesystem;

/// Where a `build` step's source comes from: exactly one of a local directory, a git URL at a
/// pinned commit, or an archive URL with its sha256.
struct BuildSource {
    enum class Kind { path, git, url };
    Kind kind = Kind::path;
    recipe::Text location;                     // the directory, the git URL or the archive URL
    std::optional<recipe::Text> rev;           // git: a full commit id (40 or 64 hex digits)
    std::optional<recipe::Text> sha256;        // url: required, 64 hex digits
    std::optional<recipe::Text> subdirectory;  // the project inside the source tree
    bool submodules = false;                   // git: also fetch submodules at their recorded commits
    recipe::SourceLoc loc;
};

/// A clause's values that ResolvedVerify has no field for: a clause that needs them derives its
/// payload from this in its own file (steps/verify_<name>.cpp) and reads it back with
/// ResolvedVerify::payload_as<T>().
struct ClausePayload {
    virtual ~ClausePayload() = default;
};

/// A verify clause after expansion. Its clause (steps/verify_clause.hpp) describes and runs it;
/// the fields after `target` are the built-in clauses' (tests and the pybind11 kind build them
/// field by field), `payload` any other clause's.
struct ResolvedVerify {
    std::string kind;     // the clause's name ("import"): steps::clause_of(kind)
    std::string target;   // module or file path; cuda_arch: the arch ("9.0")
    std::string attr;     // import only, may be empty
    std::string library;  // cuda_arch: a module name, or an absolute path; elf_symbol: a glob
    bool library_is_module = false;
    std::string path_entry;  // import: a directory put first on sys.path (pybind11's output dir)
    /// import: a PEP 440 specifier (canonical, "<3,>=2.1") that the distribution providing the
    /// module must satisfy; "" = any version.
    std::string version = {};
    /// import: modules the recipe has imported first (`preload`), before the probe rule's own.
    std::vector<std::string> preload = {};
    /// import with attr: the value str(module.attr) must have.
    std::optional<std::string> equals = {};
    /// A clause's own values (null for the built-in clauses).
    std::shared_ptr<const ClausePayload> payload = {};
    /// "import transformers.AutoTokenizer", "import torch version >=2.11", "file /x",
    /// "cuda_arch 9.0 in module te", "elf_symbol cublasLtX in nvidia/**/libcublasLt.so.13"
    /// (the clause's describe; the step key hashes it).
    [[nodiscard]] std::string describe() const;
    template <class T>
    [[nodiscard]] const T* payload_as() const {
        return dynamic_cast<const T*>(payload.get());
    }
};

/// A `build` step after expansion; steps/build.hpp says what runs.
struct BuildSpec {
    BuildSource::Kind source_kind = BuildSource::Kind::path;
    std::string location;  // path: absolute directory; git / url: the URL (may hold credentials)
    /// `location` as it may be shown, logged, written or hashed: credentials `***`
    /// (core::redact_text). Only the fetch itself uses `location`.
    [[nodiscard]] std::string location_shown() const;
    std::string rev;           // git: the full commit id
    std::string sha256;        // url: the archive's sha256
    std::string subdirectory;  // the project inside the source tree ("" = its root)
    bool submodules = false;
    /// `run --locked`: every locked package's pin, given to the wheel's install as overrides so
    /// its dependencies resolve to the lock (not to a pin the lock overrode on purpose).
    std::vector<std::string> locked_pins;
    /// The indexes installing the built wheel resolves its dependencies from (redacted): the
    /// origin recorded for what that install brings in.
    std::vector<std::string> index_urls;
    /// Plan-time identity of the source, part of the step key: "git URL@REV", "sha256 HEX" or
    /// "tree HEX" (a digest of the directory's files; see steps::tree_digest).
    std::string source_identity;
    pyenv::BuildRequest request;                   // project / out_dir are filled in when the step runs
    std::vector<std::string> abi_versions;         // "torch 2.11.0+cu130" / "torch not installed"
    std::string torch_version;                     // "" when torch is not an installed ABI package
    std::string torch_record_stamp;                // stat of torch's RECORD: a reinstall changes it
    fs::path home;                                 // $BOOTSTRAP_HOME: sources/ and builds/ live here
    std::map<std::string, std::string> trust_env;  // BOOTSTRAP_TRUSTED_KEYS when set (not a key input)
    std::shared_ptr<const pyenv::Installer> installer;
    pyenv::NetworkOptions net;
    int download_attempts = 4;           // [network] retries + 1, for archives and git
    uint64_t max_download = 4ull << 30;  // [network] max_download, for archives
    // The venv's interpreter, as the plan knew it (part of the build-cache key).
    std::string python_version;
    std::string python_implementation;
    std::string ext_suffix;
    std::string platform;
    /// Deliberate overrides by earlier install steps, kept when the built wheel is installed, as
    /// an install step keeps them (InstallSpec::overrides; written to `overrides_file`).
    std::vector<std::pair<std::string, std::string>> overrides;
    std::optional<fs::path> overrides_file;
    /// The arches a `{device.*}` value of this step stands for: the pre-build checks (torch has
    /// kernels for them, nvcc matches torch) run against them before building.
    std::optional<device::ArchChoice> archs;
};

/// A `venv` step after expansion.
struct VenvSpec {
    bool recreate = false;  // replace an existing venv (its .bootstrap state is kept)
    std::string python;     // the Python the recipe asks for ("3.12")
};

/// What an install step needs to build its sdists through the build cache
/// (steps/source_build.hpp): uv's resolution says which packages have no wheel for the venv.
struct SourceBuildSpec {
    fs::path home;                                 // $BOOTSTRAP_HOME: builds/ and sources/
    std::map<std::string, std::string> trust_env;  // BOOTSTRAP_TRUSTED_KEYS when set
    std::shared_ptr<const pyenv::Installer> installer;
    pyenv::NetworkOptions net;
    int download_attempts = 4;
    uint64_t max_download = 4ull << 30;
    /// Normalised names built against the venv (`no_build_isolation_package`).
    std::vector<std::string> against_venv;
};

/// A package a lock installs from its sdist: built through the build cache before its batch.
struct LockedSdist {
    std::string name;  // normalised
    std::string version;
    std::string file;  // the sdist's file name
    std::string url;   // credentials put back when the index needs them
    std::string sha256;
    std::string key;  // the build-cache key the lock recorded ("" when none)
};

/// `run --locked`: one installer command of a locked install step: the locked packages that
/// came from one list of indexes (asked the same way, so the same files are chosen), plus wheel
/// files by path.
struct LockedBatch {
    std::optional<std::string> index_url;  // credentials put back; nullopt with no_index
    std::vector<std::string> extra_index_urls;
    bool no_index = false;          // only wheel files
    std::string indexes_shown;      // redacted, for the plan and the key
    fs::path file;                  // its requirements file, written before it runs
    std::string text;               // pinned lines with --hash
    std::vector<std::string> argv;  // the installer command (the install kind makes it)
    /// Per package (normalised name): where the lock names it and what it pins ("FILE:LINE: sdist
    /// x-1.0.tar.gz sha256 H"); a failed hash check names it.
    std::map<std::string, std::string> locked_at{};
    /// Its packages locked by their sdist: built (or found) in the build cache, then installed
    /// from there; their lines in `text` take the built wheel's sha256 too.
    std::vector<LockedSdist> sdists{};
};

/// A requirement a later install step overrides on purpose (InstallSpec::later_overrides).
struct LaterOverride {
    std::string step;         // its id
    std::string name;         // normalised
    std::string requirement;  // as the recipe writes it ("rich==15.0.0")
    friend bool operator==(const LaterOverride&, const LaterOverride&) = default;
};

/// An install step's `pylock` after expansion (steps/pylock_data.hpp): what its installer
/// command (`--no-deps -r FILE --require-hashes`) installs.
struct PylockInstall {
    std::string path;    // the pylock.toml (absolute)
    std::string sha256;  // of its content: the step key hashes it
    size_t packages = 0;
    fs::path file;     // the requirements file, written right before the step runs
    std::string text;  // its pins (or wheel files), each with its --hash=sha256 lines
};

/// An `install` step after expansion.
struct InstallSpec {
    std::vector<pyenv::Requirement> requirements;
    pyenv::InstallRequest request;  // what the installer is asked (structured, never re-parsed)
    /// The indexes the installer asks (pyenv/index_config.hpp), default first, credentials
    /// redacted; recorded as the origin of what the step installs.
    std::vector<std::string> index_urls;
    /// --locked: one installer command per batch of the locked closure; the first one's argv
    /// is the step's argv.
    std::vector<LockedBatch> locked;
    bool locked_run = false;
    /// `pylock`: the lock's pins are `requirements` and the command installs this file (unset
    /// under --locked, where the lockfile decides as for any install step).
    std::optional<PylockInstall> pylock;
    bool upgrade = false;
    bool reinstall = false;
    bool pre = false;
    /// Deliberate overrides by earlier install steps (`upgrade` or `allow_conflicts`), as
    /// {step id, normalised name}: right before this step runs, each one's installed version is
    /// written as `name==version` to `request.overrides_file`, so that this step's resolution
    /// keeps it (engine/runner.cpp). Empty when no earlier step overrides anything.
    std::vector<std::pair<std::string, std::string>> overrides;
    /// What later install steps override on purpose (uv only: pip cannot override a pin), as
    /// written in the recipe: when this step runs again it keeps their choice (the installed
    /// version, while it satisfies the later step) instead of undoing it, so the later step does
    /// not have to run again to redo it (rich 15 -> 13.7.1 -> 15 in one run). Also written to
    /// `request.overrides_file`.
    std::vector<LaterOverride> later_overrides;
    /// Set with uv: packages of the resolution that only have an sdist are built through the
    /// build cache before the installer runs.
    std::optional<SourceBuildSpec> source_builds;
};

/// A `sync` step after expansion: its argv says everything.
struct SyncSpec {
    fs::path lock;  // the project's uv.lock (`uv sync` writes it when missing)
};

/// The registries a uv.lock names (`source = { registry = "URL" }`), the one most packages come
/// from first, redacted: where a sync step's packages were installed from, recorded as their
/// origin so rollback can fetch them again. Read when asked (after the step ran, the lock
/// exists); none when it is missing.
[[nodiscard]] std::vector<std::string> lock_registries(const fs::path& lock);

/// A `run` step after expansion.
struct RunSpec {
    std::string creates;              // skip when this path exists
    std::vector<std::string> unless;  // skip when this argv exits 0
};

/// A `check` step: only verify clauses.
struct CheckSpec {};

/// A `pybind11` step: argv compiles to `output` (written to a temp name first, then renamed);
/// with `includes` non-empty, its output (`python -m pybind11 --includes`) is inserted at
/// `includes_at` in argv when the step runs.
struct Pybind11Spec {
    std::string output;
    std::vector<std::string> includes;
    size_t includes_at = 0;
    std::string source_digest;  // sha256 of the source ("missing" if none)
};

/// A payload of a kind that has no alternative of its own in KindSpec: such a kind derives its
/// payload from this in its own file and reads it back with ResolvedStep::payload<T>().
struct KindPayload {
    virtual ~KindPayload() = default;
};
struct OtherSpec {
    std::shared_ptr<const KindPayload> payload;
};

/// One alternative per built-in step kind (steps/kind.hpp), and OtherSpec for the rest (a new
/// kind needs no edit here); the order does not matter.
using KindSpec = std::variant<CheckSpec, VenvSpec, InstallSpec, SyncSpec, RunSpec, Pybind11Spec, BuildSpec, OtherSpec>;

/// The position of `T` in KindSpec (Kind::spec checks a step's payload against its kind).
template <class T, class... Ts>
constexpr size_t spec_index_in(const std::variant<Ts...>*) {
    size_t i = 0;
    bool found = false;
    ((found = found || std::is_same_v<T, Ts>, i += found ? 0 : 1), ...);
    return i;
}
template <class T>
inline constexpr size_t k_spec_index = spec_index_in<T>(static_cast<const KindSpec*>(nullptr));

/// A file or directory on this machine that a step reads (a sync project, a build's source
/// tree or local git repository, a pybind11 source, find-links): what an image's build
/// context must carry (image/containerfile.hpp).
struct LocalInput {
    std::string path;  // as the step will use it (absolute, or as the recipe resolves it)
    bool directory = true;
    bool repository = false;  // a local git repository: its .git is part of it
    std::string what;         // "project", "source directory", ...
    recipe::SourceLoc loc;    // where the recipe names it
};

struct ResolvedStep {
    const recipe::Step* source = nullptr;  // the recipe step (for ids, locations, flags)
    std::string id;
    std::string kind;  // the kind's name ("install"): steps::kind_of(kind)
    size_t index = 0;  // 0-based position in the recipe

    std::vector<std::string> argv;  // empty for check
    fs::path cwd;
    exec::EnvMap env_set;  // everything set on top of the pass-through env
    std::vector<std::string> env_unset;
    exec::EnvMap child_env;  // the complete environment the child gets
    KindSpec spec;           // what only this kind has
    std::vector<ResolvedVerify> verify;
    double timeout = 0;  // seconds, 0 = none
    int attempts = 1;
    bool optional = false;
    /// The plan found the step's work done without running it (a venv with the right
    /// Python): the argv stays in the plan and the key, nothing runs.
    bool kept = false;
    /// --locked: why the lockfile does not cover this optional step ("optional step failed on
    /// ..."): the locked run skips it. "" otherwise.
    std::string not_locked;

    bool complete = true;                  // false when some value is only known after an earlier step
    std::string note;                      // shown in the plan: "venv exists (Python 3.11.7): kept", ...
    std::vector<LocalInput> local_inputs;  // what the step reads from this machine
    std::string key;
    std::string key_explain;
    /// What the key hashes, field by field (the journal keeps them, so that a changed key is
    /// explained input by input).
    std::vector<core::KeyInput> key_inputs;
    /// The key as bootstrap-step-v3 made it: a journal written under v3 that matches it is
    /// re-keyed without running the step (engine/plan.cpp). Empty when `key` is.
    std::string legacy_key;

    /// The kind's payload, or null for a step of another kind.
    template <class T>
    [[nodiscard]] const T* as() const {
        return std::get_if<T>(&spec);
    }
    template <class T>
    [[nodiscard]] T* as() {
        return std::get_if<T>(&spec);
    }
    /// An OtherSpec kind's payload as its own type (null for any other step).
    template <class T>
    [[nodiscard]] const T* payload() const {
        const auto* other = std::get_if<OtherSpec>(&spec);
        return other ? dynamic_cast<const T*>(other->payload.get()) : nullptr;
    }
    [[nodiscard]] const InstallSpec* install() const { return as<InstallSpec>(); }
    [[nodiscard]] const RunSpec* run() const { return as<RunSpec>(); }
    [[nodiscard]] const BuildSpec* build() const { return as<BuildSpec>(); }
    [[nodiscard]] const Pybind11Spec* pybind11() const { return as<Pybind11Spec>(); }
    /// The indexes the step's packages come from, redacted (install, sync and build steps;
    /// empty otherwise): its kind's index_urls hook (steps/kind.hpp).
    [[nodiscard]] std::vector<std::string> index_urls() const;
};

}  // namespace bootstrap::steps
