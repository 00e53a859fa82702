#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "core/fs.hpp"
#include "engine/image_state.hpp"
#include "engine/skip_rule.hpp"
#include "image/seal.hpp"
#include "pyenv/dist_info.hpp"
#include "state/journal.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

void put(const fs::path& path, const std::string& text) { REQUIRE(core::write_file_atomic(path, text)); }

std::string slurp(const fs::path& path) {
    auto text = core::read_file(path);
    REQUIRE(text);
    return *text;
}

constexpr const char* k_record =
    "fastext-1.0.0.dist-info/METADATA,sha256=l4Z1h1No9-rmibThiHMY1X5cwU9JYO5GKDXbY-VDzug,111\n"
    "fastext-1.0.0.dist-info/RECORD,,\n"
    "fastext-1.0.0.dist-info/uv_cache.json,sha256=dyhlWeuugSl3Ojcux3-QdwD0pApY-gqlukdnZF1Qq0A,127\n"
    "fastext/__init__.py,sha256=WC9uQcB3XwUakvzEDSBdsDR1ZARgiwa9dd41GbJncUk,336\n";

/// A venv as a run leaves it: records, host-local state, and a package installed by uv from
/// a path (with uv_cache.json in its RECORD) next to one from an index (without).
struct Venv {
    core::TempDir dir{"bs-seal"};
    fs::path venv = dir.path() / "venv";
    fs::path site = venv / "lib" / "python3.11" / "site-packages";
    fs::path state = venv / ".bootstrap";

    Venv() {
        put(site / "fastext-1.0.0.dist-info" / "RECORD", k_record);
        put(site / "fastext-1.0.0.dist-info" / "METADATA", "Name: fastext\nVersion: 1.0.0\n");
        put(site / "fastext-1.0.0.dist-info" / "uv_cache.json", "{\"timestamp\":{\"secs_since_epoch\":1796104856}}");
        put(site / "fastext" / "__init__.py", "answer = 42\n");
        put(site / "demo-1.0.dist-info" / "RECORD", "demo-1.0.dist-info/RECORD,,\n");
        fs::create_directory_symlink("lib", venv / "lib64");
        put(state / "history" / "0001-before.json", "{}\n");
        put(state / "history" / "0002-after.json", "{}\n");
        put(state / "overrides" / "cublas.txt", "nvidia-cublas==13.4.1.1\n");
        put(state / "lock", "123\nhost h\n");
        put(state / "logs" / "20261201T000000Z-123" / "01-venv.log", "took 1.2 s\n");
        put(state / "packages.cache", "stamps\n");
        put(state / "python.facts", "facts\n");
        put(state / "torch-probe.json", "{}\n");
        put(state / "journal.json.tmp-999999999-abcdef", "half");
        state::Journal j;
        j.recipe = "image-demo";
        auto& e = j.steps["fastext"];
        e.key = "key-1";
        e.run_id = "19700101T000000Z-0123abcd";
        e.finished_at = "1970-01-01T00:00:00Z";
        e.seconds = 12.5;
        e.log = (state / "logs" / "20261201T000000Z-123" / "03-fastext.log").string();
        e.venv_state = "5eed";
        e.index_urls = {"https://pypi.org/simple"};
        e.dists["fastext"] = {"1.0.0", "ff00", {438, 1796104856000000000, 4242}};
        REQUIRE(j.save(venv));
    }
};

}  // namespace

