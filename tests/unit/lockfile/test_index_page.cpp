#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>

#include "core/fs.hpp"
#include "lockfile/index_page.hpp"

using namespace bootstrap;

namespace {

const std::string k_json = "application/vnd.pypi.simple.v1+json";

/// A trimmed copy of a real PyPI project page (tests/data/index/, fetched with curl).
std::string fixture(const std::string& file) {
    auto text = core::read_file(std::filesystem::path(BS_TEST_DATA) / "index" / file);
    REQUIRE(text.has_value());
    return *text;
}

std::vector<lockfile::IndexFile> parse(std::string_view body, std::string_view type,
                                       const std::string& url = "https://pypi.org/simple/x/") {
    auto files = lockfile::parse_index_page(body, type, url);
    INFO((files ? "" : files.error().message));
    REQUIRE(files.has_value());
    return *files;
}

std::map<std::string, lockfile::IndexFile> by_name(const std::vector<lockfile::IndexFile>& files) {
    std::map<std::string, lockfile::IndexFile> out;
    for (const auto& f : files) out[f.filename] = f;
    return out;
}

std::string error_of(std::string_view body, std::string_view type, const std::string& url) {
    auto files = lockfile::parse_index_page(body, type, url);
    REQUIRE_FALSE(files.has_value());
    return files.error().message;
}

}  // namespace

TEST_CASE("PyPI's JSON and HTML pages for a project list the same files and hashes") {
    for (std::string project : {"pygments", "charset-normalizer"}) {
        INFO(project);
        std::string url = "https://pypi.org/simple/" + project + "/";
        auto json = by_name(parse(fixture(project + ".json"), k_json, url));
        auto html = by_name(parse(fixture(project + ".html"), "text/html", url));
        REQUIRE(json.size() >= 6);
        REQUIRE(json.size() == html.size());
        for (const auto& [name, f] : json) {
            INFO(name);
            REQUIRE(html.count(name) == 1);
            CHECK(html[name].sha256 == f.sha256);
            CHECK(html[name].url == f.url);
            CHECK(html[name].yanked == f.yanked);
            CHECK(f.sha256.size() == 64);
            CHECK(f.url.starts_with("https://files.pythonhosted.org/packages/"));
        }
    }
    auto pygments = by_name(parse(fixture("pygments.json"), k_json));
    CHECK(pygments.at("pygments-2.18.0-py3-none-any.whl").sha256 ==
          "b8e6aca0523f3ab76fee51799c488e38782ac06eafcf95e7ba832985c8e7b13a");
    CHECK(pygments.count("Pygments-2.0.2-py3-none-any.whl") == 1);  // old uploads: capitalised
    auto charset = by_name(parse(fixture("charset-normalizer.html"), "text/html"));
    CHECK(charset
              .at("charset_normalizer-3.4.8-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64."
                  "manylinux_2_28_x86_64.whl")
              .yanked);
    CHECK_FALSE(charset.at("charset_normalizer-3.4.1.tar.gz").yanked);
}

TEST_CASE("the content type picks the parser, without one the body decides") {
    std::string json = R"({"meta": {"api-version": "1.1"}, "name": "x", "files": [
        {"filename": "x-1.0-py3-none-any.whl", "url": "../../files/x-1.0-py3-none-any.whl",
         "hashes": {"sha256": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
         "yanked": "broken build"},
        {"filename": "x-1.0.tar.gz", "url": "https://files/x-1.0.tar.gz", "hashes": {}}]})";
    std::string html = R"(<a href="../../files/x-1.0-py3-none-any.whl">x</a>)";
    for (std::string type : {k_json, std::string("application/vnd.pypi.simple.latest+json"),
                             std::string("application/json; charset=utf-8"), std::string()}) {
        INFO(type);
        auto files = parse(json, type, "http://h/simple/x/");
        REQUIRE(files.size() == 2);
        CHECK(files[0].filename == "x-1.0-py3-none-any.whl");
        CHECK(files[0].url == "http://h/files/x-1.0-py3-none-any.whl");
        CHECK(files[0].sha256 == std::string(64, 'a'));
        CHECK(files[0].yanked);
        CHECK(files[1].sha256.empty());
        CHECK_FALSE(files[1].yanked);
    }
    for (std::string type : {"text/html", "application/vnd.pypi.simple.v1+html; charset=UTF-8", ""}) {
        INFO(type);
        auto files = parse(html, type, "http://h/simple/x/");
        REQUIRE(files.size() == 1);
        CHECK(files[0].url == "http://h/files/x-1.0-py3-none-any.whl");
    }
}

