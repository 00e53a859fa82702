#include <catch2/catch.hpp>

#include "core/fs.hpp"
#include "fixture.hpp"
#include "manifest/history.hpp"

namespace fs = std::filesystem;
using namespace bootstrap::manifest;
using bootstrap::ErrorCode;
using bootstrap::core::TempDir;
using bs_test::pkg;

namespace {

Manifest with(std::initializer_list<Package> packages, std::string label = "") {
    Manifest m;
    m.label = std::move(label);
    for (const auto& p : packages) m.packages[p.name] = p;
    return m;
}

std::vector<std::string> names(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("sanitize_label") {
    CHECK(sanitize_label("") == "snapshot");
    CHECK(sanitize_label("after-run_1.2") == "after-run_1.2");
    CHECK(sanitize_label("my label/../x") == "my-label-..-x");
    CHECK(sanitize_label(".hidden") == "-hidden");
}

TEST_CASE("append_history numbers entries and list_history reads them back") {
    TempDir tmp("bs-history");
    fs::path venv = tmp.path();
    auto empty = list_history(venv);
    REQUIRE(empty.has_value());
    CHECK(empty->empty());

    auto e1 = append_history(venv, with({pkg("a", "1")}));
    REQUIRE(e1.has_value());
    CHECK(e1->number == 1);
    CHECK(e1->label == "snapshot");
    CHECK(e1->file == history_dir(venv) / "0001-snapshot.json");
    auto e2 = append_history(venv, with({pkg("a", "2")}, "after run"));
    REQUIRE(e2.has_value());
    CHECK(e2->file.filename() == "0002-after-run.json");
    // Junk in the directory is ignored; a stale claim skips its number.
    REQUIRE(bootstrap::core::write_file_atomic(history_dir(venv) / "notes.txt", "x"));
    REQUIRE(bootstrap::core::write_file_atomic(history_dir(venv) / "abc-x.json", "x"));
    REQUIRE(bootstrap::core::write_file_atomic(history_dir(venv) / ".0003.claim", ""));
    auto e4 = append_history(venv, with({pkg("a", "2"), pkg("b", "1")}, "x"));
    REQUIRE(e4.has_value());
    CHECK(e4->number == 4);

    auto listed = list_history(venv);
    REQUIRE(listed.has_value());
    REQUIRE(listed->size() == 3);
    CHECK((*listed)[0].number == 1);
    CHECK((*listed)[1].label == "after-run");
    CHECK((*listed)[2].number == 4);
    CHECK(names(history_dir(venv)) == std::vector<std::string>{".0003.claim", "0001-snapshot.json",
                                                               "0002-after-run.json", "0004-x.json", "abc-x.json",
                                                               "notes.txt"});
    auto back = load_manifest(e2->file);
    REQUIRE(back.has_value());
    CHECK(back->packages.at("a").version == "2");
}

TEST_CASE("references: numbers, last, last~N and files") {
    TempDir tmp("bs-history");
    fs::path venv = tmp.path() / "venv";
    for (const char* v : {"1", "2", "3"}) REQUIRE(append_history(venv, with({pkg("a", v)})));

    auto version_of = [&](const std::string& ref) {
        auto m = load_reference(venv, ref);
        REQUIRE(m.has_value());
        return m->packages.at("a").version;
    };
    CHECK(version_of("1") == "1");
    CHECK(version_of("0002") == "2");
    CHECK(version_of("last") == "3");
    CHECK(version_of("last~1") == "2");
    CHECK(version_of("last~2") == "1");
    CHECK(version_of((history_dir(venv) / "0001-snapshot.json").string()) == "1");

    auto missing = load_reference(venv, "7");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == ErrorCode::usage);
    CHECK(missing.error().message ==
          "no history entry 7 in " + history_dir(venv).string() + ": the history holds entries 1 to 3");
    auto too_far = load_reference(venv, "last~3");
    REQUIRE_FALSE(too_far.has_value());
    CHECK(too_far.error().code == ErrorCode::usage);
    CHECK(too_far.error().message ==
          "no history entry `last~3` in " + history_dir(venv).string() + ": the history holds entries 1 to 3");
    auto nofile = load_reference(venv, "nope.json");
    REQUIRE_FALSE(nofile.has_value());
    CHECK(nofile.error().code == ErrorCode::usage);
    CHECK(nofile.error().message ==
          "nope.json: no such manifest file, and not a history reference (a number, `last` or "
          "`last~N`)");
    auto no_venv = load_reference("", "last");
    REQUIRE_FALSE(no_venv.has_value());
    CHECK(no_venv.error().code == ErrorCode::usage);
    auto empty = load_reference(tmp.path() / "other", "last");
    REQUIRE_FALSE(empty.has_value());
    CHECK_THAT(empty.error().message, Catch::EndsWith(": the history is empty"));
}

TEST_CASE("numbers past nine digits are listed, written and referenced without wrapping") {
    TempDir tmp("bs-history");
    fs::path venv = tmp.path();
    REQUIRE(append_history(venv, with({pkg("a", "1")})));
    // An entry numbered 999,999,999: the old lister ignored the 10-digit names that came next,
    // so every later append rewrote entry 1,000,000,000.
    REQUIRE(
        bootstrap::core::write_file_atomic(history_dir(venv) / "999999999-after.json", to_json(with({pkg("a", "2")}))));
    auto e1 = append_history(venv, with({pkg("a", "3")}, "after"));
    REQUIRE(e1.has_value());
    CHECK(e1->number == 1'000'000'000);
    CHECK(e1->file.filename() == "1000000000-after.json");
    auto e2 = append_history(venv, with({pkg("a", "4")}, "after"));
    REQUIRE(e2.has_value());
    CHECK(e2->number == 1'000'000'001);
    auto listed = list_history(venv);
    REQUIRE(listed.has_value());
    REQUIRE(listed->size() == 4);
    CHECK(listed->back().number == 1'000'000'001);
    CHECK(load_reference(venv, "last")->packages.at("a").version == "4");
    CHECK(load_reference(venv, "last~1")->packages.at("a").version == "3");
    CHECK(load_reference(venv, "1000000000")->packages.at("a").version == "3");
    CHECK(load_reference(venv, "999999999")->packages.at("a").version == "2");
    auto huge = load_reference(venv, "last~99999999999999999999999");
    REQUIRE_FALSE(huge);
    CHECK(huge.error().code == ErrorCode::usage);
    auto absent = load_reference(venv, "99999999999999999999999");
    REQUIRE_FALSE(absent);
    CHECK(absent.error().message == "no history entry 99999999999999999999999 in " + history_dir(venv).string() +
                                        ": the history holds entries 1 to 1000000001");
}

TEST_CASE("the history refuses to number past its maximum") {
    TempDir tmp("bs-history");
    fs::path venv = tmp.path();
    const std::string top = std::to_string(k_max_history_number) + "-after.json";
    REQUIRE(bootstrap::core::write_file_atomic(history_dir(venv) / top, to_json(with({}))));
    auto refused = append_history(venv, with({pkg("a", "1")}));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message == "cannot add to the history in " + history_dir(venv).string() +
                                         ": its newest entry " + top +
                                         " is numbered at or past the highest number bootstrap writes (" +
                                         std::to_string(k_max_history_number) + ")");
    CHECK(refused.error().detail == "move the entries numbered that high out of the history directory");

    // A name too large for 64 bits is named, not skipped (skipping it is how numbers wrapped).
    fs::remove(history_dir(venv) / top);
    const fs::path overflow = history_dir(venv) / "99999999999999999999-x.json";
    REQUIRE(bootstrap::core::write_file_atomic(overflow, to_json(with({}))));
    auto listed = list_history(venv);
    REQUIRE_FALSE(listed);
    CHECK(listed.error().message.find(overflow.string()) != std::string::npos);
    fs::remove(overflow);
}

TEST_CASE("describe_history summarises each entry against the one before") {
    TempDir tmp("bs-history");
    fs::path venv = tmp.path();
    REQUIRE(append_history(venv, with({pkg("a", "1")}, "first")));
    Manifest second = with({pkg("a", "2"), pkg("b", "1")}, "second");
    second.run = RunInfo{"r1", "after", "2025-01-02T03:04:05Z", false};
    second.recipe_name = "demo";
    REQUIRE(append_history(venv, second));
    auto corrupt = append_history(venv, with({}));
    REQUIRE(corrupt.has_value());
    REQUIRE(bootstrap::core::write_file_atomic(corrupt->file, "{\"schema\": 1, \"packages\": ["));
    REQUIRE(append_history(venv, with({pkg("a", "2")}, "fourth")));

    auto rows = describe_history(venv);
    REQUIRE(rows.has_value());
    REQUIRE(rows->size() == 4);
    const auto& r = *rows;
    CHECK(r[0].entry.label == "first");
    CHECK(r[0].package_count == 1);
    CHECK(r[0].changes.empty());
    CHECK(r[0].time.size() == 20);  // file mtime, "YYYY-MM-DDTHH:MM:SSZ"
    CHECK(r[1].time == "2025-01-02T03:04:05Z");
    CHECK(r[1].changes == "1 added, 1 upgraded");
    CHECK(r[1].package_count == 2);
    // A run's entry says which run, of which recipe, in which phase, and how it ended.
    CHECK_FALSE(r[0].run.has_value());
    CHECK(r[0].recipe.empty());
    REQUIRE(r[1].run.has_value());
    CHECK(*r[1].run == RunInfo{"r1", "after", "2025-01-02T03:04:05Z", false});
    CHECK(r[1].recipe == "demo");
    CHECK_THAT(r[2].error, Catch::StartsWith(corrupt->file.string() + ": not a valid manifest: "));
    CHECK(r[3].changes == "1 removed");  // against the last readable entry
}
