#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "net/download.hpp"
#include "net/transfer.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

// How the loopback server answers one request.
enum class Answer {
    normal,        // 200, or 206 for "Range: bytes=N-" (416 when N is past the end)
    busy,          // 503 with "Retry-After: 1"
    truncated,     // the full Content-Length, half the body, then close
    wrong_bytes,   // 200 with a body of the right length but other bytes
    ignore_range,  // 200 and the whole blob, whatever the Range
    not_found,     // 404
    endless,       // 200 without Content-Length: the blob over and over until the client leaves
    trickle,       // 200 with the right Content-Length, then one byte every 50 ms
    wrong_range,   // 206 whose Content-Range starts at 0, whatever was asked, and the whole blob
    no_range,      // 206 without a Content-Range, with the bytes from the asked offset
    busy_long,     // 503 with "Retry-After: 99999"
    busy_ten,      // 503 with "Retry-After: 10"
};

// An HTTP/1.1 server on 127.0.0.1 (port 0) serving one blob, one connection at a time, each
// answered by the next scripted Answer (then `normal`). It records every request's head.
class BlobServer {
public:
    explicit BlobServer(std::string blob) : m_blob(std::move(blob)) {
        m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        REQUIRE(m_listen >= 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::bind(m_listen, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
        REQUIRE(::listen(m_listen, 8) == 0);
        socklen_t len = sizeof addr;
        REQUIRE(::getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
        m_port = ntohs(addr.sin_port);
        m_thread = std::thread([this] { serve(); });
    }
    ~BlobServer() {
        m_stop = true;
        m_thread.join();
        ::close(m_listen);
    }

    void script(std::initializer_list<Answer> answers) {
        std::lock_guard lock(m_mutex);
        m_script.assign(answers);
    }
    std::string url() const { return fmt::format("http://127.0.0.1:{}/pkg-1.0.tar.gz", m_port); }
    std::vector<std::string> requests() const {
        std::lock_guard lock(m_mutex);
        return m_requests;
    }

private:
    void serve() {
        while (!m_stop) {
            pollfd p{m_listen, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0) continue;
            int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) continue;
            timeval tv{2, 0};
            ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            handle(fd);
            ::close(fd);
        }
    }

    void handle(int fd) {
        std::string head;
        char buf[4096];
        while (head.find("\r\n\r\n") == std::string::npos) {
            ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0) return;
            head.append(buf, static_cast<size_t>(n));
        }
        Answer answer = Answer::normal;
        {
            std::lock_guard lock(m_mutex);
            m_requests.push_back(head);
            if (!m_script.empty()) {
                answer = m_script.front();
                m_script.pop_front();
            }
        }
        // A plain size_t and a flag: GCC 12 at -O3 flags an optional<size_t> here as maybe
        // uninitialised (a false positive).
        size_t from_offset = 0;
        bool ranged = false;
        auto range = header(head, "range");
        if (range && range->rfind("bytes=", 0) == 0) {
            from_offset = std::stoul(range->substr(6));
            ranged = true;
        }
        if (answer == Answer::ignore_range) ranged = false;
        const size_t* from = ranged ? &from_offset : nullptr;

        if (answer == Answer::endless || answer == Answer::trickle) return stream(fd, answer);
        std::string status = "200 OK", extra, body;
        if (answer == Answer::wrong_range) {
            status = "206 Partial Content";
            extra =
                fmt::format("Content-Range: bytes 0-{}/{}\r\n", m_blob.size() - 1, m_blob.size());
            body = m_blob;
        } else if (answer == Answer::no_range) {
            status = "206 Partial Content";
            body = m_blob.substr(std::min(from_offset, m_blob.size()));
        } else if (answer == Answer::busy_long) {
            status = "503 Service Unavailable", extra = "Retry-After: 99999\r\n", body = "busy";
        } else if (answer == Answer::busy_ten) {
            status = "503 Service Unavailable", extra = "Retry-After: 10\r\n", body = "busy";
        } else if (answer == Answer::not_found) {
            status = "404 Not Found", body = "no such file";
        } else if (answer == Answer::busy) {
            status = "503 Service Unavailable", extra = "Retry-After: 1\r\n", body = "busy";
        } else if (from && *from >= m_blob.size()) {
            status = "416 Range Not Satisfiable";
            extra = fmt::format("Content-Range: bytes */{}\r\n", m_blob.size());
        } else if (from) {
            status = "206 Partial Content";
            extra = fmt::format("Content-Range: bytes {}-{}/{}\r\n", *from, m_blob.size() - 1,
                                m_blob.size());
            body = m_blob.substr(*from);
        } else {
            body = m_blob;
        }
        if (answer == Answer::wrong_bytes)
            for (auto& c : body) c = static_cast<char>(c ^ 0x5a);
        std::string out = fmt::format("HTTP/1.1 {}\r\nContent-Length: {}\r\nConnection: close\r\n"
                                      "{}\r\n",
                                      status, body.size(), extra);
        out += answer == Answer::truncated ? body.substr(0, body.size() / 2) : body;
        for (std::string_view rest = out; !rest.empty();) {
            ssize_t n = ::send(fd, rest.data(), rest.size(), MSG_NOSIGNAL);
            if (n <= 0) return;  // the client gave up (an interrupt test)
            rest.remove_prefix(static_cast<size_t>(n));
        }
        // Half-close, then wait for the client to close: closing with unread input would send
        // a RST that can discard the tail the client has not read yet.
        ::shutdown(fd, SHUT_WR);
        while (::recv(fd, buf, sizeof buf, 0) > 0) {
        }
    }

    // endless / trickle: send until the client goes away (or the server stops).
    void stream(int fd, Answer answer) {
        std::string head = answer == Answer::endless
                               ? "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
                               : fmt::format("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n"
                                             "Connection: close\r\n\r\n",
                                             m_blob.size());
        if (::send(fd, head.data(), head.size(), MSG_NOSIGNAL) <= 0) return;
        for (size_t at = 0; !m_stop;) {
            std::string_view chunk = answer == Answer::endless
                                         ? std::string_view(m_blob)
                                         : std::string_view(m_blob).substr(at % m_blob.size(), 1);
            if (::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) <= 0) return;
            at += chunk.size();
            if (answer == Answer::trickle) {
                if (at >= m_blob.size()) return;
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        }
    }

public:
    static std::optional<std::string> header(const std::string& head, std::string_view name) {
        for (const auto& line : core::split(head, '\n')) {
            auto colon = line.find(':');
            if (colon == std::string::npos) continue;
            if (core::to_lower(core::trim(line.substr(0, colon))) == name)
                return std::string(core::trim(line.substr(colon + 1)));
        }
        return std::nullopt;
    }

private:
    std::string m_blob;
    int m_listen = -1;
    uint16_t m_port = 0;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
    mutable std::mutex m_mutex;
    std::deque<Answer> m_script;
    std::vector<std::string> m_requests;
};

std::string make_blob(size_t size) {
    std::string blob(size, '\0');
    uint32_t x = 12345;
    for (auto& c : blob) {
        x = x * 1103515245u + 12345u;
        c = static_cast<char>(x >> 24);
    }
    return blob;
}

std::string read(const fs::path& p) {
    auto r = core::read_file(p);
    REQUIRE(r);
    return *r;
}

struct Fixture {
    std::string blob = make_blob(200000);
    BlobServer server{blob};
    core::TempDir dir{"bs-download"};
    fs::path dest = dir.path() / "cache" / "pkg-1.0.tar.gz";
    fs::path part = dest.string() + ".part";

