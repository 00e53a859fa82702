#include "manifest/manifest.hpp"
#include "manifest/origin_json.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/json_fields.hpp"
#include "core/json_writer.hpp"

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

void write_origin(core::JsonWriter& w, const Origin& o) {
    // origin_to_json's document, keys in byte order.
    auto put = [&](std::string_view key, const std::string& value) {
        if (!value.empty()) w.field(key, value);
    };
    w.begin_object();
    put("archive_hash", o.archive_hash);
    put("artifact_sha256", o.artifact_sha256);
    put("commit", o.commit);
    if (!o.index_urls.empty()) {
        w.key("index_urls").begin_array();  // order matters: kept as a list
        for (const auto& url : o.index_urls) w.string(url);
        w.end_array();
    }
    w.field("kind", to_string(o.kind));
    put("step", o.step);
    put("url", o.url);
    put("vcs", o.vcs);
    w.end_object();
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

std::string to_json(const Manifest& m) {
    // Written without a DOM (a snapshot is written on every run), keys in byte order as
    // nlohmann's std::map-backed objects have them: the text is what `json::dump(2)` of the same
    // document gives (tests/unit/manifest/test_manifest.cpp compares them), so equal manifests
    // give byte-identical text. METADATA is not guaranteed UTF-8: bad bytes are replaced.
    std::string out;
    out.reserve(4096 + m.packages.size() * 560);
    core::JsonWriter w(out, 2);
    auto string_map = [&](std::string_view key, const std::map<std::string, std::string>& values) {
        w.key(key).begin_object();
        for (const auto& [k, v] : values) w.field(k, v);
        w.end_object();
    };
    w.begin_object();
    string_map("build_env", m.build_env);
    string_map("device", m.device);
    w.key("host").begin_object();
    w.field("driver", m.host.driver).field("gcc", m.host.gcc).field("glibc", m.host.glibc);
    w.field("glibcxx", m.host.glibcxx).field("nvcc", m.host.nvcc);
    w.end_object();
    w.field("label", m.label);
    w.key("packages").begin_object();
    for (const auto& [name, p] : m.packages) {
        w.key(name).begin_object();
        if (!p.broken.empty()) w.field("broken", p.broken);
        w.field("display_name", p.display_name).field("installer", p.installer);
        w.key("origin");
        write_origin(w, p.origin);
        w.field("record_sha256", p.record_sha256).field("record_sha256_portable", p.record_sha256_portable);
        w.key("requested").boolean(p.requested);
        w.field("version", p.version).field("wheel_tag", p.wheel_tag);
        w.end_object();
    }
    w.end_object();
    w.key("python").begin_object();
    w.field("ext_suffix", m.python.ext_suffix).field("implementation", m.python.implementation);
    w.field("platform", m.python.platform).field("soabi", m.python.soabi).field("version", m.python.version);
    w.end_object();
    w.key("recipe").begin_object().field("digest", m.recipe_digest).field("name", m.recipe_name).end_object();
    if (m.run) {
        w.key("run").begin_object().key("ok").boolean(m.run->ok).field("phase", m.run->phase);
        w.field("run_id", m.run->run_id).field("time", m.run->time).end_object();
    }
    w.key("schema").integer(m.schema);
    w.key("torch");
    if (m.torch) {
        w.begin_object().field("cuda", m.torch->cuda).field("cxx11_abi", m.torch->cxx11_abi);
        w.field("version", m.torch->version).end_object();
    } else {
        w.null();
    }
    w.field("venv", m.venv);
    w.end_object();
    out += '\n';
    return out;
}

Status save_manifest(const fs::path& file, const Manifest& m) { return core::write_file_atomic(file, to_json(m)); }

}  // namespace bootstrap::manifest
