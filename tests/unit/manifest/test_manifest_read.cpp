// manifest::from_json reads without a DOM (SAX). The reader it replaced, which built nlohmann's
// tree and read it through core::JsonFields, is kept here as the oracle: on a real manifest and
// on thousands of damaged ones (every value replaced by every JSON type, removed, given twice,
// every prefix of the text) both give the same manifest or the same error message.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../json_damage.hpp"

#include "core/json_fields.hpp"
#include "manifest/manifest.hpp"
#include "manifest/origin_json.hpp"

using namespace bootstrap;
using namespace bootstrap::manifest;
using nlohmann::json;

namespace {

// ---- the oracle: the tree reader as it was ----------------------------------------------------

Package oracle_package(const std::string& name, const core::JsonFields& f) {
    Package p;
    p.name = name;
    p.display_name = f.str("display_name");
    p.version = f.str("version");
    p.broken = f.str("broken");
    if (p.version.empty() && p.broken.empty()) f.invalid({}, "no version");
    p.installer = f.str("installer");
    p.requested = f.boolean("requested");
    p.wheel_tag = f.str("wheel_tag");
    p.record_sha256 = f.str("record_sha256");
    p.record_sha256_portable = f.str("record_sha256_portable");
    if (auto o = f.object("origin")) p.origin = origin_from_json(*o);
    return p;
}

Manifest oracle_manifest(const core::JsonFields& top) {
    Manifest m;
    m.label = top.str("label");
    m.venv = top.str("venv");
    if (!top.object("packages")) top.invalid({}, "no \"packages\" object");
    for (const auto& [name, value] : top.objects("packages")) m.packages.emplace(name, oracle_package(name, value));
    if (auto f = top.object("python"))
        m.python = {f->str("version"), f->str("implementation"), f->str("ext_suffix"), f->str("soabi"),
                    f->str("platform")};
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

Result<Manifest> oracle(std::string_view text, const std::string& source) {
    return core::read_json(text, source, "manifest", [&](const core::JsonFields& top) -> Result<Manifest> {
        const json* schema = top.find("schema");
        if (!schema) top.invalid({}, "no \"schema\" field");
        if (!schema->is_number_integer()) top.invalid({}, "\"schema\" is not an integer");
        int version = schema->get<int>();
        if (version > k_manifest_schema)
            return fail(ErrorCode::io, fmt::format("{}: manifest schema {} is newer than this bootstrap "
                                                   "understands ({}); upgrade bootstrap",
                                                   source, version, k_manifest_schema));
        if (version < 1) top.invalid({}, fmt::format("unknown schema {}", version));
        Manifest m = oracle_manifest(top);
        m.schema = version;
        return m;
    });
}

// ---- documents ---------------------------------------------------------------------------------

const json& base_document() {
    static const json doc = json::parse(R"({
      "build_env": {"MAX_JOBS": "4", "TORCH_CUDA_ARCH_LIST": "9.0"},
      "device": {"gpus": "1"},
      "host": {"driver": "580", "gcc": "12.2.0", "glibc": "2.36", "glibcxx": "3.4.30", "nvcc": "13.0"},
      "label": "after-run",
      "packages": {
        "a-pkg": {"display_name": "A_Pkg", "installer": "uv", "origin": {"kind": "index",
                  "index_urls": ["https://x/simple", "https://y/simple"], "step": "deps"},
                  "record_sha256": "r1", "record_sha256_portable": "p1", "requested": true,
                  "version": "1.0", "wheel_tag": "py3-none-any"},
        "b": {"broken": "METADATA missing", "display_name": "b", "installer": "", "origin": {"kind": "vcs",
              "url": "https://g/b", "vcs": "git", "commit": "abc", "artifact_sha256": "ff",
              "archive_hash": "sha256=00"}, "record_sha256": "", "record_sha256_portable": "",
              "requested": false, "version": "", "wheel_tag": ""},
        "c": {"version": "2"}
      },
      "python": {"ext_suffix": ".so", "implementation": "cpython", "platform": "linux-x86_64",
                 "soabi": "cpython-311", "version": "3.11.7"},
      "recipe": {"digest": "d", "name": "n"},
      "run": {"ok": false, "phase": "after", "run_id": "r", "time": "t"},
      "schema": 1,
      "torch": {"cuda": "13.0", "cxx11_abi": "1", "version": "2.9.0"},
      "venv": "/v",
      "zz-newer": {"a": [1, {"b": null}]}
    })");
    return doc;
}

void same(const std::string& text) {
    INFO(text);
    auto ours = from_json(text, "m.json");
    auto theirs = oracle(text, "m.json");
    REQUIRE(ours.has_value() == theirs.has_value());
    if (!ours) {
        CHECK(ours.error().message == theirs.error().message);
        CHECK(ours.error().code == theirs.error().code);
        return;
    }
    CHECK(ours->schema == theirs->schema);
    CHECK(ours->label == theirs->label);
    CHECK(ours->venv == theirs->venv);
    CHECK(ours->packages == theirs->packages);
    CHECK(ours->python == theirs->python);
    CHECK(ours->torch == theirs->torch);
    CHECK(ours->host == theirs->host);
    CHECK(ours->build_env == theirs->build_env);
    CHECK(ours->recipe_name == theirs->recipe_name);
    CHECK(ours->recipe_digest == theirs->recipe_digest);
    CHECK(ours->device == theirs->device);
    CHECK(ours->run == theirs->run);
}

}  // namespace

