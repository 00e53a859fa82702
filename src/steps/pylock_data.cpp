// Reading a pylock.toml into plain data (steps/pylock_data.hpp), and the pins an install step
// with `pylock` installs from it.

#include "steps/pylock_data.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "pyenv/marker.hpp"
#include "pyenv/name.hpp"
#include "pyenv/requirement_line.hpp"
#include "pyenv/sdist_name.hpp"
#include "pyenv/specifier.hpp"
#include "pyenv/wheel_name.hpp"
#include "recipe/toml_document.hpp"

namespace bootstrap::steps {

using recipe::Value;
using recipe::ValueType;

const Value* PylockReader::typed(const Value& table, std::string_view k, ValueType type, std::string_view where) {
    const Value* v = table.get(k);
    if (v == nullptr || v->is(type)) return v;
    report(v->loc,
           fmt::format("{}'{}' must be {}, not {}", where, k, recipe::type_name(type), recipe::type_name(v->type)));
    return nullptr;
}

std::string PylockReader::str(const Value& table, std::string_view k, std::string_view where) {
    const Value* v = typed(table, k, ValueType::string, where);
    return v ? v->string : std::string();
}

std::optional<std::string> PylockReader::required(const Value& table, std::string_view k, std::string_view where) {
    if (table.get(k) == nullptr) {
        report(table.loc, fmt::format("{}'{}' is missing", where, k));
        return std::nullopt;
    }
    const Value* v = typed(table, k, ValueType::string, where);
    return v ? std::optional(v->string) : std::nullopt;
}

std::string PylockReader::installer_str(const Value& table, std::string_view k, std::string_view where, bool required) {
    auto value = required ? this->required(table, k, where).value_or("") : str(table, k, where);
    if (auto why = pyenv::unsafe_installer_value(value)) {
        report(table.get(k)->loc,
               fmt::format("{}'{}' {}: refused, an installer would read more than a {} in it (write it on one "
                           "line; a relative path that starts with '-' as ./-...)",
                           where, k, *why, k));
        return {};
    }
    return value;
}

bool PylockReader::boolean(const Value& table, std::string_view k, bool fallback, std::string_view where) {
    const Value* v = typed(table, k, ValueType::boolean, where);
    return v ? v->boolean : fallback;
}

std::vector<std::string> PylockReader::strings(const Value& table, std::string_view k, std::string_view where) {
    std::vector<std::string> out;
    const Value* v = typed(table, k, ValueType::array, where);
    if (v == nullptr) return out;
    for (const auto& item : v->array) {
        if (item.is(ValueType::string)) out.push_back(item.string);
        else report(item.loc, fmt::format("{}'{}' must hold strings, not {}", where, k, recipe::type_name(item.type)));
    }
    return out;
}

std::vector<const Value*> PylockReader::tables(const Value& table, std::string_view k, std::string_view where) {
    std::vector<const Value*> out;
    const Value* v = typed(table, k, ValueType::array, where);
    if (v == nullptr) return out;
    for (const auto& item : v->array) {
        if (item.is(ValueType::table)) out.push_back(&item);
        else report(item.loc, fmt::format("{}'{}' must hold tables, not {}", where, k, recipe::type_name(item.type)));
    }
    return out;
}

namespace {

bool is_hex64(std::string_view s) {
    return s.size() == 64 &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

/// The file name a wheel entry stands for: its `name`, else the last part of its url or path.
std::string wheel_file_name(const std::string& name, const std::string& url, const std::string& path) {
    if (!name.empty()) return name;
    if (!path.empty()) return fs::path(path).filename().string();
    std::string_view u = url;
    u = u.substr(0, u.find_first_of("?#"));
    return core::percent_decode(u.substr(u.rfind('/') + 1));
}

/// A wheel or sdist entry's `name`, `url` and `path`, each checked before it can reach an
/// installer; false when one was refused (what would follow would only echo the refusal).
bool read_location(PylockReader& rd, const Value& t, const std::string& where, PylockWheel& out, std::string& name) {
    out.loc = t.loc;
    const size_t problems = rd.problems().size();
    name = rd.installer_str(t, "name", where);
    out.url = rd.installer_str(t, "url", where);
    out.path = rd.installer_str(t, "path", where);
    return rd.problems().size() == problems;
}

/// The sha256 of an entry's `hashes` table into `out.sha256`; problems are reported after
/// `prefix` (the entry named), a `hashes` of the wrong type after `where`.
void read_sha256(PylockReader& rd, const Value& t, const std::string& where, const std::string& prefix,
                 PylockWheel& out) {
    if (t.get("hashes") == nullptr) {
        rd.report(t.loc, prefix + "'hashes' is missing");
        return;
    }
    const auto* hashes = rd.typed(t, "hashes", ValueType::table, where);
    if (hashes == nullptr) return;
    const auto* h = hashes->get("sha256");
    if (h == nullptr) rd.report(hashes->loc, prefix + "no sha256 in 'hashes' (bootstrap checks sha256)");
    else if (!h->is(ValueType::string) || !is_hex64(h->string))
        rd.report(h->loc, prefix + "hashes.sha256 is not 64 hex digits");
    else out.sha256 = core::to_lower(h->string);
}

/// A relative `path` is relative to the pylock's directory.
void resolve_path(PylockWheel& out, const fs::path& dir) {
    if (!out.path.empty() && fs::path(out.path).is_relative()) out.path = (dir / out.path).lexically_normal().string();
}

/// One [[packages.wheels]] entry of package `p`.
PylockWheel read_wheel(PylockReader& rd, const Value& w, const fs::path& dir, const PylockPackage& p,
                       const std::string& where) {
    PylockWheel out;
    std::string name;
    if (!read_location(rd, w, where, out, name)) return out;
    if (out.url.empty() && out.path.empty()) rd.report(w.loc, where + "a wheel needs a 'url' or a 'path'");
    out.file_name = wheel_file_name(name, out.url, out.path);
    if (auto wheel = pyenv::parse_wheel_name(out.file_name); !wheel)
        rd.report(w.loc, fmt::format("{}{} is not a wheel file name", where, out.file_name));
    else if (!p.version.empty() && !pyenv::is_release_of(*wheel, p.name, p.version))
        rd.report(w.loc, fmt::format("{}{} is not a wheel of {} {}", where, out.file_name, p.name, p.version));
    read_sha256(rd, w, where, where + "wheel " + out.file_name + ": ", out);
    resolve_path(out, dir);
    return out;
}

/// A package's [packages.sdist]: as a wheel entry, but an sdist's file name, and `size` and
/// `upload-time` of their types.
PylockWheel read_sdist(PylockReader& rd, const Value& t, const fs::path& dir, const PylockPackage& p,
                       const std::string& where) {
    const std::string at = where + "sdist: ";
    PylockWheel out;
    std::string name;
    if (!read_location(rd, t, at, out, name)) return out;
    (void)rd.typed(t, "size", ValueType::integer, at);
    if (const auto* when = t.get("upload-time"); when != nullptr && !when->is(ValueType::date_time))
        rd.report(when->loc, at + "'upload-time' must be a date-time");
    if (out.url.empty() && out.path.empty()) rd.report(t.loc, at + "it needs a 'url' or a 'path'");
    out.file_name = wheel_file_name(name, out.url, out.path);
    if (!p.version.empty() && !pyenv::is_sdist_of(out.file_name, p.name, p.version))
        rd.report(t.loc, fmt::format("{}{} is not an sdist of {} {} (NAME-VERSION.tar.gz or .zip)", at, out.file_name,
                                     p.name, p.version));
    read_sha256(rd, t, at, at, out);
    resolve_path(out, dir);
    return out;
}

PylockDirectory read_directory(PylockReader& rd, const Value& d, const fs::path& dir, const std::string& where) {
    PylockDirectory out;
    out.loc = d.loc;
    out.path = rd.installer_str(d, "path", where + "directory: ", true);
    if (fs::path(out.path).is_relative()) {
        auto absolute = (dir / out.path).lexically_normal();  // "." -> "/dir/": no trailing '/'
        out.path = (absolute.has_filename() ? absolute : absolute.parent_path()).string();
    }
    out.editable = rd.boolean(d, "editable", false, where);
    return out;
}

/// One [[packages]] entry (nullopt when it has no name, or no source bootstrap reads).
std::optional<PylockPackage> read_package(PylockReader& rd, const Value& entry, size_t index, const fs::path& dir,
                                          const PylockPackageHook& hook) {
    auto raw_name = rd.required(entry, "name", fmt::format("packages[{}]: ", index));
    if (!raw_name) return std::nullopt;
    if (!pyenv::is_valid_name(*raw_name)) {
        rd.report(entry.get("name")->loc,
                  fmt::format("packages[{}]: '{}' is not a PEP 508 project name", index, core::clip(*raw_name, 80)));
        return std::nullopt;
    }
    PylockPackage p;
    p.loc = entry.loc;
    p.name = pyenv::normalize_name(*raw_name);
    const std::string where = fmt::format("package {}: ", p.name);
    p.version = rd.installer_str(entry, "version", where);
    p.marker = rd.installer_str(entry, "marker", where);
    if (!p.marker.empty())
        if (auto m = pyenv::Marker::parse(p.marker); !m) rd.report(entry.get("marker")->loc, where + m.error().message);
    p.index = rd.installer_str(entry, "index", where);
    if (hook) hook(rd, entry, p);
    for (const char* other : {"vcs", "archive"})
        if (const auto* v = entry.get(other))
            rd.report(v->loc, fmt::format("{}a '{}' source: bootstrap installs a pylock's wheels only", where, other));
    if (const auto* d = rd.typed(entry, "directory", ValueType::table, where)) {
        p.directory = read_directory(rd, *d, dir, where);
        return p;
    }
    const auto wheels = rd.tables(entry, "wheels", where);
    if (const auto* sdist = rd.typed(entry, "sdist", ValueType::table, where))
        p.sdist = read_sdist(rd, *sdist, dir, p, where);
    if (wheels.empty() && !p.sdist) {
        if (entry.get("sdist") != nullptr) return std::nullopt;  // reported: not a table
        if (entry.get("wheels") == nullptr) rd.report(entry.loc, where + "no 'wheels', 'sdist' nor 'directory'");
        else if (entry.get("wheels")->is(ValueType::array))
            rd.report(entry.get("wheels")->loc, where + "'wheels' is empty");
        return std::nullopt;
    }
    if (p.version.empty())
        rd.report(entry.loc, where + "'version' is missing (bootstrap pins every package by version)");
    for (const auto* w : wheels) p.wheels.push_back(read_wheel(rd, *w, dir, p, where));
    return p;
}

Error problems_error(std::string_view prefix, const std::vector<std::string>& problems) {
    const auto more = problems.size() > 1 ? fmt::format(" (and {} more problem(s))", problems.size() - 1) : "";
    return Error{ErrorCode::usage, fmt::format("{}{}{}", prefix, problems.front(), more),
                 problems.size() > 1 ? core::join(problems, "\n") : std::string()};
}

}  // namespace

bool read_pylock_header(PylockReader& rd, const Value& doc, PylockData& out) {
    // lock-version "1.x": an unknown major version must be an error (PEP 751).
    auto version = rd.required(doc, "lock-version", "");
    if (!version) return false;
    if (version->substr(0, version->find('.')) != "1") {
        rd.report(doc.get("lock-version")->loc,
                  fmt::format("lock-version \"{}\" is not supported: this bootstrap reads pylock.toml 1.x", *version));
        return false;
    }
    out.created_by = rd.required(doc, "created-by", "").value_or("");
    out.requires_python = rd.str(doc, "requires-python", "");
    if (!out.requires_python.empty())
        if (auto spec = pyenv::SpecifierSet::parse(out.requires_python); !spec)
            rd.report(doc.get("requires-python")->loc, "'requires-python': " + spec.error().message);
    out.environments = rd.strings(doc, "environments", "");
    if (const auto* envs = doc.get("environments"); envs != nullptr && envs->is(ValueType::array))
        for (const auto& item : envs->array)
            if (item.is(ValueType::string))
                if (auto m = pyenv::Marker::parse(item.string); !m)
                    rd.report(item.loc, "'environments': " + m.error().message);
    return true;
}

void read_pylock_packages(PylockReader& rd, const Value& doc, PylockData& out, const PylockPackageHook& hook) {
    if (doc.get("packages") == nullptr) rd.report(doc.loc, "'packages' is missing");
    std::map<std::string, int> seen;  // name -> line of its entry
    const auto packages = rd.tables(doc, "packages", "");
    const fs::path dir = out.file.parent_path();
    for (size_t i = 0; i < packages.size(); ++i) {
        auto p = read_package(rd, *packages[i], i, dir, hook);
        if (!p) continue;
        if (auto [it, fresh] = seen.emplace(p->name, packages[i]->loc.line); !fresh) {
            rd.report(packages[i]->loc, fmt::format("package {} is listed twice (also at line {}): bootstrap reads "
                                                    "locks of one environment",
                                                    p->name, it->second));
            continue;
        }
        out.packages.push_back(std::move(*p));
    }
}

Error invalid_pylock(const std::vector<std::string>& problems) {
    return problems_error("not a valid pylock.toml: ", problems);
}

Result<PylockData> read_pylock(std::string_view text, const fs::path& file) {
    BS_TRY(auto doc, recipe::parse_toml_document(text, file.string()));
    PylockReader rd;
    PylockData out;
    out.file = file;
    if (read_pylock_header(rd, doc, out)) read_pylock_packages(rd, doc, out);
    if (!rd.problems().empty()) return tl::unexpected(invalid_pylock(rd.problems()));
    return out;
}

Status check_lock_interpreter(const std::filesystem::path& file, const std::string& requires_python,
                              const std::vector<std::string>& environments, const pyenv::InterpreterFacts& python) {
    if (!requires_python.empty()) {
        auto spec = pyenv::SpecifierSet::parse(requires_python);
        auto version = pyenv::Version::parse(python.version);
        if (spec && version && !spec->contains(*version, true))
            return fail(
                ErrorCode::usage,
                fmt::format("{} requires Python {}; the venv's is {}", file.string(), requires_python, python.version),
                "lock again with this Python, or make the venv with the one the lock names");
    }
    if (environments.empty()) return {};
    for (const auto& env : environments)
        if (auto marker = pyenv::Marker::parse(env); marker && marker->evaluate(python.markers)) return {};
    auto value = [&](const char* name) {
        auto it = python.markers.find(name);
        return it == python.markers.end() ? std::string() : it->second;
    };
    return fail(
        ErrorCode::usage,
        fmt::format("{} is for {}; the venv's interpreter is sys_platform '{}', platform_machine '{}'", file.string(),
                    core::join(environments, " or "), value("sys_platform"), value("platform_machine")),
        "lock again on a machine like this one");
}

Status check_pylock_interpreter(const PylockData& lock, const pyenv::InterpreterFacts& python) {
    return check_lock_interpreter(lock.file, lock.requires_python, lock.environments, python);
}

Result<PylockPins> pylock_pins(const PylockData& lock) {
    PylockPins out;
    std::vector<std::string> problems;
    for (const auto& p : lock.packages) {
        const std::string at = p.loc.str() + ": package " + p.name;
        if (p.directory) {
            problems.push_back(
                fmt::format("{} is a source tree (directory {}), not a built wheel: build it with a "
                            "`build` step, or name it in a step's packages",
                            at, p.directory->path));
            continue;
        }
        std::vector<const PylockWheel*> files;  // the wheels, then the sdist
        for (const auto& w : p.wheels) files.push_back(&w);
        if (p.sdist) files.push_back(&*p.sdist);
        std::vector<const PylockWheel*> by_path;
        for (const auto* w : files)
            if (w->url.empty()) by_path.push_back(w);
        // Wheels on an index (a url each): the installer picks the one for the venv from the
        // step's indexes and --require-hashes proves it is one the lock names. Wheels given only
        // as files: that file (one, since nothing here picks among platforms).
        const bool from_index = by_path.size() < files.size();
        if (!from_index && by_path.size() != 1) {
            problems.push_back(fmt::format(
                "{} has {} {} by 'path' and none by 'url': bootstrap installs one {} per package", at, by_path.size(),
                p.sdist ? "files (wheels, sdist)" : "wheels", p.sdist ? "file" : "wheel file"));
            continue;
        }
        const std::string marker = p.marker.empty() ? "" : " ; " + p.marker;
        auto req = pyenv::Requirement::parse(p.name + "==" + p.version + marker);
        if (!req) {
            problems.push_back(fmt::format("{}: {}", at, req.error().message));
            continue;
        }
        out.requirements.push_back(std::move(*req));
        // The line is built from the checked fields only (pyenv/requirement_line.hpp).
        pyenv::HashedRequirement line{p.name, p.version, from_index ? "" : by_path.front()->path, p.marker, {}};
        for (const auto* w : files)
            if (from_index || w == by_path.front()) line.sha256.push_back(w->sha256);
        auto text = pyenv::hashed_requirement_line(line);
        if (!text) {
            problems.push_back(fmt::format("{}: {}", p.loc.str(), text.error().message));
            continue;
        }
        out.text += *text + "\n";
        if (!from_index) out.files.push_back(by_path.front()->path);
    }
    if (!problems.empty()) return tl::unexpected(problems_error("", problems));
    return out;
}

}  // namespace bootstrap::steps
