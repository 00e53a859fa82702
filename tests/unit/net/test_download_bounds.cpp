#include "blob_server.hpp"

using namespace bootstrap;
using namespace bootstrap::test;
namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("an endless body is cut off at max_bytes, never retried, and leaves no .part") {
    Fixture f;
    f.server.script({Answer::endless, Answer::endless});
    auto req = f.request();
    req.max_bytes = 300000;
    auto start = std::chrono::steady_clock::now();
    auto r = net::download(req);
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(r.error().code == ErrorCode::network);
    CHECK(r.error().message == fmt::format("download of {} refused: no size was declared and more than the limit of "
                                           "293.0 KiB arrived; the partial file was removed",
                                           req.url));
    CHECK(seconds_since(start) < 30);  // at once; an endless body never ends by itself
    CHECK(f.server.requests().size() == 1);
    CHECK_FALSE(fs::exists(f.part));
    CHECK_FALSE(fs::exists(f.dest));
}

TEST_CASE("a declared size over max_bytes is refused before anything is written") {
    Fixture f;
    auto req = f.request();
    req.max_bytes = 100000;
    uint64_t progressed = 0;
    req.on_progress = [&](uint64_t done, uint64_t) { progressed = done; };
    auto r = net::download(req);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == fmt::format("download of {} refused: the server declares 195.3 KiB (200000 bytes), "
                                           "more than the limit of 97.7 KiB; the partial file was removed",
                                           req.url));
    CHECK(progressed == 0);
    CHECK(f.server.requests().size() == 1);
    CHECK_FALSE(fs::exists(f.part));
}

TEST_CASE("a trickle fails the low-speed check, retryably, and keeps what came for resuming") {
    Fixture f;
    auto req = f.request();
    req.low_speed_time = std::chrono::milliseconds(600);
    SECTION("every attempt trickles: an error naming the rate") {
        f.server.script({Answer::trickle, Answer::trickle});
        req.retries = 1;
        auto start = std::chrono::steady_clock::now();
        auto r = net::download(req);
        double took = seconds_since(start);
        REQUIRE_FALSE(r);
        INFO(r.error().message);
        CHECK(r.error().code == ErrorCode::network);
        CHECK(r.error().message.find(fmt::format("download of {} failed after 2 attempts: slower "
                                                 "than 1 KiB/s for 0.6 s (",
                                                 req.url)) == 0);
        CHECK(took >= 1.1);
        CHECK(took < 20);  // ~1.3 s; the whole blob at 20 B/s would take hours
        REQUIRE(f.server.requests().size() == 2);
        // The second attempt resumed after the first one's bytes: slow is not wrong.
        CHECK(BlobServer::header(f.server.requests()[1], "range"));
        REQUIRE(fs::exists(f.part));
        CHECK(read(f.part) == f.blob.substr(0, fs::file_size(f.part)));
    }
    SECTION("then a good answer: resumed and complete") {
        f.server.script({Answer::trickle});
        std::vector<net::DownloadRetry> retries;
        req.on_retry = [&](const net::DownloadRetry& e) { retries.push_back(e); };
        auto r = net::download(req);
        REQUIRE(r);
        CHECK(r->attempts == 2);
        CHECK(r->resumed_from > 0);
        CHECK(read(f.dest) == f.blob);
        REQUIRE(retries.size() == 1);
        CHECK(retries[0].attempt == 1);
        CHECK(retries[0].problem.find("slower than 1 KiB/s") == 0);
    }
}

TEST_CASE("the deadline ends an attempt in flight and keeps the .part") {
    Fixture f;
    f.server.script({Answer::trickle});
    auto req = f.request();
    req.low_speed_limit = 0;  // only the deadline stops it
    req.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
    auto start = std::chrono::steady_clock::now();
    auto r = net::download(req);
    double took = seconds_since(start);
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(r.error().code == ErrorCode::timeout);
    CHECK(r.error().message.find(fmt::format("download of {} ran out of time after 1 attempt: the "
                                             "deadline passed (",
                                             req.url)) == 0);
    CHECK(took >= 0.7);
    CHECK(took < 15);  // ~0.8 s; the trickle alone would take hours
    CHECK(f.server.requests().size() == 1);
    REQUIRE(fs::exists(f.part));
    auto kept = fs::file_size(f.part);
    CHECK(r.error().message.find(fmt::format("({} B kept in {} to resume)", kept, f.part.string())) !=
          std::string::npos);

    auto again = net::download(f.request());
    REQUIRE(again);
    CHECK(again->resumed_from == kept);
    CHECK(read(f.dest) == f.blob);
}

TEST_CASE("a wait that would end past the deadline fails at once") {
    Fixture f;
    f.server.script({Answer::busy_ten});
    auto req = f.request();
    req.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    auto start = std::chrono::steady_clock::now();
    auto r = net::download(req);
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(seconds_since(start) < 2.5);  // at once (~0.01 s), not at the deadline 5 s from now
    CHECK(r.error().code == ErrorCode::timeout);
    CHECK(r.error().message == fmt::format("download of {} ran out of time after 1 attempt: HTTP status 503, and the "
                                           "wait of 10 s before another attempt would end past the deadline",
                                           req.url));  // nothing arrived, so nothing is said to be kept
}

