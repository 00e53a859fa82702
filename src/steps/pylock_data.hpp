#pragma once
// A PEP 751 `pylock.toml` as plain data: the one reader of the format. An install step with
// `pylock` reads it here when the plan is made (its pins: pylock_pins); lockfile/ reads a lock
// for `run --locked` through it too, adding bootstrap's own [tool.bootstrap] tables with the
// same PylockReader. It lives in steps/, the lowest module that has both the TOML value tree
// (recipe/toml_document.hpp) and the PEP 503/508/427 rules (pyenv/).
//
// What is read: lock-version (major 1; another major is refused, as the PEP wants), created-by,
// requires-python, environments, and per [[packages]] its name, version, marker, index, and
// its wheels (url or path, sha256) and/or its sdist (name, url or path, sha256; size and
// upload-time are type-checked), or a `directory`. A `vcs` or `archive` source, a wheel or
// sdist without sha256 or a duplicate name is a problem. Every problem is
// located FILE:LINE:COL and all are reported together, as a recipe's are. A value the installer
// gets (names, versions, markers, urls, paths, indexes) holds no control character and does
// not start with '-': a requirements file is one requirement per line, options start with '-'.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "pyenv/interpreter.hpp"
#include "pyenv/requirement.hpp"
#include "recipe/value.hpp"

namespace bootstrap::steps {

namespace fs = std::filesystem;

/// One [[packages.wheels]] entry.
struct PylockWheel {
    std::string file_name;  // its `name`, else the last part of its url or path
    std::string url;        // as written ("" when it has a path)
    std::string path;       // absolute: a relative one is taken from the lock's directory
    std::string sha256;     // lower-case hex
    recipe::SourceLoc loc;
};

/// A package's `directory`: a source tree (a project, often editable), not a built wheel.
struct PylockDirectory {
    std::string path;  // absolute, no trailing '/'
    bool editable = false;
    recipe::SourceLoc loc;
};

/// One [[packages]] entry.
struct PylockPackage {
    std::string name;     // PEP 503 normalised
    std::string version;  // "" when it has none (a directory may not)
    std::string marker;   // as written ("" = everywhere)
    std::string index;    // as written ("" = none)
    std::vector<PylockWheel> wheels;
    /// Its [packages.sdist] (a file name that is an sdist of it, url or path, sha256): the
    /// installer builds it where no wheel fits (the only file of a package without wheels).
    std::optional<PylockWheel> sdist;
    std::optional<PylockDirectory> directory;
    recipe::SourceLoc loc;  // its [[packages]] table
};

struct PylockData {
    fs::path file;
    std::string created_by;
    std::string requires_python;            // "" = any
    std::vector<std::string> environments;  // markers; empty = any
    std::vector<PylockPackage> packages;    // in the file's order, each name once
};

/// Typed reads of a pylock's values; a mismatch is a located problem and reads as absent, so
/// every problem of the file is found in one pass. `where` prefixes a message ("package x: ").
class PylockReader {
public:
    void report(const recipe::SourceLoc& at, std::string what) { m_problems.push_back(at.str() + ": " + what); }
    [[nodiscard]] const std::vector<std::string>& problems() const { return m_problems; }

    /// The value under `k` when it has `type` (null when absent, or reported).
    const recipe::Value* typed(const recipe::Value& table, std::string_view k, recipe::ValueType type,
                               std::string_view where);
    /// A string ("" when absent).
    std::string str(const recipe::Value& table, std::string_view k, std::string_view where);
    /// A string the installer gets (a name, version, marker, url, path or index): one with a
    /// control character or a leading '-' is reported (pyenv::unsafe_installer_value) and reads
    /// as "". `required`: "'k' is missing" when it is not there.
    std::string installer_str(const recipe::Value& table, std::string_view k, std::string_view where,
                              bool required = false);
    /// A string that must be there ("'k' is missing" at the table otherwise).
    std::optional<std::string> required(const recipe::Value& table, std::string_view k, std::string_view where);
    bool boolean(const recipe::Value& table, std::string_view k, bool fallback, std::string_view where);
    std::vector<std::string> strings(const recipe::Value& table, std::string_view k, std::string_view where);
    /// The tables of an array of tables (others reported).
    std::vector<const recipe::Value*> tables(const recipe::Value& table, std::string_view k, std::string_view where);

private:
    std::vector<std::string> m_problems;
};

/// lock-version, created-by, requires-python and environments of `doc` into `out`. False when
/// the lock-version is missing or of another major version: nothing else can be read then.
[[nodiscard]] bool read_pylock_header(PylockReader& rd, const recipe::Value& doc, PylockData& out);

/// Called for each package once its name, version, marker and index are read, before its
/// sources: a reader of a tool's own [packages.tool.X] table adds what it keeps there (and may
/// fill in the version). `entry` is the package's table.
using PylockPackageHook = std::function<void(PylockReader& rd, const recipe::Value& entry, PylockPackage& p)>;

/// The [[packages]] of `doc` into `out.packages` (relative paths from `out.file`'s directory).
void read_pylock_packages(PylockReader& rd, const recipe::Value& doc, PylockData& out,
                          const PylockPackageHook& hook = {});

/// The usage error for a pylock with `problems` (at least one): "not a valid pylock.toml:
/// FIRST (and N more problem(s))", every problem in the detail.
[[nodiscard]] Error invalid_pylock(const std::vector<std::string>& problems);

/// A pylock.toml's text read (`file` names it in messages and anchors relative paths); a
/// `[tool]` table is not looked into.
[[nodiscard]] Result<PylockData> read_pylock(std::string_view text, const fs::path& file);

/// Whether a lock is for `python`: its requires-python must hold for the interpreter's version
/// and one of its environments (if any) for its markers; a usage error naming the lock `file`
/// and what the venv has otherwise. Any lock's check: a pylock step's and a `--locked` run's.
[[nodiscard]] Status check_lock_interpreter(const std::filesystem::path& file, const std::string& requires_python,
                                            const std::vector<std::string>& environments,
                                            const pyenv::InterpreterFacts& python);

/// check_lock_interpreter for a pylock read by read_pylock.
[[nodiscard]] Status check_pylock_interpreter(const PylockData& lock, const pyenv::InterpreterFacts& python);

/// What an install step with `pylock` installs: every package pinned (`name==version`, with its
/// marker: the installer and the skip rule judge it against the venv), and the requirements
/// file the installer gets with `--no-deps --require-hashes`: per package its pin, or its one
/// wheel file when the lock gives the wheel by `path`, with every wheel's sha256 (and its
/// sdist's: the installer builds it, hash-checked, where no wheel fits).
struct PylockPins {
    std::vector<pyenv::Requirement> requirements;
    std::string text;                // the requirements file
    std::vector<std::string> files;  // the wheels installed by path
};

/// The pins of `lock`. A package the lock gives as a source tree (`directory`) or by several
/// wheel files is an error at its line: an install step installs built wheels, one per package.
[[nodiscard]] Result<PylockPins> pylock_pins(const PylockData& lock);

}  // namespace bootstrap::steps
