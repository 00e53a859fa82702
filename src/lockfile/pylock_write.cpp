// Writing a pylock.toml (lockfile/pylock.hpp): keys in the PEP's order, packages by name, one
// inline table per wheel, so two locks of one venv diff line by line.

#include <cctype>

#include <fmt/format.h>

#include "core/redact.hpp"
#include "core/strings.hpp"
#include "lockfile/index_page.hpp"
#include "lockfile/pylock.hpp"

namespace bootstrap::lockfile {

using manifest::LockedPackage;
using manifest::Lockfile;

namespace {

/// A TOML basic string.
std::string toml_string(std::string_view s) {
    std::string out = "\"";
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (c < 0x20 || c == 0x7f) out += fmt::format("\\u{:04X}", static_cast<unsigned>(c));
                else out += ch;
        }
    }
    return out + "\"";
}

/// `s` on one comment line: control characters (a newline would end the comment) as '?'.
std::string comment_text(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return out;
}

/// A key, bare when TOML allows it (step ids may hold anything a recipe allows).
std::string key(std::string_view k) {
    const bool bare = !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    });
    return bare ? std::string(k) : toml_string(k);
}

std::string array(const std::vector<std::string>& items) {
    std::vector<std::string> parts;
    for (const auto& item : items) parts.push_back(toml_string(item));
    return "[" + core::join(parts, ", ") + "]";
}

void put(std::string& out, std::string_view k, const std::string& literal) { out += key(k) + " = " + literal + "\n"; }

void put_string(std::string& out, std::string_view k, const std::string& value) {
    if (!value.empty()) put(out, k, toml_string(value));
}

/// "==3.11.*" for a lock made with Python 3.11.x: its wheels are that interpreter's.
std::string requires_python(const Lockfile& lock) {
    if (!lock.requires_python.empty()) return lock.requires_python;
    const auto parts = core::split(lock.python_version, '.');
    if (parts.size() < 2) return {};
    return fmt::format("=={}.{}.*", parts[0], parts[1]);
}

/// An editable project's source tree (its origin is a file:// URL), or "" when it has none.
std::string directory_of(const LockedPackage& p) {
    if (!p.sha256.empty() || p.origin.kind != manifest::OriginKind::editable || !p.origin.url.starts_with("file://"))
        return {};
    return core::percent_decode(std::string_view(p.origin.url).substr(7));
}

/// The origin bootstrap recorded, every URL redacted (the recorded ones already are).
void put_origin(std::string& out, const manifest::Origin& o) {
    put(out, "origin", toml_string(manifest::to_string(o.kind)));
    put_string(out, "step", o.step);
    if (!o.index_urls.empty()) {
        std::vector<std::string> urls;
        for (const auto& u : o.index_urls) urls.push_back(core::redact_url(u));
        put(out, "index-urls", array(urls));
    }
    put_string(out, "url", core::redact_url(o.url));
    put_string(out, "vcs", o.vcs);
    put_string(out, "commit", o.commit);
    put_string(out, "artifact-sha256", o.artifact_sha256);
    put_string(out, "archive-hash", o.archive_hash);
}

/// The wheel's inline table: its file name, where it is (url on its index, or the path of a
/// kept wheel), and its sha256.
std::string wheel_table(const LockedPackage& p) {
    std::vector<std::string> fields;
    if (!p.wheel.empty()) fields.push_back("name = " + toml_string(p.wheel));
    if (!p.url.empty()) fields.push_back("url = " + toml_string(core::strip_credentials(p.url)));
    else if (!p.path.empty()) fields.push_back("path = " + toml_string(p.path));
    fields.push_back("hashes = { sha256 = " + toml_string(p.sha256) + " }");
    return "{ " + core::join(fields, ", ") + " }";
}

