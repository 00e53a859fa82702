#pragma once
// Test-only: an HTTP/1.1 loopback server that serves one blob with scripted answers (normal,
// busy, truncated, trickle, endless, ...), and the fixture the download tests share.

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

namespace bootstrap::test {

namespace fs = std::filesystem;

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
            extra = fmt::format("Content-Range: bytes 0-{}/{}\r\n", m_blob.size() - 1, m_blob.size());
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
            extra = fmt::format("Content-Range: bytes {}-{}/{}\r\n", *from, m_blob.size() - 1, m_blob.size());
            body = m_blob.substr(*from);
        } else {
            body = m_blob;
        }
        if (answer == Answer::wrong_bytes)
            for (auto& c : body) c = static_cast<char>(c ^ 0x5a);
        std::string out = fmt::format(
            "HTTP/1.1 {}\r\nContent-Length: {}\r\nConnection: close\r\n"
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
        while (::recv(fd, buf, sizeof buf, 0) > 0) {}
    }

    // endless / trickle: send until the client goes away (or the server stops).
    void stream(int fd, Answer answer) {
        std::string head = answer == Answer::endless ? "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
                                                     : fmt::format(
                                                           "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n"
                                                           "Connection: close\r\n\r\n",
                                                           m_blob.size());
        if (::send(fd, head.data(), head.size(), MSG_NOSIGNAL) <= 0) return;
        for (size_t at = 0; !m_stop;) {
            std::string_view chunk = answer == Answer::endless ? std::string_view(m_blob)
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

inline std::string make_blob(size_t size) {
    std::string blob(size, '\0');
    uint32_t x = 12345;
    for (auto& c : blob) {
        x = x * 1103515245u + 12345u;
        c = static_cast<char>(x >> 24);
    }
    return blob;
}

inline std::string read(const fs::path& p) {
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

}  // namespace bootstrap::test
