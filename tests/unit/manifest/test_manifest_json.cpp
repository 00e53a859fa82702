#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "fixture.hpp"
#include "manifest/manifest.hpp"

namespace fs = std::filesystem;
using namespace bootstrap::manifest;
using bootstrap::core::TempDir;
using bs_test::pkg;

namespace {

Manifest full_manifest() {
    Manifest m;
    m.label = "after-run";
    m.venv = "/srv/venv";
    m.packages["demo-core"] = pkg("demo-core", "1.0.0");
    m.packages["demo-core"].record_sha256_portable = "p1";
    Package vcs = pkg("vcs-thing", "0.5", "r2");
    vcs.display_name = "VCS_Thing";
    vcs.installer = "pip";
    vcs.requested = true;
    vcs.wheel_tag = "cp311-cp311-linux_x86_64,cp311-abi3-linux_x86_64";
    vcs.origin = {bootstrap::manifest::OriginKind::vcs, "https://github.com/x/y", "git", "0123abcd", {}, "", "", ""};
    m.packages["vcs-thing"] = vcs;
    Package local = pkg("localwheel", "1.2", "r3");
    local.origin = {bootstrap::manifest::OriginKind::local,
                    "file:///w/localwheel-1.2-py3-none-any.whl",
                    "",
                    "",
                    {"https://a/simple", "https://b/simple"},
                    "fillers",
                    "ab12",
                    "sha256=ff"};
    m.packages["localwheel"] = local;
    Package broken = pkg("wandb", "0.22.0", "r4");
    broken.broken = "METADATA missing";
    m.packages["wandb"] = broken;
    m.python = {"3.11.7", "cpython", ".cpython-311-x86_64-linux-gnu.so", "cpython-311-x86_64-linux-gnu",
                "linux-x86_64"};
    m.torch = Torch{"2.5.1+cu124", "12.4", "1"};
    m.host = bs_test::fake_host();
    m.build_env = {{"TORCH_CUDA_ARCH_LIST", "8.0;9.0"}, {"MAX_JOBS", "4"}};
    m.recipe_name = "demo";
    m.recipe_digest = "d1g";
    m.device = {{"gpu0", "H200"}};
    m.run = RunInfo{"run-1", "after", "2025-01-02T03:04:05Z", false};
    return m;
}

void require_same(const Manifest& a, const Manifest& b) {
    CHECK(a.schema == b.schema);
    CHECK(a.label == b.label);
    CHECK(a.venv == b.venv);
    CHECK(a.packages == b.packages);
    CHECK(a.python == b.python);
    CHECK(a.torch == b.torch);
    CHECK(a.host == b.host);
    CHECK(a.build_env == b.build_env);
    CHECK(a.recipe_name == b.recipe_name);
    CHECK(a.recipe_digest == b.recipe_digest);
    CHECK(a.device == b.device);
    CHECK(a.run == b.run);
}

}  // namespace

TEST_CASE("manifest JSON round-trips every field") {
    Manifest m = full_manifest();
    auto back = from_json(to_json(m), "m.json");
    REQUIRE(back.has_value());
    require_same(m, *back);
    CHECK(to_json(*back) == to_json(m));

    SECTION("without torch and run") {
        m.torch.reset();
        m.run.reset();
        std::string text = to_json(m);
        CHECK(text.find("\"torch\": null") != std::string::npos);
        CHECK(text.find("\"run\"") == std::string::npos);
        auto again = from_json(text, "m.json");
        REQUIRE(again.has_value());
        require_same(m, *again);
    }
}

TEST_CASE("manifest JSON is deterministic") {
    Manifest a = full_manifest();
    // Same content, packages inserted in another order.
    Manifest b = full_manifest();
    b.packages.clear();
    for (const char* n : {"vcs-thing", "wandb", "localwheel", "demo-core"}) b.packages[n] = a.packages[n];
    CHECK(to_json(a) == to_json(b));
    std::string text = to_json(a);
    CHECK(text.back() == '\n');
    // Sorted keys at the top level; the run block is the only place with a time.
    CHECK(text.find("\"build_env\"") < text.find("\"device\""));
    CHECK(text.find("\"device\"") < text.find("\"host\""));
    CHECK(text.find("\"schema\": 1") != std::string::npos);
    CHECK(text.find("demo-core") < text.find("localwheel"));
}

TEST_CASE("an index origin is written compactly") {
    Manifest m;
    m.packages["a"] = pkg("a", "1");
    std::string text = to_json(m);
    CHECK(text.find("\"origin\": {\n        \"kind\": \"index\"\n      }") != std::string::npos);
}

TEST_CASE("a newer schema is a clear error") {
    auto r = from_json(R"({"schema": 2, "packages": {}})", "/tmp/m.json");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message ==
          "/tmp/m.json: manifest schema 2 is newer than this bootstrap understands (1); upgrade "
          "bootstrap");
}

