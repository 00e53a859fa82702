// The only reader of TOML: walks the toml++ tree into recipe structs, checking every key and
// type, and collects every problem instead of stopping at the first one. The top-level sections
// are read here; `[[step]]` tables go through the toml-free value tree (step_parser.cpp).

#include <algorithm>
#include <climits>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "recipe/prescan.hpp"
#include "recipe/recipe.hpp"
#include "recipe/step_parser.hpp"
#include "recipe/toml_reader.hpp"
#include "recipe/validate.hpp"

namespace bootstrap::recipe {

namespace {

using detail::contains;
using detail::Problem;
using detail::Reader;
using NodeType = toml::node_type;

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
        return std::pair(a.second.loc.line, a.second.loc.column) < std::pair(b.second.loc.line, b.second.loc.column);
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
            out.venv.python = *python;
            out.venv.python_loc = rd.loc(*n);
            if (!detail::is_python_version(*python) && !out.venv.python_is_path())
                rd.report(rd.loc(*n), fmt::format("'venv.python' must be a Python version like "
                                                  "\"3.12\" or an interpreter's path like "
                                                  "\"/usr/bin/python3.12\", not \"{}\"",
                                                  *python));
        }
    }
    if (const auto* n = t->get("installer")) {
        if (auto installer = rd.string(*n, "venv.installer")) {
            if (*installer == "uv") out.venv.installer = InstallerKind::uv;
            else if (*installer == "pip") out.venv.installer = InstallerKind::pip;
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
    if (const auto* n = t.get("timeout")) out.timeout = rd.integer(*n, "network.timeout", 1).value_or(out.timeout);
    if (const auto* n = t.get("retries")) out.retries = rd.integer(*n, "network.retries", 0).value_or(out.retries);
    if (const auto* n = t.get("attempts")) out.attempts = rd.integer(*n, "network.attempts", 1).value_or(out.attempts);
    if (const auto* n = t.get("max_download"))
        out.max_download = read_size(rd, *n, "network.max_download").value_or(out.max_download);
}

void read_env(Reader& rd, const toml::table& t, Recipe& out) {
    rd.unknown_keys(t, {"set", "unset", "secret", "key"}, " in [env]");
    if (const auto* n = t.get("set")) out.env_set = rd.env_table(*n, "env.set");
    if (const auto* n = t.get("unset")) out.env_unset = rd.env_names(*n, "env.unset");
    if (const auto* n = t.get("secret"))
        for (auto& name : rd.env_names(*n, "env.secret")) out.env_secret.insert(std::move(name));
    if (const auto* n = t.get("key"))
        for (auto& name : rd.env_names(*n, "env.key")) out.env_key.insert(std::move(name));
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
            rd.report(probe.loc, near.empty() ? fmt::format("unknown device probe '{}' (expected one of "
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
bool read_document(Reader& rd, const toml::table& root, const KindTable& kinds, const ClauseTable& clauses,
                   Recipe& out) {
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
    auto suggested = rd.unknown_keys(root,
                                     {"schema", "name", "summary", "vars", "venv", "network", "env", "device", "step",
                                      "lint", "fault", "flag_aliases", "perf"},
                                     " at top level");
    if (const auto* n = root.get("name")) {
        out.name = rd.string(*n, "name").value_or("");
        if (n->is_string() && out.name.empty()) rd.report(rd.loc(*n), "'name' must not be empty");
    } else if (!contains(suggested, "name")) {
        rd.report(rd.file_start(), "missing required key 'name'");
    }
    if (const auto* n = root.get("summary")) out.summary = rd.string(*n, "summary").value_or("");
    if (const auto* n = root.get("vars")) read_vars(rd, *n, out);
    if (root.contains("venv")) read_venv(rd, *root.get("venv"), out);
    else if (!contains(suggested, "venv")) rd.report(rd.file_start(), "missing required table [venv]");
    if (const auto* t = rd.section(root, "network")) read_network(rd, *t, out.network);
    if (const auto* t = rd.section(root, "env")) read_env(rd, *t, out);
    if (const auto* t = rd.section(root, "device")) read_device(rd, *t, out);
    if (const auto* n = root.get("step")) {
        detail::read_steps(rd.values(), rd.value(*n), kinds, clauses, out);
    }
    if (const auto* n = root.get("lint")) detail::read_lint_rules(rd, *n, out);
    if (const auto* n = root.get("fault")) detail::read_faults(rd, *n, out);
    if (const auto* n = root.get("flag_aliases")) detail::read_flag_aliases(rd, *n, out);
    if (const auto* t = rd.section(root, "perf")) detail::read_perf(rd, *t, out);
    detail::check_fault_steps(rd, out);
    return true;
}

Result<Recipe> parse_named(std::string_view text, const std::string& name, const KindTable& kinds,
                           const ClauseTable& clauses) {
    if (auto problem = detail::prescan_toml(text, name))
        return tl::unexpected(detail::make_recipe_error({std::move(*problem)}));
    toml::table root;
    try {
        root = toml::parse(text, std::string_view(name));
    } catch (const toml::parse_error& e) {
        SourceLoc where{name, static_cast<int>(e.source().begin.line), static_cast<int>(e.source().begin.column)};
        return tl::unexpected(detail::make_recipe_error({{where, std::string(e.description())}}));
    }
    Reader rd(name);
    Recipe out;
    if (read_document(rd, root, kinds, clauses, out)) detail::check_placeholders(out, rd.problems());
    if (!rd.problems().empty()) return tl::unexpected(detail::make_recipe_error(rd.problems()));
    out.source_digest = core::sha256_hex(text);
    return out;
}

}  // namespace

Result<Recipe> load_recipe(const std::filesystem::path& file, const KindTable& kinds, const ClauseTable& clauses) {
    // A recipe path comes from the command line: naming nothing or a directory is a usage error.
    std::error_code ec;
    auto status = std::filesystem::status(file, ec);
    if (status.type() == std::filesystem::file_type::not_found)
        return fail(ErrorCode::usage, fmt::format("{}: no such recipe file", file.string()));
    if (std::filesystem::is_directory(status))
        return fail(ErrorCode::usage, fmt::format("{}: is a directory, not a recipe file", file.string()));
    // A file over the limit is not even read (a regular one: a pipe has no size).
    if (auto size = std::filesystem::file_size(file, ec); !ec && size > detail::k_max_recipe_bytes)
        return tl::unexpected(detail::make_recipe_error({detail::too_large(size, file.string())}));
    // Only a regular file, bounded while it is read: a device (/dev/zero, or a .toml symlink to
    // it) or a FIFO is refused at once instead of filling memory.
    auto bytes = core::read_regular_file(file, detail::k_max_recipe_bytes);
    if (!bytes)
        return fail(bytes.error().code == ErrorCode::interrupted ? ErrorCode::interrupted : ErrorCode::io,
                    bytes.error().message, bytes.error().detail);
    BS_TRY(Recipe recipe, parse_named(*bytes, file.string(), kinds, clauses));
    auto absolute = std::filesystem::absolute(file, ec);
    recipe.file = ec ? file : absolute.lexically_normal();
    return recipe;
}

Result<Recipe> parse_recipe(std::string_view text, const std::string& name, const KindTable& kinds,
                            const ClauseTable& clauses) {
    BS_TRY(Recipe recipe, parse_named(text, name, kinds, clauses));
    recipe.file = name;
    return recipe;
}

}  // namespace bootstrap::recipe
