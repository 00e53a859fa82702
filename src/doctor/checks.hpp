#pragma once
// `bootstrap doctor`: what is wrong with a venv, each finding with its evidence and a fix, and
// one summary line per group of checks saying what passed.
//
// Two scopes. With a recipe, or in a venv holding the training stack (torch, TransformerEngine,
// megatron-core or apex installed), the imports are the recipe's verify imports plus Megatron's
// defaults (torch, transformer_engine, amp_C, ...) and the built-in symbol checks always run.
// In any other venv the imports are the top-level modules of what is installed, and a built-in
// symbol check runs only when the venv carries its library.
//
// Topics (one file each): checks_imports.cpp (every module imports, each in its own child forked
// from one interpreter that imported torch once), checks_deps.cpp (dependency consistency like
// `pip check`; a declared override is info), checks_binary.cpp (dynamic symbols of the library
// that will load; CUDA code of built extensions), built_for.cpp (the arch the venv was built for
// against the node's GPUs), checks_venv.cpp (pyvenv.cfg, stale prefixes in bin/ after a copy,
// and `relocate`), checks_files.cpp (installed files against their RECORD hashes), checks_packages.cpp (PyPI's unrelated apex, pip, Megatron's helpers_cpp, nvcc
// vs torch CUDA, forbidden variables). checks_util.cpp builds the fixes: each is a command that
// works as printed (the step that provides the module, `--venv` of the venv examined, the
// version a pin asks for).

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "doctor/built_for.hpp"
#include "doctor/lint.hpp"
#include "exec/environment.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::doctor {

namespace fs = std::filesystem;

/// One `elf_symbol` check: `library` is a glob relative to site-packages ("nvidia/**/libX.so.13");
/// its file name is also looked up on the system when the venv has no match.
struct SymbolCheck {
    std::string symbol;
    std::string library;
    std::string package;  // the distribution that ships it ("nvidia-cublas"), for the fix
    std::string why;
};

/// The built-in symbol checks: cublasLtGroupedMatrixLayoutInit_internal in libcublasLt.so.13
/// (TransformerEngine 2.14 needs cuBLAS >= 13.2, README pitfall P10).
[[nodiscard]] const std::vector<SymbolCheck>& builtin_symbol_checks();

/// A pin the venv's recipe overrides on purpose: step `step` installs `dependency` over the pin
/// of `dependent` (its `allow_conflicts`). Names are normalised.
struct DeclaredOverride {
    std::string step;
    std::string dependent;
    std::string dependency;
};

struct DoctorOptions {
    fs::path venv;
    const recipe::Recipe* recipe = nullptr;  // optional
    /// Without a recipe: the deliberate overrides the venv's last run recorded (its recipe's
    /// allow_conflicts, `<venv>/.bootstrap/declared-overrides.txt`), reported as declared the
    /// way the recipe's are; nullopt when the venv has no record (an older bootstrap's).
    std::optional<std::vector<DeclaredOverride>> recorded_overrides;
    fs::path recorded_overrides_file;  // where they were read from (the finding's explanation)
    /// Without a recipe: the recipe file the venv was built from, while it is there unchanged
    /// (an image's /etc/bootstrap/recipe.toml), for the `bootstrap run` commands fixes print;
    /// empty: they say RECIPE.
    fs::path recorded_recipe;
    std::vector<std::string> extra_modules;  // to import besides the recipe's and the defaults
    std::vector<SymbolCheck> symbols;        // added to the built-in ones
    std::optional<std::string> arch;         // device arch ("9.0") for the CUDA code check
    /// What the venv was built for, from its history (the CLI reads it); nullopt: no entry
    /// recorded an arch, and the built extensions' CUDA code tells.
    std::optional<RecordedArch> built_for;
    /// The node's GPUs (the CLI probes them, or --arch); nullopt: not asked, nothing compared.
    std::optional<NodeDevice> device;
    fs::path megatron_dir;     // for helpers_cpp; empty: not checked
    exec::EnvMap environment;  // the environment training would start from
    bool te_path = true;       // Megatron runs with --transformer-impl transformer_engine
    /// distribution (normalised name) -> the recipe step that owns it (the journal): which
    /// step a fix re-runs. Empty: the recipe's packages and verify clauses tell.
    std::map<std::string, std::string> owners;
    /// step id -> the indexes its installer used (the journal, credentials redacted; default
    /// first): a fix's installer command asks the indexes of the step that owns the package.
    std::map<std::string, std::vector<std::string>> step_indexes;
    /// Hash every installed file against its RECORD (check_installed_files). `launch` leaves it
    /// to `doctor`: a training start must not read a whole venv (an image's is sealed, so its
    /// stat cache is gone, and a shared one may sit on NFS).
    bool check_files = true;
    /// $BOOTSTRAP_HOME, for the build cache's check; empty: not checked.
    fs::path bootstrap_home;
    /// The BOOTSTRAP_TRUSTED_KEYS the run would see (empty: the trusted-keys files).
    std::map<std::string, std::string> trust_env;
    /// How long one import may take before its probe is killed.
    std::chrono::milliseconds import_timeout{std::chrono::minutes(2)};
};