TEST_CASE("a corrupt manifest is a clear error") {
    auto message = [](std::string_view text) {
        auto r = from_json(text, "m.json");
        REQUIRE_FALSE(r.has_value());
        return r.error().message;
    };
    CHECK_THAT(message("{\"schema\": 1, \"packages\": {"),
               Catch::StartsWith("m.json: not a valid manifest: [json.exception.parse_error"));
    CHECK(message("[]") == "m.json: not a valid manifest: expected a JSON object");
    CHECK(message("{}") == "m.json: not a valid manifest: no \"schema\" field");
    CHECK(message(R"({"schema": "1"})") == "m.json: not a valid manifest: \"schema\" is not an integer");
    CHECK(message(R"({"schema": 1})") == "m.json: not a valid manifest: no \"packages\" object");
    CHECK(message(R"({"schema": 1, "packages": []})") == "m.json: not a valid manifest: packages: expected an object");
    CHECK(message(R"({"schema": 1, "packages": {"foo": {"version": 3}}})") ==
          "m.json: not a valid manifest: packages.foo.version: expected a string");
    CHECK(message(R"({"schema": 1, "packages": {"foo": {}}})") ==
          "m.json: not a valid manifest: packages.foo: no version");
    CHECK(message(R"({"schema": 1, "packages": {}, "build_env": {"CC": 1}})") ==
          "m.json: not a valid manifest: build_env.CC: expected a string");
    CHECK(message(R"({"schema": 1, "packages": {}, "host": "x"})") ==
          "m.json: not a valid manifest: host: expected an object");
    CHECK(message(R"({"schema": 1, "packages": {"a": {"version": "1", "origin": {"index_urls": "x"}}}})") ==
          "m.json: not a valid manifest: packages.a.origin.index_urls: expected a list of strings");
}

TEST_CASE("save_manifest writes atomically and load_manifest reads it back") {
    TempDir tmp("bs-manifest");
    fs::path file = tmp.path() / "sub" / "m.json";
    Manifest m = full_manifest();
    REQUIRE(save_manifest(file, m));
    auto back = load_manifest(file);
    REQUIRE(back.has_value());
    require_same(m, *back);
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(file.parent_path())) {
        (void)e;
        ++files;
    }
    CHECK(files == 1);  // no temp file left behind

    auto missing = load_manifest(tmp.path() / "nope.json");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == bootstrap::ErrorCode::not_found);

    REQUIRE(bootstrap::core::write_file_atomic(tmp.path() / "bad.json", "{\"schema\": 7}"));
    auto newer = load_manifest(tmp.path() / "bad.json");
    REQUIRE_FALSE(newer.has_value());
    CHECK(newer.error().message == (tmp.path() / "bad.json").string() +
                                       ": manifest schema 7 is newer than this bootstrap "
                                       "understands (1); upgrade bootstrap");
}

TEST_CASE("a manifest without the portable digest (written before it existed) still loads") {
    auto r = from_json(R"({"schema": 1, "venv": "/v", "packages": {"a": {"version": "1",
        "record_sha256": "r1"}}})",
                       "old.json");
    REQUIRE(r.has_value());
    CHECK(r->packages.at("a").record_sha256 == "r1");
    CHECK(r->packages.at("a").record_sha256_portable.empty());
    // Written back, the field is there (empty): every manifest has the same keys.
    CHECK(to_json(*r).find("\"record_sha256_portable\": \"\"") != std::string::npos);
}

TEST_CASE("a broken install is written as such, manifests without the field read as whole") {
    Manifest m = full_manifest();
    std::string text = to_json(m);
    CHECK(text.find("\"broken\": \"METADATA missing\"") != std::string::npos);
    // Only the broken package carries the key.
    CHECK(text.find("\"broken\"") == text.rfind("\"broken\""));

    auto old = from_json(R"({"schema": 1, "venv": "/v", "packages": {"a": {"version": "1"}}})", "old.json");
    REQUIRE(old.has_value());
    CHECK(old->packages.at("a").broken.empty());

    // A broken dist-info's directory name may not hold a version.
    auto nameless = from_json(R"({"schema": 1, "venv": "/v", "packages": {"a": {"version": "",
        "broken": "METADATA missing"}}})",
                              "b.json");
    REQUIRE(nameless.has_value());
    CHECK(nameless->packages.at("a").broken == "METADATA missing");
    auto whole = from_json(R"({"schema": 1, "venv": "/v", "packages": {"a": {"version": ""}}})", "c.json");
    REQUIRE_FALSE(whole.has_value());
    CHECK(whole.error().message == "c.json: not a valid manifest: packages.a: no version");
    auto typed = from_json(R"({"schema": 1, "venv": "/v", "packages": {"a": {"version": "1",
        "broken": true}}})",
                           "d.json");
    REQUIRE_FALSE(typed.has_value());
    CHECK(typed.error().message == "d.json: not a valid manifest: packages.a.broken: expected a string");
}

TEST_CASE("a manifest's text is what nlohmann writes for the same document (keys sorted, 2-space indent)") {
    auto canonical = [](const std::string& text) {
        return nlohmann::json::parse(text).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    };
    Manifest m = full_manifest();
    CHECK(to_json(m) == canonical(to_json(m)));
    m.torch.reset();
    m.run.reset();
    m.build_env.clear();
    m.packages["odd"] = pkg("odd", "1.0");
    m.packages["odd"].display_name = "Odd\t\"quoted\"\\ caf\xc3\xa9 \x01";
    m.packages["odd"].origin.index_urls = {"https://z/simple", "https://a/simple"};  // a list: order kept
    CHECK(to_json(m) == canonical(to_json(m)));
    // Bytes that are not UTF-8 are replaced, and the text still parses.
    m.packages["odd"].display_name = "bad\xff\xc3";
    std::string text = to_json(m);
    CHECK(text == canonical(text));
    CHECK(text.find("bad\xef\xbf\xbd") != std::string::npos);
}