    net::DownloadRequest request() const {
        net::DownloadRequest r;
        r.url = server.url();
        r.dest = dest;
        r.sha256 = core::sha256_hex(blob);
        r.backoff_base = 0.01;
        return r;
    }
};

}  // namespace

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
    CHECK(r.error().message.find(fmt::format("checksum mismatch for {}: expected {}, got ",
                                             req.url, req.sha256)) == 0);
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
    CHECK(r.error().message ==
          fmt::format("download of {} failed after 1 attempt: HTTP status 404", req.url));
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
    CHECK(r.error().message ==
          fmt::format("download of {} refused: no size was declared and more than the limit of "
                      "293.0 KiB arrived; the partial file was removed",
                      req.url));
    CHECK(seconds_since(start) < 30); // at once; an endless body never ends by itself
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
    CHECK(r.error().message ==
          fmt::format("download of {} refused: the server declares 195.3 KiB (200000 bytes), "
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
        CHECK(took < 20); // ~1.3 s; the whole blob at 20 B/s would take hours
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
    CHECK(took < 15); // ~0.8 s; the trickle alone would take hours
    CHECK(f.server.requests().size() == 1);
    REQUIRE(fs::exists(f.part));
    auto kept = fs::file_size(f.part);
    CHECK(r.error().message.find(fmt::format("({} B kept in {} to resume)", kept,
                                             f.part.string())) != std::string::npos);

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
    CHECK(seconds_since(start) < 2.5); // at once (~0.01 s), not at the deadline 5 s from now
    CHECK(r.error().code == ErrorCode::timeout);
    CHECK(r.error().message ==
          fmt::format("download of {} ran out of time after 1 attempt: HTTP status 503, and the "
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
        CHECK(seconds_since(start) < 30); // ~0.2 s; uncapped it would be 99999 s
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
        CHECK(r.error().message ==
              fmt::format("download of {} failed after 2 attempts: HTTP status 503 (the server's "
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
