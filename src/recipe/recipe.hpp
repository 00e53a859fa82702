#pragma once
// The recipe as plain structs, produced by one parser (toml++ stays inside recipe/).
// String fields keep their `{placeholders}` unexpanded; `placeholders.hpp` expands them.

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::recipe {

/// Where a value was written: "file:line:col".
struct SourceLoc {
    std::string file;
    int line = 0;
    int column = 0;
    [[nodiscard]] std::string str() const;
};

/// A string value together with where it came from (for error messages at expansion time).
struct Text {
    std::string value;
    SourceLoc loc;
};

enum class StepKind { venv, install, sync, run, check, pybind11, build };
[[nodiscard]] const char* to_string(StepKind kind);

enum class InstallerKind { uv, pip };
[[nodiscard]] const char* to_string(InstallerKind kind);

struct VerifyClause {
    enum class Kind { import_module, file, cuda_arch };
    Kind kind = Kind::import_module;
    Text target;        // module name, or file path; cuda_arch: the arch ("9.0")
    std::optional<Text> attr;  // import: attribute that must exist on the module
    /// import: a PEP 440 specifier (">=2.1") that the installed distribution providing the
    /// module must satisfy; checked as a specifier when the plan is made (pyenv owns PEP 440).
    std::optional<Text> version;
    /// import: modules imported before it (`preload = ["torch"]`), besides what the probe rule
    /// adds (pyenv/import_probe.hpp: torch for an extension that needs libc10).
    std::vector<Text> preload;
    /// cuda_arch: the library to inspect, a module name (`module`) or a path (`path`, relative
    /// to the venv).
    std::optional<Text> library;
    bool library_is_module = false;
    SourceLoc loc;
};

/// Where a `build` step's source comes from: exactly one of a local directory, a git URL at a
/// pinned commit, or an archive URL with its sha256.
struct BuildSource {
    enum class Kind { path, git, url };
    Kind kind = Kind::path;
    Text location;                 // the directory, the git URL or the archive URL
    std::optional<Text> rev;       // git: a full commit id (40 or 64 hex digits)
    std::optional<Text> sha256;    // url: required, 64 hex digits
    std::optional<Text> subdirectory;  // the project inside the source tree
    bool submodules = false;       // git: also fetch submodules at their recorded commits
    SourceLoc loc;
};

struct Step {
    std::string id;
    StepKind kind = StepKind::run;
    SourceLoc loc;

    // install
    std::vector<Text> packages;
    std::optional<Text> index_url;
    std::vector<Text> extra_index_urls;
    std::vector<Text> find_links;
    bool upgrade = false;
    bool reinstall = false;
    bool no_deps = false;
    bool pre = false;
    std::vector<std::string> allow_conflicts;  // distributions whose pins this step overrides

    // sync
    std::optional<Text> project;  // directory holding pyproject.toml / uv.lock
    std::vector<Text> args;       // extra arguments (sync)

    // run
    std::vector<Text> argv;
    std::optional<Text> cwd;
    std::optional<Text> creates;        // skip when this path exists
    std::vector<Text> unless;           // skip when this argv exits 0

    // pybind11: one C++ source -> <output_dir>/<module><EXT_SUFFIX>
    std::optional<Text> source;
    std::optional<Text> module;
    std::optional<Text> output_dir;       // default: the source's directory
    std::optional<Text> cxx;              // default: "c++"
    std::vector<Text> extra_args;
    std::optional<Text> pybind11_include; // default: `python -m pybind11 --includes` in the venv

    // build: a Python package from source -> a wheel (kept in the build cache) -> installed
    std::optional<BuildSource> build_source;  // `source = { git, rev } | { url, sha256 } | { path }`
    bool no_build_isolation = false;
    std::vector<std::pair<std::string, Text>> config_settings;  // PEP 517 -C key=value, in order
    /// Distributions whose versions the built binary depends on (step key and build-cache key);
    /// default ["torch"] (a CUDA extension built against one torch breaks with another).
    std::vector<std::string> abi_packages{"torch"};

    // every kind
    std::map<std::string, Text> env;    // set
    std::vector<std::string> env_unset;
    std::optional<double> timeout;      // seconds, whole step attempt
    std::optional<int> attempts;        // whole-step attempts (default: [network] attempts for
                                        // install/sync, 1 otherwise)
    bool optional = false;
    std::vector<VerifyClause> verify;
};

struct VenvSection {
    Text path;
    std::string python;                 // "3.12"
    InstallerKind installer = InstallerKind::uv;
    SourceLoc loc;
};

struct NetworkSection {
    int timeout = 30;     // per-read seconds -> UV_HTTP_TIMEOUT / pip --timeout
    int retries = 3;      // -> UV_HTTP_RETRIES / pip --retries
    int attempts = 1;     // whole-step attempts for install/sync steps
    /// Bytes a build step's archive download may bring when the server declares no size (and
    /// the most it may declare): "2GiB", "500MB" or a number of bytes.
    uint64_t max_download = 4ull << 30;
};

/// How much a lint finding matters: only `error` makes `bootstrap lint` exit 3.
enum class Severity { error, warning, info };
[[nodiscard]] const char* to_string(Severity severity);

/// One `[[lint]]` rule over training flags. Conditions: every `when` entry holds ("--flag"
/// present, or "--flag=value") and, with `unless_import`, that module fails to import in the
/// venv. Checks (at least one): `forbid`/`require` ("--flag" or "--flag=value"), `allowed`
/// values of one flag, `forbid_env` variables that must not be set.
struct LintRule {
    std::string id;
    SourceLoc loc;
    std::vector<Text> when;
    std::optional<Text> unless_import;
    std::vector<Text> forbid;
    std::vector<Text> require;
    std::optional<Text> allowed_flag;    // allowed = { flag = "--x", values = [...] }
    std::vector<Text> allowed_values;
    std::vector<Text> forbid_env;
    std::string explain;
    std::string fix;
    Severity severity = Severity::error;
};

/// The longest `[[fault]] match` read: std::regex's compiler recurses per character and per
/// group (a 100,000-character pattern overflowed the stack); real patterns are under 200.
inline constexpr size_t k_max_fault_pattern = 1000;

/// One `[[fault]]` entry: a regex (ECMAScript, matched per log line) and what it means. The
/// regex is compiled with std::regex::nosubs (whether a line matches is all that is asked; a
/// capture group costs stack per character matched), so it may not use back-references.
struct FaultEntry {
    std::string id;
    SourceLoc loc;
    Text match;
    std::string explain;
    std::string fix;
    std::optional<Text> step;  // the step whose failure this explains, when it is one step's
};

/// `[perf] baseline = { tflops = 450.0, tolerance = 0.05, note = "..." }`.
struct PerfBaseline {
    double tflops = 0;        // TFLOP/s per GPU, as Megatron logs it
    double tolerance = 0.05;  // a fraction: a run below tflops * (1 - tolerance) is a drop
    std::string note;         // where the number came from
    SourceLoc loc;
};

struct Recipe {
    std::filesystem::path file;         // absolute path of the recipe
    std::string source_digest;          // sha256 of the file's bytes
    int schema = 1;
    std::string name;
    std::string summary;
    std::vector<std::pair<std::string, Text>> vars;  // in file order
    VenvSection venv;
    NetworkSection network;
    std::map<std::string, Text> env_set;  // [env] set = { ... }
    std::vector<std::string> env_unset;   // [env] unset = [ ... ]
    /// [env] secret = [ ... ]: variables whose values are never shown, logged or hashed (on top
    /// of the names that look secret: core/redact.hpp).
    std::set<std::string> env_secret;
    std::vector<std::string> device_probes;       // [device] (used by later issues)
    std::optional<std::string> device_fallback_arch;
    bool device_ptx = false;                      // [device] ptx: the highest arch gets +PTX
    std::vector<Step> steps;
    std::vector<LintRule> lint_rules;    // [[lint]]
    std::vector<FaultEntry> faults;      // [[fault]]
    /// [flag_aliases]: canonical flag -> its other spellings across Megatron branches.
    std::map<std::string, std::vector<std::string>> flag_aliases;
    std::optional<PerfBaseline> perf_baseline;  // [perf] baseline
};

/// A full git commit id: 40 (SHA-1) or 64 (SHA-256) hex digits.
[[nodiscard]] bool is_commit_id(std::string_view s);

/// Why `url` cannot be a git source ("" when it can): a URL with scheme https, http, ssh, git or
/// file, scp-like `user@host:path`, or a local path — never anything git could read as an
/// option (a leading '-'), `ext::`/`fd::` transports, control characters or blanks.
[[nodiscard]] std::string git_url_problem(std::string_view url);

/// Parse and validate a recipe file completely. All problems found are reported at once:
/// Error{invalid_recipe, "<first problem>", "<every problem, one per line>"}, each line
/// starting with "file:line:col: ".
[[nodiscard]] Result<Recipe> load_recipe(const std::filesystem::path& file);

/// Same, from text (the name is used in messages). Used for embedded recipes and tests.
[[nodiscard]] Result<Recipe> parse_recipe(std::string_view text, const std::string& name);

}  // namespace bootstrap::recipe