TEST_CASE("the SAX reader reads a whole manifest as the tree reader did") {
    same(base_document().dump());
    same(base_document().dump(2));
    Manifest m;
    m.venv = "/v";
    same(to_json(m));  // the smallest: no packages, no torch, no run
    auto back = from_json(base_document().dump(), "m.json");
    REQUIRE(back);
    CHECK(back->packages.at("a-pkg").origin.index_urls ==
          std::vector<std::string>{"https://x/simple", "https://y/simple"});
    CHECK(back->packages.at("b").origin.kind == OriginKind::vcs);
    CHECK_FALSE(back->run->ok);
    CHECK(back->build_env.at("TORCH_CUDA_ARCH_LIST") == "9.0");
}

TEST_CASE("every value replaced by each JSON type, or removed: the same manifest or the same error") {
    const auto all = bs_test::json_pointers(base_document());
    REQUIRE(all.size() > 60);
    std::size_t errors = 0;
    for (const auto& ptr : all) {
        for (const auto& value : bs_test::json_replacements()) {
            json doc = base_document();
            doc[ptr] = value;
            same(doc.dump());
            errors += from_json(doc.dump(), "m.json") ? 0 : 1;
        }
        if (!ptr.empty()) {
            json removed = bs_test::json_without(base_document(), ptr);
            same(removed.dump());
        }
    }
    CHECK(errors > 100);  // the damage was seen, not only tolerated
}

TEST_CASE("a key given twice counts once, with its last value, errors of the first forgotten") {
    const auto all = bs_test::json_pointers(base_document());
    for (const auto& ptr : all) {
        if (ptr.empty() || !base_document()[ptr.parent_pointer()].is_object()) continue;
        for (const auto& value : bs_test::json_replacements()) {
            same(bs_test::json_dump_twice(base_document(), ptr, value, true));
            same(bs_test::json_dump_twice(base_document(), ptr, value, false));
        }
    }
}

TEST_CASE("two errors at once: the one the tree reader met first") {
    json doc = base_document();
    doc["zz-newer"] = 1;
    doc["venv"] = 1;
    doc["label"] = 1;
    doc["packages"]["c"]["installer"] = 1;
    doc["packages"]["c"].erase("version");
    doc["packages"]["a-pkg"]["origin"]["url"] = 1;
    doc["packages"]["b"] = 1;
    doc["run"]["ok"] = 1;
    doc["build_env"]["MAX_JOBS"] = 1;
    for (const char* fix : {"label", "venv", "b", "a-pkg", "c-version", "c", "build_env", "run", ""}) {
        same(doc.dump());
        std::string f = fix;
        if (f == "label" || f == "venv") doc[f] = "x";
        if (f == "b") doc["packages"]["b"] = json::object({{"version", "1"}});
        if (f == "a-pkg") doc["packages"]["a-pkg"]["origin"]["url"] = "u";
        if (f == "c-version") doc["packages"]["c"]["version"] = "1";
        if (f == "c") doc["packages"]["c"]["installer"] = "uv";
        if (f == "build_env") doc["build_env"]["MAX_JOBS"] = "1";
        if (f == "run") doc["run"]["ok"] = true;
    }
    CHECK(from_json(doc.dump(), "m.json"));
}

TEST_CASE("every prefix of a manifest is the same syntax error") {
    const std::string text = base_document().dump(1);
    for (std::size_t n = 0; n < text.size(); ++n) same(text.substr(0, n));
    same(text + "x");
    same(text + "{}");
    same("[" + text + "]");
    same("\"" + text);
}

TEST_CASE("nesting a million deep in an unknown field costs no frame each") {
    std::string deep =
        R"({"schema": 1, "packages": {}, "zz": )" + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}";
    auto m = from_json(deep, "m.json");
    REQUIRE(m);
    CHECK(m->packages.empty());
}
