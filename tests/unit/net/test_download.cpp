#include "blob_server.hpp"

using namespace bootstrap;
using namespace bootstrap::test;
namespace fs = std::filesystem;

TEST_CASE("download fetches, verifies and renames into place, reporting progress") {
    Fixture f;
    uint64_t last_done = 0, last_total = 0;
    auto req = f.request();
    req.on_progress = [&](uint64_t done, uint64_t total) {
        CHECK(done >= last_done);
        last_done = done, last_total = total;
    };
    auto r = net::download(req);
    REQUIRE(r);
    CHECK(r->path == f.dest);
    CHECK(r->bytes == f.blob.size());
    CHECK(r->attempts == 1);
    CHECK(r->resumed_from == 0);
    CHECK_FALSE(r->already_there);
    CHECK(read(f.dest) == f.blob);
    CHECK_FALSE(fs::exists(f.part));
    CHECK(last_done == f.blob.size());
    CHECK(last_total == f.blob.size());
    REQUIRE(f.server.requests().size() == 1);
    CHECK_FALSE(BlobServer::header(f.server.requests()[0], "range"));
}

TEST_CASE("a truncated body is resumed with a Range request") {
    Fixture f;
    f.server.script({Answer::truncated});
    auto r = net::download(f.request());
    REQUIRE(r);
    auto half = f.blob.size() / 2;
    CHECK(r->attempts == 2);
    CHECK(r->resumed_from == half);
    CHECK(read(f.dest) == f.blob);
    auto requests = f.server.requests();
    REQUIRE(requests.size() == 2);
    CHECK(BlobServer::header(requests[1], "range") == fmt::format("bytes={}-", half));
}

TEST_CASE("a .part left by an earlier run is resumed") {
    Fixture f;
    REQUIRE(core::write_file_atomic(f.part, f.blob.substr(0, 1000)));
    auto r = net::download(f.request());
    REQUIRE(r);
    CHECK(r->resumed_from == 1000);
    CHECK(read(f.dest) == f.blob);
    REQUIRE(f.server.requests().size() == 1);
    CHECK(BlobServer::header(f.server.requests()[0], "range") == "bytes=1000-");
}

TEST_CASE("a server ignoring Range, or refusing it, still gives the right file") {
    Fixture f;
    SECTION("200 to a Range request: the .part starts over") {
        REQUIRE(core::write_file_atomic(f.part, std::string(5000, 'g')));
        f.server.script({Answer::ignore_range});
        auto r = net::download(f.request());
        REQUIRE(r);
        CHECK(r->resumed_from == 0);
        CHECK(r->attempts == 1);
        CHECK(read(f.dest) == f.blob);
        CHECK(BlobServer::header(f.server.requests()[0], "range") == "bytes=5000-");
    }
    SECTION("416: the .part is dropped and the file fetched whole") {
        REQUIRE(core::write_file_atomic(f.part, std::string(f.blob.size() + 10, 'g')));
        auto r = net::download(f.request());
        REQUIRE(r);
        CHECK(r->attempts == 2);
        CHECK(read(f.dest) == f.blob);
        auto requests = f.server.requests();
        REQUIRE(requests.size() == 2);
        CHECK_FALSE(BlobServer::header(requests[1], "range"));
    }
}

TEST_CASE("a checksum mismatch is an error, never retried, and leaves nothing") {
    Fixture f;
    f.server.script({Answer::wrong_bytes});
    auto req = f.request();
    auto r = net::download(req);
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(r.error().message.find(fmt::format("checksum mismatch for {}: expected {}, got ", req.url, req.sha256)) == 0);
    std::string wrong = f.blob;
    for (auto& c : wrong) c = static_cast<char>(c ^ 0x5a);
    CHECK(r.error().message.find(core::sha256_hex(wrong)) != std::string::npos);
    CHECK(f.server.requests().size() == 1);
    CHECK_FALSE(fs::exists(f.part));
    CHECK_FALSE(fs::exists(f.dest));
}

TEST_CASE("503 with Retry-After is waited out, then retried") {
    Fixture f;
    f.server.script({Answer::busy});
    auto start = std::chrono::steady_clock::now();
    auto r = net::download(f.request());
    auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(r);
    CHECK(r->attempts == 2);
    CHECK(elapsed >= 0.95);
    CHECK(read(f.dest) == f.blob);
}

TEST_CASE("a destination with the right sha256 is not fetched again") {
    Fixture f;
    REQUIRE(core::write_file_atomic(f.dest, f.blob));
    auto r = net::download(f.request());
    REQUIRE(r);
    CHECK(r->already_there);
    CHECK(r->attempts == 0);
    CHECK(r->bytes == f.blob.size());
    CHECK(f.server.requests().empty());

    REQUIRE(core::write_file_atomic(f.dest, "stale"));  // the wrong content is replaced
    auto again = net::download(f.request());
    REQUIRE(again);
    CHECK_FALSE(again->already_there);
    CHECK(read(f.dest) == f.blob);
}

TEST_CASE("404 is reported after one request, naming the URL") {
    Fixture f;
    f.server.script({Answer::not_found});
    auto req = f.request();
    auto r = net::download(req);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::network);
    CHECK(r.error().message == fmt::format("download of {} failed after 1 attempt: HTTP status 404", req.url));
    CHECK(f.server.requests().size() == 1);
    CHECK_FALSE(fs::exists(f.dest));
    CHECK_FALSE(fs::exists(f.part));  // nothing arrived, so no empty .part is left either
}

TEST_CASE("an interrupt keeps the .part, and the next call resumes from it") {
    Fixture f;
    auto req = f.request();
    req.on_progress = [](uint64_t, uint64_t) { core::set_interrupt_signal(SIGINT); };
    auto r = net::download(req);
    core::set_interrupt_signal(0);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::interrupted);
    REQUIRE(fs::exists(f.part));
    auto kept = fs::file_size(f.part);
    CHECK(kept > 0);
    CHECK(kept < f.blob.size());
    CHECK_FALSE(fs::exists(f.dest));

    auto resumed = net::download(f.request());
    REQUIRE(resumed);
    CHECK(resumed->resumed_from == kept);
    CHECK(read(f.dest) == f.blob);
}

TEST_CASE("file:// URLs download and resume too") {
    Fixture f;
    auto source = f.dir.path() / "source.bin";
    REQUIRE(core::write_file_atomic(source, f.blob));
    auto req = f.request();
    req.url = "file://" + source.string();
    SECTION("whole") {
        auto r = net::download(req);
        REQUIRE(r);
        CHECK(read(f.dest) == f.blob);
    }
    SECTION("resumed") {
        REQUIRE(core::write_file_atomic(f.part, f.blob.substr(0, 777)));
        auto r = net::download(req);
        REQUIRE(r);
        CHECK(r->resumed_from == 777);
        CHECK(read(f.dest) == f.blob);
    }
    SECTION("a .part longer than the file starts over") {
        REQUIRE(core::write_file_atomic(f.part, std::string(f.blob.size() + 1, 'g')));
        auto r = net::download(req);
        REQUIRE(r);
        CHECK(read(f.dest) == f.blob);
    }
    SECTION("a missing file is not retried") {
        req.url = "file://" + (f.dir.path() / "nope.bin").string();
        auto r = net::download(req);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("download of " + req.url + " failed after 1 attempt") == 0);
    }
    CHECK(f.server.requests().empty());
}

TEST_CASE("a malformed sha256 is refused before anything is fetched") {
    Fixture f;
    auto req = f.request();
    req.sha256 = "ABC";
    auto r = net::download(req);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::usage);
    CHECK(f.server.requests().empty());
}
