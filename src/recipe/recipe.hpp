#pragma once
// The recipe as plain structs, produced by one parser (toml++ stays inside recipe/).
// String fields keep their `{placeholders}` unexpanded; `placeholders.hpp` expands them.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/key.hpp"

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

enum class InstallerKind { uv, pip };
[[nodiscard]] const char* to_string(InstallerKind kind);

/// A verify clause's own keys beyond what VerifyClause holds: a clause that has more defines its
/// struct, derived from this, in its own file (steps/verify_<name>.cpp) and fills it in its
/// parse function; recipe/ never sees inside.
struct ClauseFields {
    virtual ~ClauseFields() = default;
};

/// One entry of a step's `verify = [...]`. Which clause it is, is the key that names it
/// (`{ import = "torch" }`); the clause registered under that name (steps/verify_clauses.cpp,
/// handed in as a ClauseTable) reads its keys, so recipe/ knows no clause.
struct VerifyClause {
    /// The built-in clauses' names, for code that names one (tests, the pybind11 kind's import
    /// check); a new clause needs no entry here.
    struct Kind {
        static constexpr const char* import_module = "import";
        static constexpr const char* file = "file";
        static constexpr const char* cuda_arch = "cuda_arch";
        static constexpr const char* elf_symbol = "elf_symbol";
    };
    std::string kind;  // the clause's key ("import"): steps::clause_of(kind) is its home
    /// The value of that key: module name, file path; cuda_arch: the arch ("9.0"); elf_symbol:
    /// the symbol's name.
    Text target;
    SourceLoc loc;
    /// The clause's own keys (null when it keeps none beyond the fields below); read them with
    /// fields_as<T>().
    std::shared_ptr<const ClauseFields> fields;

    // What readers outside steps/ read (doctor links recipe, not steps), set by the clauses
    // that have them; a new clause keeps its own keys in `fields`.

    /// What `target` names, so that doctor finds "the clauses importing module M" and "the
    /// symbols a library must define" without naming a clause (imported_module(),
    /// required_symbol()).
    enum class Target { other, module, symbol };
    Target target_is = Target::other;
    std::optional<Text> attr;  // import: attribute that must exist on the module
    /// import: modules imported before it (`preload = ["torch"]`), besides what the probe rule
    /// adds (pyenv/import_probe.hpp: torch for an extension that needs libc10).
    std::vector<Text> preload;
    /// cuda_arch: the library to inspect, a module name (`module`) or a path (`path`, relative
    /// to the venv). elf_symbol: `library`, a glob under site-packages ("nvidia/**/libX.so.13",
    /// then the file name on the system) or an absolute path.
    std::optional<Text> library;
    bool library_is_module = false;

    /// The module the clause imports, or null (doctor: the step that provides a module).
    [[nodiscard]] const Text* imported_module() const { return target_is == Target::module ? &target : nullptr; }
    /// The symbol the clause requires `library` to define, or null (doctor's symbol check).
    [[nodiscard]] const Text* required_symbol() const {
        return target_is == Target::symbol && library ? &target : nullptr;
    }
    /// The clause's fields as its own type (null when it is another clause).
    template <class T>
    [[nodiscard]] const T* fields_as() const {
        return dynamic_cast<const T*>(fields.get());
    }
};

class ClauseReader;

/// How a recipe names a verify clause and reads its keys: a clause table holding the key `name`
/// is read by `parse` (steps/ provides the table: steps::recipe_clauses()).
struct ClauseSyntax {
    std::string_view name;
    /// Read the clause's keys into `clause` (kind and loc are set); false when it is not kept
    /// (its problems are reported).
    bool (*parse)(ClauseReader& reader, VerifyClause& clause);
    /// A table that names no clause but holds another key of this one: report why it is not a
    /// clause and return true (null: no such key). `{ library = "x" }` is elf_symbol's.
    bool (*claims)(ClauseReader& reader) = nullptr;
};
/// The verify clauses a recipe may name, in the order they are tried: a table naming two is
/// read by the first one's parse (import before file: "not both"), and one naming none by the
/// first entry's (its keys are what a typo is matched against).
using ClauseTable = std::vector<ClauseSyntax>;

/// A step kind's own fields. Each kind defines its struct, derived from this, in its own file
/// (steps/kind_<name>.cpp) and fills it in its parse function; recipe/ never sees inside.
struct KindFields {
    virtual ~KindFields() = default;
};