/// What one group of checks looked at: "imports: 12 modules ok", "dependencies: 33 of 34
/// distributions satisfied", "cuda code: not checked (no --arch)".
struct CheckSummary {
    std::string group;  // "venv", "files", "imports", "dependencies", "symbols", "cuda code", "built for",
                        // "packages", "build cache"
    std::string line;   // starts with the group and a colon
};

struct DoctorReport {
    std::vector<Finding> findings;     // grouped by topic, in the order above
    std::vector<CheckSummary> checks;  // one per group, in the same order
    bool training = false;             // the training-stack scope (see the top of this file)
};

/// Run every check.
[[nodiscard]] DoctorReport run_checks(const DoctorOptions& options);
/// run_checks' findings.
[[nodiscard]] std::vector<Finding> run_doctor(const DoctorOptions& options);

/// The training-stack scope: a recipe is given or the venv holds torch, TransformerEngine,
/// megatron-core or apex.
[[nodiscard]] bool training_scope(const DoctorOptions& options);

/// A module the import check will try, and why.
struct ImportCheck {
    std::string module;
    std::string attr;
    std::string source;                // "recipe step 'x' (file:line:col)", "--import", "default",
                                       // "installed: click 8.1.7"
    bool required = true;              // recipe and --import modules; a failure is an error
    std::vector<std::string> preload;  // the recipe clause's `preload`
    std::string optional_step;         // the recipe step, when it is `optional = true`
};

/// The imports check_imports tries, in order: the recipe's verify imports and --import, then
/// Megatron's defaults (training scope) or the installed distributions' top-level modules
/// (private `_name`s left out).
[[nodiscard]] std::vector<ImportCheck> planned_imports(const DoctorOptions& options);

// The topics, callable one by one (tests); each fills `summary` when given.
[[nodiscard]] std::vector<Finding> check_imports(const DoctorOptions& options, CheckSummary* summary = nullptr);
[[nodiscard]] std::vector<Finding> check_dependencies(const DoctorOptions& options, CheckSummary* summary = nullptr);
[[nodiscard]] std::vector<Finding> check_symbols(const DoctorOptions& options, CheckSummary* summary = nullptr);
[[nodiscard]] std::vector<Finding> check_cuda_code(const DoctorOptions& options, CheckSummary* summary = nullptr);
/// What the venv was built for (options.built_for, else its CUDA libraries' fatbins) against
/// options.device: an error naming both sides when a GPU cannot run it (built_for.cpp).
[[nodiscard]] std::vector<Finding> check_built_for(const DoctorOptions& options, CheckSummary* summary = nullptr);
[[nodiscard]] std::vector<Finding> check_venv_integrity(const DoctorOptions& options, CheckSummary* summary = nullptr);
/// Editable installs whose source directory is missing here, an error each (checks_sources.cpp;
/// part of the venv group). Returns how many.
size_t check_editable_sources(const DoctorOptions& options, std::vector<Finding>& out);
/// Every installed file against its distribution's RECORD (exists, size, sha256), files that
/// matched remembered by stat in VENV/.bootstrap/verified-files.cache (checks_files.cpp).
[[nodiscard]] std::vector<Finding> check_installed_files(const DoctorOptions& options, CheckSummary* summary = nullptr);
[[nodiscard]] std::vector<Finding> check_packages(const DoctorOptions& options, CheckSummary* summary = nullptr);
/// The shared build cache's entries under the trust model (core/cache_trust.hpp): each one
/// another user could have written, with its writer and whether a trusted key signed it; a
/// signature that no longer matches is an error (checks_cache.cpp).
[[nodiscard]] std::vector<Finding> check_build_cache(const DoctorOptions& options, CheckSummary* summary = nullptr);

/// `<venv>/lib/python*/site-packages` (the first), or empty.
[[nodiscard]] fs::path find_site_packages(const fs::path& venv);

/// {dependent, dependency} pins the recipe overrides on purpose (steps' allow_conflicts).
[[nodiscard]] std::set<std::pair<std::string, std::string>> recipe_allowed_conflicts(const recipe::Recipe* recipe);

/// The pins overridden on purpose, each with the step that declares it: the recipe's when one
/// is given, else the ones the venv recorded (none without a record).
[[nodiscard]] std::vector<DeclaredOverride> declared_overrides(const DoctorOptions& options);

}  // namespace bootstrap::doctor
