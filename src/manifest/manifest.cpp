#include "manifest/manifest.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"

namespace bootstrap::manifest {

namespace {

using nlohmann::json;

// ---- writing ----------------------------------------------------------------------------------

/// Only the fields that say something: an index origin is {"kind": "index"} until the engine
/// annotates it, which keeps a 300-package manifest readable.
json origin_json(const Origin& o) {
    json j{{"kind", o.kind}};
    auto put = [&](const char* key, const std::string& value) {
        if (!value.empty())
            j[key] = value;
    };
    put("url", o.url);
    put("vcs", o.vcs);
    put("commit", o.commit);
    if (!o.index_urls.empty())
        j["index_urls"] = o.index_urls; // order matters: kept as a list
    put("step", o.step);
    put("artifact_sha256", o.artifact_sha256);
    put("archive_hash", o.archive_hash);
    return j;
}

json package_json(const Package& p) {
    json j{{"display_name", p.display_name}, {"version", p.version},
           {"installer", p.installer},       {"requested", p.requested},
           {"wheel_tag", p.wheel_tag},       {"record_sha256", p.record_sha256},
           {"record_sha256_portable", p.record_sha256_portable},
           {"origin", origin_json(p.origin)}};
    if (!p.broken.empty())
        j["broken"] = p.broken;
    return j;
}

// ---- reading ----------------------------------------------------------------------------------

/// A structural problem, thrown inside this file only and turned into an Error by from_json.
struct Invalid {
    std::string what;
};

/// Typed access to one JSON object, naming the dotted path of a field in errors
/// ("packages.torch.version: expected a string").
class Fields {
  public:
    Fields(const json& j, std::string path) : m_j(j), m_path(std::move(path)) {
        if (!m_j.is_object())
            throw Invalid{where() + "expected an object"};
    }

    std::string str(const char* key) const {
        const json* v = find(key);
        if (!v)
            return {};
        if (!v->is_string())
            throw Invalid{where(key) + "expected a string"};
        return v->get<std::string>();
    }
    bool boolean(const char* key) const {
        const json* v = find(key);
        if (!v)
            return false;
        if (!v->is_boolean())
            throw Invalid{where(key) + "expected true or false"};
        return v->get<bool>();
    }
    std::vector<std::string> strings(const char* key) const {
        std::vector<std::string> out;
        const json* v = find(key);
        if (!v)
            return out;
        if (!v->is_array())
            throw Invalid{where(key) + "expected a list of strings"};
        for (const auto& item : *v) {
            if (!item.is_string())
                throw Invalid{where(key) + "expected a list of strings"};
            out.push_back(item.get<std::string>());
        }
        return out;
    }
    std::map<std::string, std::string> string_map(const char* key) const {
        std::map<std::string, std::string> out;
        const json* v = find(key);
        if (!v || v->is_null())
            return out;
        Fields inner(*v, child(key));
        for (const auto& [k, item] : v->items()) {
            if (!item.is_string())
                throw Invalid{inner.where(k.c_str()) + "expected a string"};
            out[k] = item.get<std::string>();
        }
        return out;
    }
    /// A nested object, or nullptr when absent or null.
    const json* object(const char* key) const {
        const json* v = find(key);
        return v && !v->is_null() ? v : nullptr;
    }
    std::string child(std::string_view key) const {
        return m_path.empty() ? std::string(key) : m_path + "." + std::string(key);
    }

  private:
    const json* find(const char* key) const {
        auto it = m_j.find(key);
        return it == m_j.end() ? nullptr : &*it;
    }
    std::string where(std::string_view key = {}) const {
        std::string p = key.empty() ? m_path : child(key);
        return p.empty() ? "" : p + ": ";
    }