struct Step;
class StepReader;

/// How a recipe names a step kind and reads its keys: `kind = "NAME"` steps are parsed by
/// `parse` (steps/ provides the table: steps::recipe_kinds()).
struct KindSyntax {
    std::string_view name;
    std::shared_ptr<const KindFields> (*parse)(StepReader& reader);
};
/// The step kinds a recipe may name, in the order error messages list them.
using KindTable = std::vector<KindSyntax>;

struct Step {
    std::string id;
    std::string kind;  // the kind's name as written ("install"); steps::kind_of() is its home
    SourceLoc loc;
    /// The kind's own keys (never null in a parsed recipe); read them with fields_as<T>().
    std::shared_ptr<const KindFields> fields;

    // Cross-kind: what the step asks to install, as written (the install kind fills them;
    // the doctor, the skip rule and lockfiles read them whatever the kind).
    std::vector<Text> packages;
    std::vector<std::string> allow_conflicts;  // distributions whose pins this step overrides

    // every kind
    std::map<std::string, Text> env;  // set
    std::vector<std::string> env_unset;
    std::optional<double> timeout;  // seconds, whole step attempt
    std::optional<int> attempts;    // whole-step attempts (default: [network] attempts for
                                    // install/sync, 1 otherwise)
    bool optional = false;
    std::vector<VerifyClause> verify;

    /// Every value of the step that may hold placeholders, whichever key it came from (the
    /// placeholder check reads these).
    std::vector<Text> texts;
    /// Every other key of the step's table as written (placeholders unexpanded), in key order:
    /// what the step means beyond the fields above (recipe/meaning.hpp).
    std::vector<core::KeyInput> written;

    /// The kind's fields as its own type (null when the step is of another kind).
    template <class T>
    [[nodiscard]] const T* fields_as() const {
        return dynamic_cast<const T*>(fields.get());
    }
};

struct VenvSection {
    Text path;
    /// A version ("3.12", "3.12.1") or an interpreter's path ("/usr/bin/python3.12", "~/py/bin/
    /// python3"; relative to the recipe's directory), which makes the venv and nothing else.
    std::string python;
    SourceLoc python_loc;
    /// `python` names an interpreter file rather than a version.
    [[nodiscard]] bool python_is_path() const {
        return python.find('/') != std::string::npos || python.starts_with('~');
    }
    InstallerKind installer = InstallerKind::uv;
    SourceLoc loc;
};

struct NetworkSection {
    int timeout = 30;  // per-read seconds -> UV_HTTP_TIMEOUT / pip --timeout
    int retries = 3;   // -> UV_HTTP_RETRIES / pip --retries
    int attempts = 1;  // whole-step attempts for install/sync steps
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
    std::optional<Text> allowed_flag;  // allowed = { flag = "--x", values = [...] }
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
    std::filesystem::path file;  // absolute path of the recipe
    std::string source_digest;   // sha256 of the file's bytes
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
    /// [env] key = [ ... ]: inherited variables that are inputs of every step's key (and passed
    /// to every step), on top of what each kind counts (core/env_policy.hpp).
    std::set<std::string> env_key;
    std::vector<std::string> device_probes;  // [device] (used by later issues)
    std::optional<std::string> device_fallback_arch;
    bool device_ptx = false;  // [device] ptx: the highest arch gets +PTX
    std::vector<Step> steps;
    std::vector<LintRule> lint_rules;  // [[lint]]
    std::vector<FaultEntry> faults;    // [[fault]]
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

/// Parse and validate a recipe file completely, its steps with the kinds of `kinds` and their
/// verify clauses with `clauses` (steps/ has the tables: steps::load_recipe() passes them;
/// without clauses every `verify` entry is a problem). All problems found are reported at once:
/// Error{invalid_recipe, "<first problem>", "<every problem, one per line>"}, each line
/// starting with "file:line:col: ".
[[nodiscard]] Result<Recipe> load_recipe(const std::filesystem::path& file, const KindTable& kinds,
                                         const ClauseTable& clauses = {});

/// Same, from text (the name is used in messages). Used for embedded recipes and tests.
[[nodiscard]] Result<Recipe> parse_recipe(std::string_view text, const std::string& name, const KindTable& kinds,
                                          const ClauseTable& clauses = {});

}  // namespace bootstrap::recipe