TEST_CASE("HTML anchors: quoting, case, entities, percent-encoding, fragments, comments") {
    std::string html = R"(<!DOCTYPE html><html><body>
<!-- <a href="commented-1.0-py3-none-any.whl">no</a> -->
<a href="/files/demo_torch-2.11.0%2Bcu130-py3-none-any.whl#sha256=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" data-requires-python="&gt;=3.9">t</a><br/>
<A HREF='dl?name=a-1.0-py3-none-any.whl&amp;v=1#md5=0123'>a</A>
<a data-yanked="" href=b-1.0-py3-none-any.whl#sha256=cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc>b</a>
<a href="../">up</a><abbr>not an anchor</abbr><a>no href</a>
<a href="c%zz%-1%2-1.0-py3-none-any.whl">bad escapes kept</a>
</body></html>)";
    auto files = parse(html, "text/html", "https://idx.example/simple/demo/");
    REQUIRE(files.size() == 4);
    CHECK(files[0].filename == "demo_torch-2.11.0+cu130-py3-none-any.whl");
    CHECK(files[0].url == "https://idx.example/files/demo_torch-2.11.0%2Bcu130-py3-none-any.whl");
    CHECK(files[0].sha256 == std::string(64, 'b'));
    CHECK(files[1].filename == "dl");  // the last path segment, not the query
    CHECK(files[1].url == "https://idx.example/simple/demo/dl?name=a-1.0-py3-none-any.whl&v=1");
    CHECK(files[1].sha256.empty());  // only sha256 fragments count
    CHECK(files[2].filename == "b-1.0-py3-none-any.whl");
    CHECK(files[2].yanked);
    CHECK(files[2].sha256 == std::string(64, 'c'));
    CHECK(files[3].filename == "c%zz%-1%2-1.0-py3-none-any.whl");
    CHECK_FALSE(files[0].yanked);
}

// The expected files below are what pip 26.3's parse_links (pip._internal.index.collector)
// makes of the same page: filename, url_without_fragment and the link's hashes.
TEST_CASE("HTML pages: <base href> is where relative links resolve, the first one only") {
    std::string html = R"(<html><head><base href="https://files.example/dist/"></head><body>
<a href="x-1.0.tar.gz">x</a><a href="../y-1.0.tar.gz">y</a><a href="/z-1.0.tar.gz">z</a>
<a href="https://other/w-1.0.tar.gz">w</a></body></html>)";
    auto files = parse(html, "text/html", "https://idx.example/simple/x/");
    REQUIRE(files.size() == 4);
    CHECK(files[0].url == "https://files.example/dist/x-1.0.tar.gz");  // was .../simple/x/x-1.0...
    CHECK(files[1].url == "https://files.example/y-1.0.tar.gz");
    CHECK(files[2].url == "https://files.example/z-1.0.tar.gz");
    CHECK(files[3].url == "https://other/w-1.0.tar.gz");
    // A <base> without href does not count; a later one does not replace the first; it
    // applies to links before it too.
    auto later = parse(R"(<base target="_blank"><a href="x-1.0.tar.gz">x</a><base href="https://b1/d/">
<base href="https://b2/">)",
                       "text/html", "https://idx.example/simple/x/");
    REQUIRE(later.size() == 1);
    CHECK(later[0].url == "https://b1/d/x-1.0.tar.gz");
    // A relative base resolves against the page's URL, as HTML has it (pip leaves it
    // unresolved and makes a URL with no scheme of it).
    auto relative = parse(R"(<base href=" ../../files/ "><a href="x-1.0.tar.gz">x</a>)", "text/html",
                          "https://idx.example/simple/x/");
    REQUIRE(relative.size() == 1);
    CHECK(relative[0].url == "https://idx.example/files/x-1.0.tar.gz");
}