    const json& m_j;
    std::string m_path;
};

Origin read_origin(const json& j, const std::string& path) {
    Fields f(j, path);
    Origin o;
    o.kind = f.str("kind");
    if (o.kind.empty())
        o.kind = "unknown";
    o.url = f.str("url");
    o.vcs = f.str("vcs");
    o.commit = f.str("commit");
    o.index_urls = f.strings("index_urls");
    o.step = f.str("step");
    o.artifact_sha256 = f.str("artifact_sha256");
    o.archive_hash = f.str("archive_hash");
    return o;
}

Package read_package(const std::string& name, const json& j) {
    std::string path = "packages." + name;
    Fields f(j, path);
    Package p;
    p.name = name;
    p.display_name = f.str("display_name");
    p.version = f.str("version");
    p.broken = f.str("broken");
    // A broken install's version comes from its directory name, which may not have one.
    if (p.version.empty() && p.broken.empty())
        throw Invalid{path + ": no version"};
    p.installer = f.str("installer");
    p.requested = f.boolean("requested");
    p.wheel_tag = f.str("wheel_tag");
    p.record_sha256 = f.str("record_sha256");
    p.record_sha256_portable = f.str("record_sha256_portable");
    if (const json* o = f.object("origin"))
        p.origin = read_origin(*o, path + ".origin");
    return p;
}

Manifest read_manifest(const json& j) {
    Fields top(j, "");
    Manifest m;
    m.label = top.str("label");
    m.venv = top.str("venv");
    const json* packages = top.object("packages");
    if (!packages)
        throw Invalid{"no \"packages\" object"};
    if (!packages->is_object())
        throw Invalid{"packages: expected an object"};
    for (const auto& [name, value] : packages->items())
        m.packages.emplace(name, read_package(name, value));
    if (const json* py = top.object("python")) {
        Fields f(*py, "python");
        m.python = {f.str("version"), f.str("implementation"), f.str("ext_suffix"), f.str("soabi"),
                    f.str("platform")};
    }
    if (const json* t = top.object("torch")) {
        Fields f(*t, "torch");
        m.torch = Torch{f.str("version"), f.str("cuda"), f.str("cxx11_abi")};
    }
    if (const json* h = top.object("host")) {
        Fields f(*h, "host");
        m.host = {f.str("glibc"), f.str("glibcxx"), f.str("gcc"), f.str("nvcc"), f.str("driver")};
    }
    m.build_env = top.string_map("build_env");
    if (const json* r = top.object("recipe")) {
        Fields f(*r, "recipe");
        m.recipe_name = f.str("name");
        m.recipe_digest = f.str("digest");
    }
    m.device = top.string_map("device");
    if (const json* r = top.object("run")) {
        Fields f(*r, "run");
        RunInfo run{f.str("run_id"), f.str("phase"), f.str("time"), true};
        if (r->contains("ok"))
            run.ok = f.boolean("ok");
        m.run = run;
    }
    return m;
}

} // namespace

std::string to_json(const Manifest& m) {
    // nlohmann::json objects are std::map-backed: keys come out sorted, so equal manifests give
    // byte-identical text.
    json packages = json::object();
    for (const auto& [name, p] : m.packages)
        packages[name] = package_json(p);
    json j{
        {"schema", m.schema},
        {"label", m.label},
        {"venv", m.venv},
        {"packages", std::move(packages)},
        {"python",
         {{"version", m.python.version},
          {"implementation", m.python.implementation},
          {"ext_suffix", m.python.ext_suffix},
          {"soabi", m.python.soabi},
          {"platform", m.python.platform}}},
        {"torch", nullptr},
        {"host",
         {{"glibc", m.host.glibc},
          {"glibcxx", m.host.glibcxx},
          {"gcc", m.host.gcc},
          {"nvcc", m.host.nvcc},
          {"driver", m.host.driver}}},
        {"build_env", json(m.build_env)},
        {"recipe", {{"name", m.recipe_name}, {"digest", m.recipe_digest}}},
        {"device", json(m.device)},
    };
    if (m.torch)
        j["torch"] = {{"version", m.torch->version},
                      {"cuda", m.torch->cuda},
                      {"cxx11_abi", m.torch->cxx11_abi}};
    if (m.run)
        j["run"] = {{"run_id", m.run->run_id},
                    {"phase", m.run->phase},
                    {"time", m.run->time},
                    {"ok", m.run->ok}};
    // METADATA is not guaranteed UTF-8; replace bad bytes rather than throw.
    return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<Manifest> from_json(std::string_view text, const std::string& source) {
    auto invalid = [&](const std::string& what) {
        return fail(ErrorCode::io, fmt::format("{}: not a valid manifest: {}", source, what));
    };
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        return invalid(e.what()); // names line and column
    }
    if (!j.is_object())
        return invalid("expected a JSON object");
    auto schema = j.find("schema");
    if (schema == j.end())
        return invalid("no \"schema\" field");
    if (!schema->is_number_integer())
        return invalid("\"schema\" is not an integer");
    int version = schema->get<int>();
    if (version > k_manifest_schema)
        return fail(ErrorCode::io,
                    fmt::format("{}: manifest schema {} is newer than this bootstrap understands "
                                "({}); upgrade bootstrap",
                                source, version, k_manifest_schema));
    if (version < 1)
        return invalid(fmt::format("unknown schema {}", version));
    try {
        Manifest m = read_manifest(j);
        m.schema = version;
        return m;
    } catch (const Invalid& e) {
        return invalid(e.what);
    } catch (const json::exception& e) {
        return invalid(e.what());
    }
}

Result<Manifest> load_manifest(const fs::path& file) {
    BS_TRY(std::string text, core::read_file(file));
    return from_json(text, file.string());
}

Status save_manifest(const fs::path& file, const Manifest& m) {
    return core::write_file_atomic(file, to_json(m));
}

} // namespace bootstrap::manifest
