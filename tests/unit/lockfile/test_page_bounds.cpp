// What `lock` keeps of a project page (issue 41, item 5): the page is bounded, and only the files
// of the release locked from it are kept, every listed sha256 still checked.
#include <catch2/catch.hpp>

#include "core/fs.hpp"
#include "lockfile/index_page.hpp"
#include "lockfile/page_fetch.hpp"

using namespace bootstrap;

TEST_CASE("page bounds: a project page longer than the bound is refused, naming it") {
    core::TempDir tmp("bs-page-bound");
    const auto page = tmp.path() / "page.html";
    REQUIRE(core::write_file_atomic(page, std::string(lockfile::k_max_project_page + 1, ' ')));
    auto fetched = lockfile::fetch_project_page("file://" + page.string(), std::nullopt);
    REQUIRE_FALSE(fetched);
    CHECK(fetched.error().message.find("the body is longer than the limit of 32 MiB") != std::string::npos);
}

TEST_CASE("page bounds: only the files `keep` wants are kept, every hash checked") {
    const std::string a(64, 'a');
    const std::string html = "<a href='x-1.0-py3-none-any.whl#sha256=" + a + "'>x</a>" +
                             "<a href='x-2.0-py3-none-any.whl#sha256=" + a + "'>x</a>";
    size_t asked = 0;
    auto keep = [&](std::string_view name) {
        ++asked;
        return name.starts_with("x-2.0");
    };
    for (const char* type : {"text/html", ""}) {
        asked = 0;
        auto files = lockfile::parse_index_page(html, type, "https://i/simple/x/", keep);
        REQUIRE(files);
        REQUIRE(files->size() == 1);
        CHECK(files->front().filename == "x-2.0-py3-none-any.whl");
        CHECK(files->front().url == "https://i/simple/x/x-2.0-py3-none-any.whl");
        CHECK(asked == 2);
    }
    const std::string json = R"({"meta": {"api-version": "1.0"}, "files": [{"filename": "x-1.0-py3-none-any.whl",
        "url": "x-1.0-py3-none-any.whl", "hashes": {"sha256": ")" +
                             a + R"("}}, {"filename": "x-2.0-py3-none-any.whl",
        "url": "x-2.0-py3-none-any.whl", "hashes": {"sha256": ")" +
                             a + R"("}}]})";
    auto files = lockfile::parse_index_page(json, "application/vnd.pypi.simple.v1+json", "https://i/simple/x/", keep);
    REQUIRE(files);
    REQUIRE(files->size() == 1);
    CHECK(files->front().filename == "x-2.0-py3-none-any.whl");
    // A malformed hash on a file not kept still fails the page, as before.
    auto bad = lockfile::parse_index_page("<a href='x-1.0-py3-none-any.whl#sha256=zz'>x</a>", "text/html",
                                          "https://i/simple/x/", keep);
    REQUIRE_FALSE(bad);
}

TEST_CASE("page bounds: a PEP 691 page read with `keep` fails as the whole tree does") {
    const std::string url = "https://i/simple/x/";
    const std::string type = "application/vnd.pypi.simple.v1+json";
    auto drop_all = [](std::string_view) { return false; };
    for (const std::string body : {
             R"({"files": [)",
             R"([])",
             R"({"meta": {"api-version": "2.0"}, "files": []})",
             R"({"files": [{"filename": "x-1.0-py3-none-any.whl", "url": "x.whl"}], "meta": {"api-version": "2.0"}})",
             R"({"files": [{"filename": 3, "url": "x"}]})",
             R"({"files": [{"filename": "a-1.0-py3-none-any.whl", "url": "a.whl"}, {"filename": "x.whl"}]})",
             R"({"files": [{"filename": "x.whl", "url": "x.whl", "hashes": {"sha256": "abc"}}]})",
             R"({"files": [{"filename": "x.whl", "url": "x.whl", "yanked": 3}]})",
             R"({"files": {"a": {"filename": "x.whl", "url": "x.whl"}}})",
         }) {
        INFO(body);
        auto whole = lockfile::parse_index_page(body, type, url);
        auto kept = lockfile::parse_index_page(body, type, url, drop_all);
        REQUIRE_FALSE(whole);
        REQUIRE_FALSE(kept);
        CHECK(kept.error().message == whole.error().message);
    }
}
