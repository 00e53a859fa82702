// The only reader of TOML: walks the toml++ tree into recipe structs, checking every key and
// type, and collects every problem instead of stopping at the first one.

#include <algorithm>
#include <climits>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "recipe/prescan.hpp"
#include "recipe/recipe.hpp"
#include "recipe/toml_reader.hpp"
#include "recipe/validate.hpp"

namespace bootstrap::recipe {

namespace {

using detail::Problem;
using detail::contains;
using detail::Reader;
using NodeType = toml::node_type;

// ---- steps ----------------------------------------------------------------------------------

// The step kinds a recipe may name, in the order error messages list them.
constexpr StepKind k_kinds[] = {StepKind::venv,  StepKind::install,  StepKind::sync, StepKind::run,
                                StepKind::check, StepKind::pybind11, StepKind::build};

constexpr unsigned bit(StepKind kind) { return 1u << static_cast<unsigned>(kind); }
constexpr unsigned every_kind() {
    unsigned bits = 0;
    for (auto kind : k_kinds) bits |= bit(kind);
    return bits;
}
constexpr unsigned k_every_kind = every_kind();
constexpr unsigned k_install = bit(StepKind::install);
constexpr unsigned k_sync = bit(StepKind::sync);
constexpr unsigned k_run = bit(StepKind::run);
constexpr unsigned k_pybind11 = bit(StepKind::pybind11);
constexpr unsigned k_build = bit(StepKind::build);

using StepField = void (*)(Reader&, const toml::node&, Step&);

struct StepKey {
    std::string_view name;
    unsigned kinds;  // bit(kind) for each kind the key is valid on
    StepField read;  // null for id/kind, which are read first
};

void read_verify(Reader& rd, const toml::node& n, Step& step);
void read_source(Reader& rd, const toml::node& n, Step& step);
void read_config_settings(Reader& rd, const toml::node& n, Step& step);

// Reads one key of a step: `r` is the Reader, `n` the value node, `s` the Step.
#define BS_STEP_FIELD(assignment) [](Reader& r, const toml::node& n, Step& s) { assignment; }

const StepKey k_step_keys[] = {
    {"id", k_every_kind, nullptr},
    {"kind", k_every_kind, nullptr},
    {"env", k_every_kind, BS_STEP_FIELD(s.env = r.env_table(n, "env"))},
    {"env_unset", k_every_kind, BS_STEP_FIELD(s.env_unset = r.env_names(n, "env_unset"))},
    {"timeout", k_every_kind, BS_STEP_FIELD(s.timeout = r.positive_number(n, "timeout"))},
    {"attempts", k_every_kind, BS_STEP_FIELD(s.attempts = r.integer(n, "attempts", 1))},
    {"optional", k_every_kind,
     BS_STEP_FIELD(s.optional = r.boolean(n, "optional").value_or(false))},
    {"verify", k_every_kind, read_verify},
    {"packages", k_install, BS_STEP_FIELD(s.packages = r.nonempty_texts(n, "packages"))},
    {"index_url", k_install, BS_STEP_FIELD(s.index_url = r.text(n, "index_url"))},
    {"extra_index_urls", k_install,
     BS_STEP_FIELD(s.extra_index_urls = r.texts(n, "extra_index_urls", true))},
    {"find_links", k_install, BS_STEP_FIELD(s.find_links = r.texts(n, "find_links", true))},
    {"upgrade", k_install, BS_STEP_FIELD(s.upgrade = r.boolean(n, "upgrade").value_or(false))},
    {"reinstall", k_install,
     BS_STEP_FIELD(s.reinstall = r.boolean(n, "reinstall").value_or(false))},
    {"no_deps", k_install, BS_STEP_FIELD(s.no_deps = r.boolean(n, "no_deps").value_or(false))},
    {"pre", k_install, BS_STEP_FIELD(s.pre = r.boolean(n, "pre").value_or(false))},
    {"allow_conflicts", k_install,
     BS_STEP_FIELD(s.allow_conflicts = r.strings(n, "allow_conflicts"))},
    {"project", k_sync, BS_STEP_FIELD(s.project = r.text(n, "project"))},
    {"args", k_sync, BS_STEP_FIELD(s.args = r.texts(n, "args"))},
    {"argv", k_run, BS_STEP_FIELD(s.argv = r.nonempty_texts(n, "argv"))},
    {"cwd", k_run, BS_STEP_FIELD(s.cwd = r.text(n, "cwd"))},
    {"creates", k_run, BS_STEP_FIELD(s.creates = r.text(n, "creates"))},
    {"unless", k_run, BS_STEP_FIELD(s.unless = r.nonempty_texts(n, "unless"))},
    {"source", k_pybind11 | k_build, read_source},
    {"module", k_pybind11, BS_STEP_FIELD(s.module = r.text(n, "module"))},
    {"output_dir", k_pybind11, BS_STEP_FIELD(s.output_dir = r.text(n, "output_dir"))},
    {"cxx", k_pybind11, BS_STEP_FIELD(s.cxx = r.text(n, "cxx"))},
    {"extra_args", k_pybind11, BS_STEP_FIELD(s.extra_args = r.texts(n, "extra_args"))},
    {"pybind11_include", k_pybind11,
     BS_STEP_FIELD(s.pybind11_include = r.text(n, "pybind11_include"))},
    {"no_build_isolation", k_build,
     BS_STEP_FIELD(s.no_build_isolation = r.boolean(n, "no_build_isolation").value_or(false))},
    {"config_settings", k_build, read_config_settings},
    {"abi_packages", k_build, BS_STEP_FIELD(s.abi_packages = r.strings(n, "abi_packages"))},
};

#undef BS_STEP_FIELD

/// Keys each kind cannot do without (check's "at least one verify clause" is separate).
const std::pair<StepKind, std::string_view> k_required[] = {
    {StepKind::install, "packages"}, {StepKind::sync, "project"}, {StepKind::run, "argv"},
    {StepKind::pybind11, "source"},  {StepKind::pybind11, "module"}, {StepKind::build, "source"}};

/// Kinds and verify clauses of later schema releases: named as unsupported, not as typos.
const std::vector<std::string> k_future_kinds{"fetch", "patch", "download", "cmake", "wheel"};
const std::vector<std::string> k_future_verify{"elf_symbol", "command", "library"};

std::vector<std::string> step_keys(unsigned kinds) {
    std::vector<std::string> out;
    for (const auto& k : k_step_keys)
        if (k.kinds & kinds) out.emplace_back(k.name);
    return out;
}

std::optional<StepKind> parse_kind(std::string_view name) {
    for (auto kind : k_kinds)
        if (name == to_string(kind)) return kind;
    return std::nullopt;
}

/// A value written literally (no placeholder) can be checked now; one with placeholders is
/// checked by the plan once expanded.
bool literal(const Text& t) { return t.value.find('{') == std::string::npos; }

/// pybind11: `source = "helpers.cpp"`. build: `source = { git = URL, rev = COMMIT }`,
/// `{ url = URL, sha256 = HEX }` or `{ path = DIR }`, each with optional `subdirectory`.
void read_source(Reader& rd, const toml::node& n, Step& step) {
    if (step.kind == StepKind::pybind11) {
        step.source = rd.text(n, "source");
        return;
    }
    if (!rd.expect(n, NodeType::table, "source",
                   "a table: { git = URL, rev = COMMIT }, { url = URL, sha256 = HEX } or { path = DIR }"))
        return;
    const auto& t = *n.as_table();
    BuildSource src;
    src.loc = rd.loc(n);
    auto suggested = rd.unknown_keys(t, {"git", "rev", "submodules", "url", "sha256", "path", "subdirectory"},
                                     " in 'source'");
    const toml::node* git = t.get("git");
    const toml::node* url = t.get("url");
    const toml::node* path = t.get("path");
    int kinds = (git != nullptr) + (url != nullptr) + (path != nullptr);
    if (kinds != 1) {
        if (kinds == 0 && !suggested.empty()) return;
        rd.report(src.loc, kinds == 0 ? "'source' needs one of 'git' (with 'rev'), 'url' (with 'sha256') or 'path'"
                                      : "'source' takes only one of 'git', 'url' and 'path'");
        return;
    }
    auto only_with = [&](const char* key, const char* kind) {
        if (const toml::node* k = t.get(key))
            rd.report(rd.loc(*k), fmt::format("'{}' is valid only with '{}' in 'source'", key, kind));
    };
    if (git) {
        src.kind = BuildSource::Kind::git;
        auto location = rd.text(*git, "source.git");
        if (location) src.location = *location;
        if (location && literal(*location))
            if (auto why = git_url_problem(location->value); !why.empty())
                rd.report(location->loc, fmt::format("'source.git' cannot be '{}': {}", location->value, why));
        only_with("sha256", "url");
        if (const toml::node* rev = t.get("rev")) {
            src.rev = rd.text(*rev, "source.rev");
            if (src.rev && literal(*src.rev) &&
                !is_commit_id(src.rev->value))
                rd.report(src.rev->loc,
                          fmt::format("'source.rev' must be a full commit id (40 hex digits), not '{}': a branch "
                                      "or tag can move, and a build must be reproducible",
                                      src.rev->value));
        } else if (!contains(suggested, "rev")) {
            rd.report(src.loc, "a git source needs 'rev', the full commit id to build");
        }
        if (const toml::node* sub = t.get("submodules"))
            src.submodules = rd.boolean(*sub, "source.submodules").value_or(false);
    } else if (url) {
        src.kind = BuildSource::Kind::url;
        auto location = rd.text(*url, "source.url");
        if (location) src.location = *location;
        only_with("rev", "git");
        only_with("submodules", "git");
        if (const toml::node* sha = t.get("sha256")) {
            src.sha256 = rd.text(*sha, "source.sha256");
            if (src.sha256 && literal(*src.sha256) && !core::is_sha256_hex(core::to_lower(src.sha256->value)))
                rd.report(src.sha256->loc,
                          fmt::format("'source.sha256' must be 64 hex digits, not '{}'", src.sha256->value));
        } else if (!contains(suggested, "sha256")) {
            rd.report(src.loc, "a url source needs 'sha256': an archive is never built unchecked");
        }
    } else {
        src.kind = BuildSource::Kind::path;
        auto location = rd.text(*path, "source.path");
        if (location) src.location = *location;
        only_with("rev", "git");
        only_with("submodules", "git");
        only_with("sha256", "url");
    }
    if (const toml::node* sub = t.get("subdirectory")) src.subdirectory = rd.text(*sub, "source.subdirectory");
    step.build_source = std::move(src);
}

/// `config_settings = { "--build-option" = "--cpp_ext" }`: PEP 517 config settings, passed to the
/// build frontend in file order.
void read_config_settings(Reader& rd, const toml::node& n, Step& step) {
    if (!rd.expect(n, NodeType::table, "config_settings", "a table of strings")) return;
    for (auto&& [key, value] : *n.as_table())
        if (auto t = rd.text(value, fmt::format("config_settings.{}", key.str())))
            step.config_settings.emplace_back(std::string(key.str()), *t);
}

/// `{ cuda_arch = "9.0", module = "name" }` or `{ cuda_arch = "9.0", path = "lib/x.so" }`.
void read_cuda_arch_clause(Reader& rd, const toml::table& t, const std::string& name,
                           VerifyClause clause, Step& step) {
    if (const toml::node* version = t.get("version"))
        rd.report(rd.loc(*version), "'version' is valid only with 'import' in a verify clause");
    auto suggested = rd.unknown_keys(t, {"cuda_arch", "module", "path", "version"}, " in verify clause");
    const toml::node* module = t.get("module");
    const toml::node* path = t.get("path");
    if (!module && !path) {
        if (contains(suggested, "module") || contains(suggested, "path")) return;
        rd.report(clause.loc, "a 'cuda_arch' verify clause needs 'module' or 'path' (the library "
                              "to inspect)");
        return;
    }
    if (module && path) {
        rd.report(clause.loc, "a 'cuda_arch' verify clause takes 'module' or 'path', not both");
        return;
    }
    auto arch = rd.text(*t.get("cuda_arch"), name + ".cuda_arch");
    auto library = rd.text(module ? *module : *path, name + (module ? ".module" : ".path"));
    if (!arch || !library) return;
    clause.kind = VerifyClause::Kind::cuda_arch;
    clause.target = std::move(*arch);
    clause.library = std::move(*library);
    clause.library_is_module = module != nullptr;
    step.verify.push_back(std::move(clause));
}

/// `version = ">=2.1"`: a non-empty string here; the plan parses it as a PEP 440 specifier
/// (the recipe module has no PEP 440 parser of its own).
std::optional<Text> read_version_specifier(Reader& rd, const toml::node& n, const std::string& name) {
    auto version = rd.text(n, name + ".version");
    if (version && core::trim(version->value).empty()) {
        rd.report(version->loc, fmt::format("'{}.version' must be a version specifier such as "
                                            "'>=2.1', not empty",
                                            name));
        return std::nullopt;
    }
    return version;
}

void read_verify_clause(Reader& rd, const toml::table& t, const std::string& name, Step& step) {
    VerifyClause clause;
    clause.loc = rd.loc(t);
    const toml::node* import = t.get("import");
    const toml::node* file = t.get("file");
    if (!import && !file && t.contains("cuda_arch")) {
        read_cuda_arch_clause(rd, t, name, std::move(clause), step);
        return;
    }
    if (!import && !file) {
        for (auto&& [key, value] : t) {
            if (contains(k_future_verify, key.str())) {
                rd.report(clause.loc, fmt::format("verify clause '{}' is not supported by this "
                                                  "version of bootstrap",
                                                  key.str()));
                return;
            }
        }
    }
    auto suggested =
        rd.unknown_keys(t, {"import", "attr", "file", "version", "preload"}, " in verify clause");
    if (!import && !file && !contains(suggested, "import") && !contains(suggested, "file"))
        rd.report(clause.loc, "a verify clause needs 'import' or 'file'");
    if (import && file) {
        rd.report(clause.loc, "a verify clause takes 'import' or 'file', not both");
        return;
    }
    if (const toml::node* attr = t.get("attr")) {
        if (file)
            rd.report(rd.loc(*attr), "'attr' is valid only with 'import' in a verify clause");
        else
            clause.attr = rd.text(*attr, name + ".attr");
    }
    if (const toml::node* version = t.get("version")) {
        if (file)
            rd.report(rd.loc(*version), "'version' is valid only with 'import' in a verify clause");
        else
            clause.version = read_version_specifier(rd, *version, name);
    }
    if (const toml::node* preload = t.get("preload")) {  // modules the probe imports first
        if (file)
            rd.report(rd.loc(*preload), "'preload' is valid only with 'import' in a verify clause");
        else
            for (auto& m : rd.nonempty_texts(*preload, name + ".preload")) {
                if (core::trim(m.value).empty() ||
                    m.value.find_first_of(" \t\n,") != std::string::npos)
                    rd.report(m.loc, fmt::format("'{}.preload' names modules such as \"torch\", "
                                                 "not '{}'", name, m.value));
                else
                    clause.preload.push_back(std::move(m));
            }
    }
    if (!import && !file) return;
    clause.kind = import ? VerifyClause::Kind::import_module : VerifyClause::Kind::file;
    auto target = rd.text(import ? *import : *file, name + (import ? ".import" : ".file"));
    if (!target) return;
    clause.target = std::move(*target);
    step.verify.push_back(std::move(clause));
}

void read_verify(Reader& rd, const toml::node& n, Step& step) {
    if (!rd.expect(n, NodeType::array, "verify", "an array of tables")) return;
    const auto& arr = *n.as_array();
    for (size_t i = 0; i < arr.size(); ++i) {
        std::string name = fmt::format("verify[{}]", i);
        if (rd.expect(arr[i], NodeType::table, name, "a table"))
            read_verify_clause(rd, *arr[i].as_table(), name, step);
    }
}

/// The step's id, checked for form and uniqueness; `label` becomes "step 'id'" when valid.
void read_step_id(Reader& rd, const toml::table& t, Step& step, std::string& label,
                  std::map<std::string, SourceLoc>& ids) {
    const toml::node* n = t.get("id");
    if (!n) {
        rd.report(step.loc, fmt::format("{} is missing required key 'id'", label));
        return;
    }
    auto id = rd.string(*n, "id");
    if (!id) return;
    step.id = *id;
    if (!detail::is_step_id(*id)) {
        rd.report(rd.loc(*n), fmt::format("step id '{}' may contain only letters, digits, '_', "
                                          "'.' and '-'",
                                          *id));
        return;
    }
    label = fmt::format("step '{}'", *id);
    auto [first, fresh] = ids.emplace(*id, rd.loc(*n));
    if (!fresh)
        rd.report(rd.loc(*n), fmt::format("duplicate step id '{}' (first defined at {})", *id,
                                          first->second.str()));
}

std::optional<StepKind> read_step_kind(Reader& rd, const toml::table& t, const Step& step,
                                       const std::string& label) {
    const toml::node* n = t.get("kind");
    if (!n) {
        rd.report(step.loc, fmt::format("{} is missing required key 'kind'", label));
        return std::nullopt;
    }
    auto name = rd.string(*n, "kind");
    if (!name) return std::nullopt;
    if (auto kind = parse_kind(*name)) return kind;
    if (contains(k_future_kinds, *name)) {
        rd.report(rd.loc(*n), fmt::format("step kind '{}' is not supported by this version of "
                                          "bootstrap",
                                          *name));
        return std::nullopt;
    }
    std::vector<std::string> names;
    for (auto kind : k_kinds) names.emplace_back(to_string(kind));
    std::string near = core::closest_match(*name, names);
    rd.report(rd.loc(*n),
              near.empty()
                  ? fmt::format("unknown step kind '{}' (expected one of {})", *name,
                                core::join(names, ", "))
                  : fmt::format("unknown step kind '{}' (did you mean '{}'?)", *name, near));
    return std::nullopt;
}

std::optional<Step> read_step(Reader& rd, const toml::table& t, size_t index,
                              std::map<std::string, SourceLoc>& ids) {
    Step step;
    step.loc = rd.loc(t);
    std::string label = fmt::format("step #{}", index + 1);
    read_step_id(rd, t, step, label, ids);
    // Without a kind the valid keys are unknown; a later-release kind's keys would be noise.
    auto kind = read_step_kind(rd, t, step, label);
    if (!kind) return std::nullopt;
    step.kind = *kind;

    std::vector<std::string> suggested;  // a typo of a required key already says it is missing
    for (auto&& [key, value] : t) {
        auto spec = std::find_if(std::begin(k_step_keys), std::end(k_step_keys),
                                 [&name = key](const StepKey& k) { return k.name == name.str(); });
        if (spec == std::end(k_step_keys)) {
            auto known = step_keys(bit(*kind));
            if (core::closest_match(key.str(), known).empty()) known = step_keys(k_every_kind);
            suggested.push_back(rd.unknown_key(key, known, " in " + label));
        } else if (!(spec->kinds & bit(*kind))) {
            rd.report(rd.loc(key), fmt::format("key '{}' is not valid for a step of kind '{}'",
                                               key.str(), to_string(*kind)));
        } else if (spec->read) {
            spec->read(rd, value, step);
        }
    }
    for (const auto& [kind_needing, key] : k_required)
        if (kind_needing == *kind && !t.contains(key) && !contains(suggested, key))
            rd.report(step.loc, fmt::format("{} (kind {}) is missing required key '{}'", label,
                                            to_string(*kind), key));
    const auto* verify = t.get("verify");
    if (*kind == StepKind::check && !contains(suggested, "verify") &&
        (!verify || (verify->is_array() && verify->as_array()->empty())))
        rd.report(step.loc, fmt::format("{} (kind check) needs at least one verify clause", label));
    return step;
}

void read_steps(Reader& rd, const toml::node& n, Recipe& out) {
    if (n.is_table()) {
        rd.report(rd.loc(n), "'step' must be an array of tables (write [[step]]), not a table");
        return;
    }
    if (!rd.expect(n, NodeType::array, "step", "an array of tables")) return;
    std::map<std::string, SourceLoc> ids;
    const auto& arr = *n.as_array();
    for (size_t i = 0; i < arr.size(); ++i) {
        if (!rd.expect(arr[i], NodeType::table, fmt::format("step[{}]", i), "a table")) continue;
        if (auto step = read_step(rd, *arr[i].as_table(), i, ids))
            out.steps.push_back(std::move(*step));
    }
}

// ---- sections -------------------------------------------------------------------------------

void read_vars(Reader& rd, const toml::node& n, Recipe& out) {
    if (!rd.expect(n, NodeType::table, "vars", "a table of strings")) return;
    for (auto&& [key, value] : *n.as_table()) {
        std::string name(key.str());
        if (!detail::is_var_name(name))
            rd.report(rd.loc(key), fmt::format("variable name '{}' may contain only letters, "
                                               "digits, '_' and '-'",
                                               name));
        if (auto text = rd.text(value, "vars." + name)) out.vars.emplace_back(name, *text);
    }
    // toml++ keeps tables sorted by key; a variable may use only those written before it.
    std::stable_sort(out.vars.begin(), out.vars.end(), [](const auto& a, const auto& b) {
        return std::pair(a.second.loc.line, a.second.loc.column) <
               std::pair(b.second.loc.line, b.second.loc.column);
    });
}

void read_venv(Reader& rd, const toml::node& n, Recipe& out) {
    if (!rd.expect(n, NodeType::table, "venv", "a table")) return;
    const toml::table* t = n.as_table();
    out.venv.loc = rd.loc(*t);
    auto suggested = rd.unknown_keys(*t, {"path", "python", "installer"}, " in [venv]");
    for (std::string_view key : {"path", "python"})
        if (!t->contains(key) && !contains(suggested, key))
            rd.report(out.venv.loc, fmt::format("[venv] is missing required key '{}'", key));
    if (const auto* n = t->get("path"))
        if (auto path = rd.text(*n, "venv.path")) out.venv.path = *path;
    if (const auto* n = t->get("python")) {
        if (auto python = rd.string(*n, "venv.python")) {
            if (!detail::is_python_version(*python))
                rd.report(rd.loc(*n), fmt::format("'venv.python' must be a Python version like "
                                                  "\"3.12\", not \"{}\"",
                                                  *python));
            out.venv.python = *python;
        }
    }
    if (const auto* n = t->get("installer")) {
        if (auto installer = rd.string(*n, "venv.installer")) {
            if (*installer == "uv")
                out.venv.installer = InstallerKind::uv;
            else if (*installer == "pip")
                out.venv.installer = InstallerKind::pip;
            else
                rd.report(rd.loc(*n), fmt::format("'venv.installer' must be \"uv\" or \"pip\", "
                                                  "not \"{}\"",
                                                  *installer));
        }
    }
}

/// `max_download`: a number of bytes, or a string with a unit ("2GiB", "500 MB").
std::optional<uint64_t> read_size(Reader& rd, const toml::node& n, std::string_view name) {
    std::optional<uint64_t> size;
    if (n.is_integer()) {
        if (n.as_integer()->get() >= 0) size = static_cast<uint64_t>(n.as_integer()->get());
    } else if (n.is_string()) {
        size = core::parse_size(n.as_string()->get());
    } else {
        rd.expect(n, NodeType::string, name, "a size (\"2GiB\", \"500MB\" or a number of bytes)");
        return std::nullopt;
    }
    if (!size) {
        rd.report(rd.loc(n), fmt::format("'{}' must be a size such as \"2GiB\", \"500MB\" or a "
                                         "number of bytes, not {}",
                                         name,
                                         n.is_string() ? "\"" + n.as_string()->get() + "\""
                                                       : std::to_string(n.as_integer()->get())));
        return std::nullopt;
    }
    if (*size == 0) {
        rd.report(rd.loc(n), fmt::format("'{}' must be more than 0 bytes", name));
        return std::nullopt;
    }
    return size;
}

void read_network(Reader& rd, const toml::table& t, NetworkSection& out) {
    rd.unknown_keys(t, {"timeout", "retries", "attempts", "max_download"}, " in [network]");
    if (const auto* n = t.get("timeout"))
        out.timeout = rd.integer(*n, "network.timeout", 1).value_or(out.timeout);
    if (const auto* n = t.get("retries"))
        out.retries = rd.integer(*n, "network.retries", 0).value_or(out.retries);
    if (const auto* n = t.get("attempts"))
        out.attempts = rd.integer(*n, "network.attempts", 1).value_or(out.attempts);
    if (const auto* n = t.get("max_download"))
        out.max_download = read_size(rd, *n, "network.max_download").value_or(out.max_download);
}

void read_env(Reader& rd, const toml::table& t, Recipe& out) {
    rd.unknown_keys(t, {"set", "unset", "secret"}, " in [env]");
    if (const auto* n = t.get("set")) out.env_set = rd.env_table(*n, "env.set");
    if (const auto* n = t.get("unset")) out.env_unset = rd.env_names(*n, "env.unset");
    if (const auto* n = t.get("secret"))
        for (auto& name : rd.env_names(*n, "env.secret")) out.env_secret.insert(std::move(name));
}

void read_device(Reader& rd, const toml::table& t, Recipe& out) {
    static const std::vector<std::string> k_probes{"torch", "driver", "nvml", "nvidia-smi"};
    rd.unknown_keys(t, {"probes", "fallback_arch", "ptx"}, " in [device]");
    if (const auto* n = t.get("ptx")) out.device_ptx = rd.boolean(*n, "device.ptx").value_or(false);
    if (const auto* n = t.get("probes")) {
        for (auto& probe : rd.texts(*n, "device.probes")) {
            if (contains(k_probes, probe.value)) {
                out.device_probes.push_back(probe.value);
                continue;
            }
            std::string near = core::closest_match(probe.value, k_probes);
            rd.report(probe.loc, near.empty()
                                     ? fmt::format("unknown device probe '{}' (expected one of "
                                                   "torch, driver, nvml, nvidia-smi)",
                                                   probe.value)
                                     : fmt::format("unknown device probe '{}' (did you mean "
                                                   "'{}'?)",
                                                   probe.value, near));
        }
    }
    if (const auto* n = t.get("fallback_arch")) {
        if (auto arch = rd.string(*n, "device.fallback_arch")) {
            if (!detail::is_arch(*arch))
                rd.report(rd.loc(*n), fmt::format("'device.fallback_arch' must be a compute "
                                                  "capability like \"9.0\", not \"{}\"",
                                                  *arch));
            out.device_fallback_arch = *arch;
        }
    }
}

/// Read the whole document; false when the schema is one this version does not read, in
/// which case nothing else is checked (its keys would only be noise).
bool read_document(Reader& rd, const toml::table& root, Recipe& out) {
    const toml::node* schema = root.get("schema");
    if (!schema) {
        rd.report(rd.file_start(), "missing required key 'schema' (this bootstrap reads schema 1)");
    } else if (schema->is_integer() && schema->as_integer()->get() != 1) {
        rd.report(rd.loc(*schema), fmt::format("unsupported schema version {} (this bootstrap "
                                               "reads schema 1)",
                                               schema->as_integer()->get()));
        return false;
    } else {
        out.schema = rd.integer(*schema, "schema", 1).value_or(1);
    }
    auto suggested = rd.unknown_keys(
        root,
        {"schema", "name", "summary", "vars", "venv", "network", "env", "device", "step", "lint",
         "fault", "flag_aliases", "perf"},
        " at top level");
    if (const auto* n = root.get("name")) {
        out.name = rd.string(*n, "name").value_or("");
        if (n->is_string() && out.name.empty()) rd.report(rd.loc(*n), "'name' must not be empty");
    } else if (!contains(suggested, "name")) {
        rd.report(rd.file_start(), "missing required key 'name'");
    }
    if (const auto* n = root.get("summary")) out.summary = rd.string(*n, "summary").value_or("");
    if (const auto* n = root.get("vars")) read_vars(rd, *n, out);
    if (root.contains("venv"))
        read_venv(rd, *root.get("venv"), out);
    else if (!contains(suggested, "venv"))
        rd.report(rd.file_start(), "missing required table [venv]");
    if (const auto* t = rd.section(root, "network")) read_network(rd, *t, out.network);
    if (const auto* t = rd.section(root, "env")) read_env(rd, *t, out);
    if (const auto* t = rd.section(root, "device")) read_device(rd, *t, out);
    if (const auto* n = root.get("step")) read_steps(rd, *n, out);
    if (const auto* n = root.get("lint")) detail::read_lint_rules(rd, *n, out);
    if (const auto* n = root.get("fault")) detail::read_faults(rd, *n, out);
    if (const auto* n = root.get("flag_aliases")) detail::read_flag_aliases(rd, *n, out);
    if (const auto* t = rd.section(root, "perf")) detail::read_perf(rd, *t, out);
    detail::check_fault_steps(rd, out);
    return true;
}

Result<Recipe> parse_named(std::string_view text, const std::string& name) {
    if (auto problem = detail::prescan_toml(text, name))
        return tl::unexpected(detail::make_recipe_error({std::move(*problem)}));
    toml::table root;
    try {
        root = toml::parse(text, std::string_view(name));
    } catch (const toml::parse_error& e) {
        SourceLoc where{name, static_cast<int>(e.source().begin.line),
                        static_cast<int>(e.source().begin.column)};
        return tl::unexpected(detail::make_recipe_error({{where, std::string(e.description())}}));
    }
    Reader rd(name);
    Recipe out;
    if (read_document(rd, root, out)) detail::check_placeholders(out, rd.problems());
    if (!rd.problems().empty()) return tl::unexpected(detail::make_recipe_error(rd.problems()));
    out.source_digest = core::sha256_hex(text);
    return out;
}

}  // namespace

Result<Recipe> load_recipe(const std::filesystem::path& file) {
    // A recipe path comes from the command line: naming nothing or a directory is a usage error.
    std::error_code ec;
    auto status = std::filesystem::status(file, ec);
    if (status.type() == std::filesystem::file_type::not_found)
        return fail(ErrorCode::usage, fmt::format("{}: no such recipe file", file.string()));
    if (std::filesystem::is_directory(status))
        return fail(ErrorCode::usage,
                    fmt::format("{}: is a directory, not a recipe file", file.string()));
    // A file over the limit is not even read (a regular one: a pipe has no size).
    if (auto size = std::filesystem::file_size(file, ec); !ec && size > detail::k_max_recipe_bytes)
        return tl::unexpected(detail::make_recipe_error({detail::too_large(size, file.string())}));
    auto bytes = core::read_file(file);
    if (!bytes) return fail(ErrorCode::io, bytes.error().message, bytes.error().detail);
    BS_TRY(Recipe recipe, parse_named(*bytes, file.string()));
    auto absolute = std::filesystem::absolute(file, ec);
    recipe.file = ec ? file : absolute.lexically_normal();
    return recipe;
}

Result<Recipe> parse_recipe(std::string_view text, const std::string& name) {
    BS_TRY(Recipe recipe, parse_named(text, name));
    recipe.file = name;
    return recipe;
}

}  // namespace bootstrap::recipe