TEST_CASE("HTML pages: a hash fragment is read as pip reads it, other items beside it") {
    const std::string a(64, 'a'), b(64, 'b'), c(64, 'c');
    std::string html = "<a href=\"/p/x-1.0.tar.gz#sha256=" + a + "&egg=x\">x</a>" +  //
                       "<a href=\"y-1.0.tar.gz#egg=y&sha256=" + b + "\">y</a>" +     //
                       "<a href=\"z-1.0.tar.gz#md5=00&sha256=" + c + "\">z</a>" +    //
                       "<a href=\"w-1.0.tar.gz#sha256=" + c + "&amp;md5=00\">w</a>";
    auto files = parse(html, "text/html", "https://idx.example/simple/x/");  // was an error
    REQUIRE(files.size() == 4);
    CHECK(files[0].url == "https://idx.example/p/x-1.0.tar.gz");
    CHECK(files[0].sha256 == a);
    CHECK(files[1].sha256 == b);
    CHECK(files[2].sha256.empty());  // pip's hash for it is the md5, the first one named
    CHECK(files[3].sha256 == c);
    CHECK(files[3].url == "https://idx.example/simple/x/w-1.0.tar.gz");
}

TEST_CASE("HTML pages: whitespace around an href is not part of the URL") {
    // WHATWG URL parsing: C0 controls and spaces at either end go, tabs and newlines go
    // wherever they are. (pip strips the leading ones and drops tabs and newlines, but keeps
    // trailing spaces as %20 in the URL.)
    auto files = parse(
        "<a href=\"  x-1.0.tar.gz\">x</a><a href=\"\ny-1.0.tar.gz\t\">y</a>"
        "<a href=\"z-1.0\n.tar.gz\">z</a><a href=\"w-1.0.tar.gz  \">w</a>",
        "text/html", "https://idx.example/simple/x/");
    REQUIRE(files.size() == 4);
    CHECK(files[0].filename == "x-1.0.tar.gz");  // was "  x-1.0.tar.gz"
    CHECK(files[0].url == "https://idx.example/simple/x/x-1.0.tar.gz");
    CHECK(files[1].filename == "y-1.0.tar.gz");
    CHECK(files[1].url == "https://idx.example/simple/x/y-1.0.tar.gz");
    CHECK(files[2].filename == "z-1.0.tar.gz");
    CHECK(files[3].filename == "w-1.0.tar.gz");
    CHECK(files[3].url == "https://idx.example/simple/x/w-1.0.tar.gz");
}

TEST_CASE("HTML pages: an <a> inside <script> or <style> is no link") {
    std::string html = R"(<script>document.write('<a href="evil-1.0.tar.gz">e</a>');</script>
<a href="ok-1.0.tar.gz">o</a>
<STYLE>a::after { content: "<a href='css-1.0.tar.gz'>" }</STYLE >
<a href="ok-2.0.tar.gz">o</a><script src="x.js"></script><a href="ok-3.0.tar.gz">o</a>
<script src="y.js"/><a href="ok-4.0.tar.gz">o</a>)";
    auto files = parse(html, "text/html", "https://idx.example/simple/x/");
    REQUIRE(files.size() == 4);  // was 6: evil and css were files
    CHECK(files[0].filename == "ok-1.0.tar.gz");
    CHECK(files[1].filename == "ok-2.0.tar.gz");
    CHECK(files[2].filename == "ok-3.0.tar.gz");
    CHECK(files[3].filename == "ok-4.0.tar.gz");
    // An unclosed script hides the rest of the page.
    CHECK(parse("<a href=\"a-1.0.tar.gz\">a</a><script><a href=\"b-1.0.tar.gz\">", "text/html").size() == 1);
}

TEST_CASE("HTML pages: an <a> inside CDATA or another <! or <? declaration is no link") {
    // HTML reads each as a comment up to the first '>' (the differential test found the CDATA
    // one listed, where pip lists nothing).
    CHECK(parse(R"(<![CDATA[<a href="x-1.0.tar.gz">]]>)", "text/html").empty());
    CHECK(parse(R"(<!x <a href="x-1.0.tar.gz">)", "text/html").empty());
    CHECK(parse(R"(<?php <a href="x-1.0.tar.gz"> ?>)", "text/html").empty());
    auto files = parse(R"(<!DOCTYPE html><?xml version="1.0"?><a href="y-1.0.tar.gz">y</a>)", "text/html");
    REQUIRE(files.size() == 1);
    CHECK(files[0].filename == "y-1.0.tar.gz");
    CHECK(parse("<!DOCTYPE html", "text/html").empty());
}

