#include <catch2/catch.hpp>

#include "core/fs.hpp"
#include "net/http.hpp"

using namespace bootstrap;

TEST_CASE("retryable answers are data") {
    CHECK(net::is_retryable(0));  // no answer at all
    CHECK(net::is_retryable(503));
    CHECK(net::is_retryable(429));
    CHECK(net::is_retryable(408));
    CHECK_FALSE(net::is_retryable(404));
    CHECK_FALSE(net::is_retryable(403));
}

TEST_CASE("get reads a file:// URL and names the URL when it fails") {
    core::TempDir dir("bs-net");
    REQUIRE(core::write_file_atomic(dir.path() / "page.html", "<a href=\"x\">x</a>"));
    net::Request ok;
    ok.url = "file://" + (dir.path() / "page.html").string();
    auto r = net::get(ok);
    REQUIRE(r);
    CHECK(r->body == "<a href=\"x\">x</a>");

    net::Request missing;
    missing.url = "file://" + (dir.path() / "nope.html").string();
    missing.retries = 0;
    auto bad = net::get(missing);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ErrorCode::network);
    CHECK(bad.error().message.find("GET " + missing.url + " failed after 1 attempt") == 0);
}

TEST_CASE("a refused connection is retried, then reported") {
    net::Request r;
    r.url = "http://127.0.0.1:9/simple/";  // discard port: nothing listens
    r.retries = 1;
    r.backoff_base = 0.01;
    auto res = net::get(r);
    REQUIRE_FALSE(res);
    CHECK(res.error().message.find("failed after 2 attempts") != std::string::npos);
}

TEST_CASE("a body longer than max_bytes fails the request at once") {
    core::TempDir dir("bs-net");
    REQUIRE(core::write_file_atomic(dir.path() / "page.html", std::string(5000, 'x')));
    net::Request r;
    r.url = "file://" + (dir.path() / "page.html").string();
    r.max_bytes = 4096;
    auto res = net::get(r);
    REQUIRE_FALSE(res);
    CHECK(res.error().code == bootstrap::ErrorCode::network);
    CHECK(res.error().message == "GET " + r.url + " refused: the body is longer than the limit of 4 KiB");
    r.max_bytes = 5000;
    auto fits = net::get(r);
    REQUIRE(fits);
    CHECK(fits->body.size() == 5000);
}
