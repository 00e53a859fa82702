#include "manifest/manifest.hpp"
#include "manifest/origin_json.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/json_fields.hpp"

namespace bootstrap::manifest {

const char* to_string(OriginKind kind) {
    switch (kind) {
        case OriginKind::index: return "index";
        case OriginKind::url: return "url";
        case OriginKind::vcs: return "vcs";
        case OriginKind::local: return "local";
        case OriginKind::editable: return "editable";
        case OriginKind::unknown: return "unknown";
    }
    return "unknown";
}

OriginKind parse_origin_kind(std::string_view text) {
    for (auto kind : {OriginKind::index, OriginKind::url, OriginKind::vcs, OriginKind::local, OriginKind::editable})
        if (text == to_string(kind)) return kind;
    return OriginKind::unknown;
}

nlohmann::json origin_to_json(const Origin& o) {
    nlohmann::json j{{"kind", to_string(o.kind)}};
    auto put = [&](const char* key, const std::string& value) {
        if (!value.empty()) j[key] = value;
    };
    put("url", o.url);
    put("vcs", o.vcs);
    put("commit", o.commit);
    if (!o.index_urls.empty()) j["index_urls"] = o.index_urls;  // order matters: kept as a list
    put("step", o.step);
    put("artifact_sha256", o.artifact_sha256);
    put("archive_hash", o.archive_hash);
    return j;
}

Origin origin_from_json(const core::JsonFields& f) {
    Origin o;
    o.kind = parse_origin_kind(f.str("kind"));
    o.url = f.str("url");
    o.vcs = f.str("vcs");
    o.commit = f.str("commit");
    o.index_urls = f.strings("index_urls");
    o.step = f.str("step");
    o.artifact_sha256 = f.str("artifact_sha256");
    o.archive_hash = f.str("archive_hash");
    return o;
}

namespace {

using nlohmann::json;

// ---- writing ----------------------------------------------------------------------------------

json package_json(const Package& p) {
    json j{{"display_name", p.display_name},
           {"version", p.version},
           {"installer", p.installer},
           {"requested", p.requested},
           {"wheel_tag", p.wheel_tag},
           {"record_sha256", p.record_sha256},
           {"record_sha256_portable", p.record_sha256_portable},
           {"origin", origin_to_json(p.origin)}};
    if (!p.broken.empty()) j["broken"] = p.broken;
    return j;
}

// ---- reading ----------------------------------------------------------------------------------

using core::JsonFields;

Package read_package(const std::string& name, const JsonFields& f) {
    Package p;
    p.name = name;
    p.display_name = f.str("display_name");
    p.version = f.str("version");
    p.broken = f.str("broken");
    // A broken install's version comes from its directory name, which may not have one.
    if (p.version.empty() && p.broken.empty()) f.invalid({}, "no version");
    p.installer = f.str("installer");
    p.requested = f.boolean("requested");
    p.wheel_tag = f.str("wheel_tag");
    p.record_sha256 = f.str("record_sha256");
    p.record_sha256_portable = f.str("record_sha256_portable");
    if (auto o = f.object("origin")) p.origin = origin_from_json(*o);
    return p;
}

Manifest read_manifest(const JsonFields& top) {
    Manifest m;
    m.label = top.str("label");
    m.venv = top.str("venv");
    if (!top.object("packages")) top.invalid({}, "no \"packages\" object");
    for (const auto& [name, value] : top.objects("packages")) m.packages.emplace(name, read_package(name, value));
    if (auto f = top.object("python")) {
        m.python = {f->str("version"), f->str("implementation"), f->str("ext_suffix"), f->str("soabi"),
                    f->str("platform")};
    }
    if (auto f = top.object("torch")) m.torch = Torch{f->str("version"), f->str("cuda"), f->str("cxx11_abi")};
    if (auto f = top.object("host"))
        m.host = {f->str("glibc"), f->str("glibcxx"), f->str("gcc"), f->str("nvcc"), f->str("driver")};
    m.build_env = top.string_map("build_env");
    if (auto f = top.object("recipe")) {
        m.recipe_name = f->str("name");
        m.recipe_digest = f->str("digest");
    }
    m.device = top.string_map("device");
    if (auto f = top.object("run")) {
        RunInfo run{f->str("run_id"), f->str("phase"), f->str("time"), true};
        if (f->has("ok")) run.ok = f->boolean("ok");
        m.run = run;
    }
    return m;
}

}  // namespace

std::string to_json(const Manifest& m) {
    // nlohmann::json objects are std::map-backed: keys come out sorted, so equal manifests give
    // byte-identical text.
    json packages = json::object();
    for (const auto& [name, p] : m.packages) packages[name] = package_json(p);
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
        j["torch"] = {{"version", m.torch->version}, {"cuda", m.torch->cuda}, {"cxx11_abi", m.torch->cxx11_abi}};
    if (m.run)
        j["run"] = {{"run_id", m.run->run_id}, {"phase", m.run->phase}, {"time", m.run->time}, {"ok", m.run->ok}};
    // METADATA is not guaranteed UTF-8; replace bad bytes rather than throw.
    return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<Manifest> from_json(std::string_view text, const std::string& source) {
    return core::read_json(text, source, "manifest", [&](const JsonFields& top) -> Result<Manifest> {
        const nlohmann::json* schema = top.find("schema");
        if (!schema) top.invalid({}, "no \"schema\" field");
        if (!schema->is_number_integer()) top.invalid({}, "\"schema\" is not an integer");
        int version = schema->get<int>();
        if (version > k_manifest_schema)
            return fail(ErrorCode::io, fmt::format("{}: manifest schema {} is newer than this bootstrap "
                                                   "understands ({}); upgrade bootstrap",
                                                   source, version, k_manifest_schema));
        if (version < 1) top.invalid({}, fmt::format("unknown schema {}", version));
        Manifest m = read_manifest(top);
        m.schema = version;
        return m;
    });
}

Result<Manifest> load_manifest(const fs::path& file) {
    BS_TRY(std::string text, core::read_regular_file(file, core::k_max_user_input));
    return from_json(text, file.string());
}

Status save_manifest(const fs::path& file, const Manifest& m) { return core::write_file_atomic(file, to_json(m)); }

}  // namespace bootstrap::manifest