void put_package(std::string& out, const LockedPackage& p, const std::string& directory) {
    out += "\n[[packages]]\n";
    put_string(out, "name", p.name);
    if (directory.empty()) put_string(out, "version", p.version);  // a source tree has none (PEP 751)
    put_string(out, "marker", p.marker);
    if (!p.index.empty()) put_string(out, "index", core::strip_credentials(p.index));
    if (!p.sdist.empty()) {
        out += "\n[packages.sdist]\n";
        put_string(out, "name", p.sdist);
        if (!p.url.empty()) put_string(out, "url", core::strip_credentials(p.url));
        else put_string(out, "path", p.path);
        put(out, "hashes", "{ sha256 = " + toml_string(p.sha256) + " }");
    } else if (directory.empty()) {
        out += "wheels = [\n    " + wheel_table(p) + ",\n]\n";
    } else {
        put(out, "directory", "{ path = " + toml_string(directory) + ", editable = true }");
    }
    out += "\n[packages.tool.bootstrap]\n";
    if (!directory.empty()) put_string(out, "version", p.version);
    put_origin(out, p.origin);
    put_string(out, "hash-source", p.hash_source);
    if (!p.sdist.empty()) {
        put_string(out, "built-wheel", p.built_wheel);
        put_string(out, "built-sha256", p.built_sha256);
        put_string(out, "built-key", p.built_key);
        put(out, "built-note", toml_string(manifest::k_built_note));
    }
}

/// [tool.bootstrap.recipe-inputs.<table>]: recorded meaning (recipe/meaning.hpp), one key per
/// input, a list as an array.
void put_inputs(std::string& out, const std::string& table, const std::vector<core::KeyInput>& inputs) {
    if (inputs.empty()) return;
    out += "\n[tool.bootstrap.recipe-inputs." + table + "]\n";
    for (const auto& in : inputs)
        put(out, in.field, in.list ? array(in.values) : toml_string(in.values.empty() ? "" : in.values.front()));
}

void put_tool(std::string& out, const Lockfile& lock, const std::vector<const LockedPackage*>& version_only) {
    out += "\n[tool.bootstrap]\n";
    put(out, "schema", std::to_string(lock.schema));
    put_string(out, "recipe", lock.recipe_name);
    put_string(out, "recipe-digest", lock.recipe_digest);
    put_string(out, "python", lock.python_version);
    put_string(out, "platform", lock.platform);
    for (const auto& [id, st] : lock.steps) {
        out += "\n[tool.bootstrap.steps." + key(id) + "]\n";
        if (!st.covered) put(out, "covered", "false");
        if (st.optional) put(out, "optional", "true");
        put_string(out, "why", core::redact_text(st.why));
        if (st.covered && !st.packages.empty()) put(out, "packages", array(st.packages));
    }
    for (const auto* p : version_only) {
        out += "\n[[tool.bootstrap.version-only]]\n";
        put_string(out, "name", p->name);
        put_string(out, "version", p->version);
        put_origin(out, p->origin);
    }
    put_inputs(out, "recipe", lock.recipe_inputs);
    for (const auto& [id, st] : lock.steps) put_inputs(out, "steps." + key(id), st.inputs);
}

}  // namespace

std::string to_pylock(const Lockfile& lock) {
    std::string out;
    out += fmt::format(
        "# A PEP 751 lock of the venv of bootstrap recipe {}: bootstrap lock --format pylock.\n"
        "# [tool.bootstrap] and [packages.tool.bootstrap] are what bootstrap's own --locked run reads.\n",
        lock.recipe_name.empty() ? std::string("(none)") : comment_text(lock.recipe_name));
    put(out, "lock-version", toml_string("1.0"));
    if (!lock.environments.empty()) put(out, "environments", array(lock.environments));
    put_string(out, "requires-python", requires_python(lock));
    put(out, "created-by", toml_string("bootstrap"));
    std::vector<const LockedPackage*> version_only;  // seeded by the venv's creation: no file to lock
    for (const auto& [name, p] : lock.packages) {
        const auto directory = directory_of(p);
        if (p.sha256.empty() && directory.empty()) version_only.push_back(&p);
        else put_package(out, p, directory);
    }
    put_tool(out, lock, version_only);
    return out;
}

fs::path pylock_path_in(const fs::path& dir, std::string_view recipe_name) {
    // PEP 751's name holds no dot; a recipe's name may hold anything (a '/' would leave `dir`).
    std::string name;
    for (const char c : recipe_name)
        name += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '-';
    return dir / ("pylock." + name + ".toml");
}

}  // namespace bootstrap::lockfile