TEST_CASE("seal removes host-local state and uv_cache.json, and keeps the records") {
    Venv v;
    const auto before_digest = pyenv::record_text_digest(k_record);
    auto sealed = image::seal_venv(v.venv, 0);
    INFO((sealed ? "" : sealed.error().message));
    REQUIRE(sealed);
    CHECK(sealed->journal_steps == 1);
    CHECK(sealed->removed ==
          std::vector<std::string>{"lib/python3.11/site-packages/fastext-1.0.0.dist-info/uv_cache.json",
                                   ".bootstrap/logs", ".bootstrap/packages.cache", ".bootstrap/python.facts",
                                   ".bootstrap/torch-probe.json", ".bootstrap/lock (emptied)"});
    CHECK(slurp(v.state / "lock").empty());  // kept, empty: a no-op run confirms under it
    CHECK(engine::is_sealed(v.venv));
    for (const char* gone :
         {"logs", "packages.cache", "python.facts", "torch-probe.json", "journal.json.tmp-999999999-abcdef"}) {
        INFO(gone);
        CHECK_FALSE(fs::exists(v.state / gone));
    }
    for (const char* kept :
         {"history/0001-before.json", "history/0002-after.json", "overrides/cublas.txt", "journal.json"})
        CHECK(fs::exists(v.state / kept));

    // RECORD lost only the uv_cache.json row: its digest (which leaves that row out) holds.
    const auto dist_info = v.site / "fastext-1.0.0.dist-info";
    CHECK_FALSE(fs::exists(dist_info / "uv_cache.json"));
    const auto record = slurp(dist_info / "RECORD");
    CHECK(record.find("uv_cache.json") == std::string::npos);
    CHECK(record.find("fastext/__init__.py,sha256=") != std::string::npos);
    CHECK(pyenv::record_text_digest(record) == before_digest);
    CHECK(slurp(v.site / "demo-1.0.dist-info" / "RECORD") == "demo-1.0.dist-info/RECORD,,\n");

    // The journal keeps what the step did and owns; stamps, timings and the gone log are reset.
    auto journal = state::Journal::load(v.venv);
    REQUIRE(journal);
    const auto& e = journal->steps.at("fastext");
    CHECK(e.key == "key-1");
    CHECK(e.run_id == "19700101T000000Z-0123abcd");
    CHECK(e.finished_at == "1970-01-01T00:00:00Z");
    CHECK(e.index_urls == std::vector<std::string>{"https://pypi.org/simple"});
    CHECK(e.dists.at("fastext").version == "1.0.0");
    CHECK(e.dists.at("fastext").record_sha256 == "ff00");
    CHECK(e.dists.at("fastext").stamp == core::FileStamp{});
    CHECK(e.seconds == 0);
    CHECK(e.log.empty());
    CHECK(e.venv_state.empty());

    // Sealing twice gives the same bytes (nothing left to remove).
    const auto journal_text = slurp(state::Journal::path_for(v.venv));
    auto again = image::seal_venv(v.venv, 0);
    REQUIRE(again);
    CHECK(again->removed.empty());
    CHECK(slurp(state::Journal::path_for(v.venv)) == journal_text);
}

TEST_CASE("seal turns the venv state a step last verified into the venv's content state") {
    Venv v;
    auto installed = pyenv::scan_site_packages(v.site);
    REQUIRE(installed);
    {
        auto j = state::Journal::load(v.venv);
        REQUIRE(j);
        j->steps["fastext"].venv_state = engine::installed_state(*installed);  // verified against this venv
        j->steps["other"] = j->steps["fastext"];
        j->steps["other"].venv_state = "5eed";  // verified against another venv
        REQUIRE(j->save(v.venv));
    }
    REQUIRE(image::seal_venv(v.venv, 0));
    auto after = pyenv::scan_site_packages(v.site);  // RECORD lost its uv_cache.json row
    REQUIRE(after);
    auto content = engine::content_state(*after);
    REQUIRE(content);
    auto journal = state::Journal::load(v.venv);
    REQUIRE(journal);
    CHECK(journal->steps.at("fastext").venv_state == *content);
    CHECK(engine::is_content_state(*content));
    CHECK(journal->steps.at("other").venv_state.empty());   // that one verifies again
    CHECK(*content == *engine::content_state(*installed));  // the row is not in the content
}

TEST_CASE("seal refuses a directory that no run made") {
    core::TempDir dir("bs-seal");
    auto sealed = image::seal_venv(dir.path(), 0);
    REQUIRE_FALSE(sealed);
    CHECK(sealed.error().message.find("has no .bootstrap/") != std::string::npos);
}