TEST_CASE("JSON pages: a url's #sha256= fragment is not kept, and its hash wins") {
    const std::string a(64, 'a'), b(64, 'b'), c(64, 'c');
    std::string json = R"({"meta": {"api-version": "1.1"}, "files": [
        {"filename": "x-1.0.tar.gz", "url": "../../f/x-1.0.tar.gz#sha256=)" +
                       a + R"(", "hashes": {"sha256": ")" + b + R"("}},
        {"filename": "y-1.0.tar.gz", "url": "https://f/y-1.0.tar.gz#md5=00", "hashes": {"sha256": ")" +
                       c + R"("}}]})";
    auto files = parse(json, k_json, "https://idx.example/simple/x/");
    REQUIRE(files.size() == 2);
    CHECK(files[0].url == "https://idx.example/f/x-1.0.tar.gz");  // was ...x-1.0.tar.gz#sha256=aaa...
    CHECK(files[0].sha256 == a);                                  // pip merges the fragment's hash over "hashes"
    CHECK(files[1].url == "https://f/y-1.0.tar.gz");
    CHECK(files[1].sha256 == c);
}

TEST_CASE("HTML character references decode, unknown ones stay") {
    CHECK(lockfile::decode_html_entities("a&amp;b&lt;&gt;&quot;&apos;") == "a&b<>\"'");
    CHECK(lockfile::decode_html_entities("&#43;&#x2B;&#X2b;") == "+++");
    CHECK(lockfile::decode_html_entities("&#xE9;") == "\xC3\xA9");
    CHECK(lockfile::decode_html_entities("&nbsp; & &amp &#xZZ; &#0; &#xD800;") == "&nbsp; & &amp &#xZZ; &#0; &#xD800;");
}

TEST_CASE("links resolve against the page URL (RFC 3986)") {
    const std::string base = "https://h:8080/a/simple/demo/?q=1#f";
    CHECK(lockfile::resolve_url(base, "https://other/x.whl") == "https://other/x.whl");
    CHECK(lockfile::resolve_url(base, "//cdn/x.whl") == "https://cdn/x.whl");
    CHECK(lockfile::resolve_url(base, "/files/x.whl") == "https://h:8080/files/x.whl");
    CHECK(lockfile::resolve_url(base, "x.whl") == "https://h:8080/a/simple/demo/x.whl");
    CHECK(lockfile::resolve_url(base, "../../../files/x.whl?v=2") == "https://h:8080/files/x.whl?v=2");
    CHECK(lockfile::resolve_url(base, "../../../../../x.whl") == "https://h:8080/x.whl");
    CHECK(lockfile::resolve_url(base, "./sub/./x.whl") == "https://h:8080/a/simple/demo/sub/x.whl");
    CHECK(lockfile::resolve_url(base, "..") == "https://h:8080/a/simple/");
    CHECK(lockfile::resolve_url("https://h", "x.whl") == "https://h/x.whl");
    CHECK(lockfile::resolve_url("file:///srv/index/demo/", "../files/x.whl") == "file:///srv/index/files/x.whl");
}

TEST_CASE("a malformed page is an error naming its URL") {
    const std::string url = "https://idx.example/simple/x/";
    CHECK(error_of("{\"files\": [", k_json, url)
              .find("https://idx.example/simple/x/ is not a valid PEP 691 "
                    "project page: [json.exception.parse_error") == 0);
    CHECK(error_of("[]", k_json, url) == url + " is not a valid PEP 691 project page: not a JSON object");
    CHECK(error_of(R"({"meta": {"api-version": "2.0"}, "files": []})", k_json, url) ==
          url + " is not a valid PEP 691 project page: api-version 2.0 (this bootstrap reads 1.x)");
    CHECK(error_of(R"({"meta": {"api-version": "1.0"}})", k_json, url) ==
          url + " is not a valid PEP 691 project page: no \"files\" array");
    CHECK(error_of(R"({"files": [{"filename": 3, "url": "x"}]})", k_json, url)
              .find(url + " is not a valid PEP 691 project page: [json.exception.type_error") == 0);
    CHECK(error_of(R"({"files": [{"filename": "x.whl"}]})", k_json, url).find("'url' not found") != std::string::npos);
    CHECK(error_of(R"({"files": [{"filename": "x.whl", "url": "x.whl", "hashes": {"sha256": "abc"}}]})", k_json, url) ==
          url + " lists x.whl with a malformed sha256 'abc'");
    CHECK(error_of(R"(<a href="x.whl#sha256=zz">)", "text/html", url) ==
          url + " lists x.whl with a malformed sha256 'zz'");
}