TEST_CASE("Retry-After: 99999 is capped, and the cap is said") {
    SECTION("the default cap is five minutes") {
        net::detail::TransferResult r;
        r.head.retry_after = 99999;
        auto d = net::detail::retry_delay(r, 0.5, 1, net::detail::k_max_retry_after);
        CHECK(d.seconds == 300);
        CHECK(d.note() == "the server's Retry-After of 99999 s was capped at 300 s");
        r.head.retry_after = 12;
        auto within = net::detail::retry_delay(r, 0.5, 1, net::detail::k_max_retry_after);
        CHECK(within.seconds == 12);
        CHECK(within.note().empty());
        CHECK(net::DownloadRequest{}.max_retry_after == net::detail::k_max_retry_after);
    }
    SECTION("a download waits the cap, reports it, and succeeds") {
        Fixture f;
        f.server.script({Answer::busy_long});
        auto req = f.request();
        req.max_retry_after = 0.2;
        std::vector<net::DownloadRetry> retries;
        req.on_retry = [&](const net::DownloadRetry& e) { retries.push_back(e); };
        auto start = std::chrono::steady_clock::now();
        auto r = net::download(req);
        REQUIRE(r);
        CHECK(seconds_since(start) < 30);  // ~0.2 s; uncapped it would be 99999 s
        REQUIRE(retries.size() == 1);
        CHECK(retries[0].wait_seconds == 0.2);
        CHECK(retries[0].problem == "HTTP status 503");
        CHECK(retries[0].note == "the server's Retry-After of 99999 s was capped at 0.2 s");
    }
    SECTION("when every answer says so, the error names the cap") {
        Fixture f;
        f.server.script({Answer::busy_long, Answer::busy_long});
        auto req = f.request();
        req.max_retry_after = 0.1;
        req.retries = 1;
        auto r = net::download(req);
        REQUIRE_FALSE(r);
        CHECK(r.error().message == fmt::format("download of {} failed after 2 attempts: HTTP status 503 (the server's "
                                               "Retry-After of 99999 s was capped at 0.1 s)",
                                               req.url));
    }
}

TEST_CASE("a 206 that is not the asked range discards the .part and fetches the file whole") {
    Fixture f;
    REQUIRE(core::write_file_atomic(f.part, f.blob.substr(0, 1000)));
    SECTION("a Content-Range starting elsewhere") { f.server.script({Answer::wrong_range}); }
    SECTION("no Content-Range at all") { f.server.script({Answer::no_range}); }
    auto r = net::download(f.request());
    REQUIRE(r);
    CHECK(r->attempts == 2);
    CHECK(r->discarded == 1000);
    CHECK(r->resumed_from == 0);
    CHECK(read(f.dest) == f.blob);
    auto requests = f.server.requests();
    REQUIRE(requests.size() == 2);
    CHECK(BlobServer::header(requests[0], "range") == "bytes=1000-");
    CHECK_FALSE(BlobServer::header(requests[1], "range"));
}

TEST_CASE("a stale .part larger than any acceptable file is discarded without asking") {
    Fixture f;
    REQUIRE(core::write_file_atomic(f.part, std::string(300000, 'g')));
    auto req = f.request();
    req.max_bytes = 250000;
    auto r = net::download(req);
    REQUIRE(r);
    CHECK(r->discarded == 300000);
    CHECK(r->attempts == 1);
    CHECK(read(f.dest) == f.blob);
    REQUIRE(f.server.requests().size() == 1);
    CHECK_FALSE(BlobServer::header(f.server.requests()[0], "range"));
}

TEST_CASE("a write that fails (a full disk) removes the .part") {
    Fixture f;
    // RLIMIT_FSIZE stands in for a full disk: writes past it fail (EFBIG) once SIGXFSZ is
    // ignored. Restored before any check.
    rlimit old{};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = old;
    small.rlim_cur = 100000;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    auto r = net::download(f.request());
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, old_handler);
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(r.error().code == ErrorCode::io);
    CHECK(r.error().message.find("cannot write " + f.part.string()) == 0);
    CHECK(r.error().message.find("(the partial download was removed)") != std::string::npos);
    CHECK_FALSE(fs::exists(f.part));
    CHECK_FALSE(fs::exists(f.dest));
}

TEST_CASE("an error answer's body is not read") {
    Fixture f;
    f.server.script({Answer::not_found});
    auto req = f.request();
    uint64_t progressed = 0;
    req.on_progress = [&](uint64_t done, uint64_t) { progressed = done; };
    auto r = net::download(req);
    REQUIRE_FALSE(r);
    CHECK(progressed == 0);
    CHECK(r.error().message.find("HTTP status 404") != std::string::npos);
}
