#include "net/transfer.hpp"

#include <curl/curl.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/fd.hpp"
#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/shared_library.hpp"
#include "core/strings.hpp"
#include "net/http.hpp"

namespace bootstrap::net::detail {

namespace {

// libcurl is opened on first use, not linked: it pulls in some thirty libraries (TLS, Kerberos,
// LDAP, ...) whose loading would cost every run, while only a few commands fetch anything.
struct CurlApi {
    CURLcode (*global_init)(long);
    CURL* (*easy_init)();
    void (*easy_cleanup)(CURL*);
    void (*easy_reset)(CURL*);
    CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
    CURLcode (*easy_perform)(CURL*);
    CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
    const char* (*easy_strerror)(CURLcode);
    curl_slist* (*slist_append)(curl_slist*, const char*);
    void (*slist_free_all)(curl_slist*);
};

Result<const CurlApi*> curl_api() {
    static std::once_flag once;
    static CurlApi api{};
    static std::string problem;
    std::call_once(once, [] {
        // Loaded once for the process and never unmapped: curl_global_init's state lives in it.
        static const core::SharedLibrary lib("libcurl.so.4", core::SharedLibrary::Unload::never);
        if (!lib.loaded()) {
            // The binary itself needs only glibc; downloads need the system's libcurl, which a
            // bare image (debian:bookworm-slim, CUDA's images) may not have. Not a passing
            // failure: trying again cannot help.
            problem = fmt::format(
                "downloading needs libcurl (libcurl.so.4), which this system lacks ({}): install it "
                "(Debian/Ubuntu: `apt-get install libcurl4`, on Ubuntu 24.04 `libcurl4t64`; Fedora/RHEL: "
                "`dnf install libcurl`), or unpack the source and name its directory (`source = {{ path = ... }}`)",
                lib.error());
            return;
        }
        auto load = [&](auto& fn, const char* name) {
            fn = lib.symbol<std::remove_reference_t<decltype(fn)>>(name);
            if (fn == nullptr && problem.empty()) problem = fmt::format("libcurl.so.4 lacks {}", name);
        };
        load(api.global_init, "curl_global_init");
        load(api.easy_init, "curl_easy_init");
        load(api.easy_cleanup, "curl_easy_cleanup");
        load(api.easy_reset, "curl_easy_reset");
        load(api.easy_setopt, "curl_easy_setopt");
        load(api.easy_perform, "curl_easy_perform");
        load(api.easy_getinfo, "curl_easy_getinfo");
        load(api.easy_strerror, "curl_easy_strerror");
        load(api.slist_append, "curl_slist_append");
        load(api.slist_free_all, "curl_slist_free_all");
        if (problem.empty()) api.global_init(CURL_GLOBAL_DEFAULT);
    });
    if (!problem.empty()) return fail(ErrorCode::not_found, problem);
    return &api;
}

using Clock = std::chrono::steady_clock;

// State of one perform(), reached from libcurl's callbacks.
struct Attempt {
    explicit Attempt(const TransferSpec& s) : spec(&s) {}
    const TransferSpec* spec;
    ResponseHead head;
    bool aborted = false;
    // The low-speed window: (time, bytes so far) samples, oldest first; the first one at least
    // low_speed_time old is where the rate is measured from.
    std::deque<std::pair<Clock::time_point, uint64_t>> samples;
    bool too_slow = false;
    bool deadline_passed = false;
    std::string stop_reason;  // why a check of ours stopped the transfer
};

/// The digits `s` starts with ("100-199/1000" -> 100), when they fit.
std::optional<uint64_t> parse_u64(std::string_view s) { return core::parse_leading_int<uint64_t>(s); }

// Content-Range: "bytes 100-199/1000" (the unit is case-insensitive).
constexpr std::string_view k_bytes_unit = "bytes ";

size_t on_header(char* data, size_t size, size_t n, void* user) {
    auto* a = static_cast<Attempt*>(user);
    std::string_view line(data, size * n);
    if (core::starts_with(line, "HTTP/")) {  // a new response (after a redirect or a 1xx) starts
        a->head = ResponseHead{};
        auto space = line.find(' ');
        if (space != std::string_view::npos)
            a->head.status = static_cast<long>(parse_u64(line.substr(space + 1, 3)).value_or(0));
        return size * n;
    }
    auto colon = line.find(':');
    if (colon == std::string_view::npos) return size * n;
    auto name = core::to_lower(core::trim(line.substr(0, colon)));
    auto value = core::trim(line.substr(colon + 1));
    if (name == "retry-after") {
        // Only the delta-seconds form; an HTTP date falls back to our own backoff.
        if (auto s = core::parse_double(value); s && *s >= 0) a->head.retry_after = *s;
    } else if (name == "content-type") {
        a->head.content_type = std::string(value);
    } else if (name == "content-length") {
        a->head.content_length = parse_u64(value);
    } else if (name == "content-range" &&
               core::starts_with(core::to_lower(value.substr(0, k_bytes_unit.size())), k_bytes_unit)) {
        // "*/T" (a 416's) gives none
        a->head.range_start = parse_u64(value.substr(k_bytes_unit.size()));
        if (auto slash = value.find('/'); slash != std::string_view::npos)
            a->head.range_total = parse_u64(value.substr(slash + 1));  // "*" gives none
    }
    return size * n;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
    auto* a = static_cast<Attempt*>(user);
    // libcurl reads up to a hundred buffers before it calls the progress function again.
    if (core::interrupt_signal() != 0) return 0;
    if (!a->spec->on_body) return size * n;
    if (!a->spec->on_body(a->head, std::string_view(data, size * n))) {
        a->aborted = true;
        return 0;  // anything but size * n fails the transfer with CURLE_WRITE_ERROR
    }
    return size * n;
}

// libcurl's own low-speed pair (CURLOPT_LOW_SPEED_*) is spent on the read timeout (no byte for
// that long), so the rate floor is measured here: an average over a sliding window, taken from
// the newest sample at least a window old.
bool below_low_speed(Attempt& a, Clock::time_point now, uint64_t received) {
    const auto& spec = *a.spec;
    if (spec.low_speed_limit == 0 || spec.low_speed_time.count() <= 0) return false;
    if (a.samples.empty() || now - a.samples.back().first >= std::chrono::milliseconds(100))
        a.samples.emplace_back(now, received);
    const auto window_start = now - spec.low_speed_time;
    while (a.samples.size() >= 2 && a.samples[1].first <= window_start) a.samples.pop_front();
    const auto& [since, then] = a.samples.front();
    if (since > window_start) return false;  // not a whole window observed yet
    double seconds = std::chrono::duration<double>(now - since).count();
    uint64_t bytes = received - then;
    if (static_cast<double>(bytes) >= static_cast<double>(spec.low_speed_limit) * seconds) return false;
    a.stop_reason =
        fmt::format("slower than {}/s for {:g} s ({} in the last {:.1f} s)", core::format_size(spec.low_speed_limit),
                    std::chrono::duration<double>(spec.low_speed_time).count(), core::format_size(bytes), seconds);
    return true;
}

int on_progress(void* user, curl_off_t, curl_off_t dlnow, curl_off_t, curl_off_t) {
    auto* a = static_cast<Attempt*>(user);
    if (core::interrupt_signal() != 0) return 1;  // non-zero aborts the transfer
    auto now = Clock::now();
    if (a->spec->deadline && now >= *a->spec->deadline) {
        a->deadline_passed = true;
        a->stop_reason = "the deadline passed";
        return 1;
    }
    if (below_low_speed(*a, now, static_cast<uint64_t>(dlnow))) {
        a->too_slow = true;
        return 1;
    }
    return 0;
}

// Transport failures that would fail the same way on every attempt.
bool permanent_failure(CURLcode rc) {
    switch (rc) {
        case CURLE_UNSUPPORTED_PROTOCOL:
        case CURLE_URL_MALFORMAT:
        case CURLE_FILE_COULDNT_READ_FILE:
        case CURLE_REMOTE_FILE_NOT_FOUND:
        case CURLE_REMOTE_ACCESS_DENIED:
        case CURLE_LOGIN_DENIED: return true;
        default: return false;
    }
}

}  // namespace

Result<Session> Session::open() {
    BS_TRY(const CurlApi* api, curl_api());
    CURL* curl = api->easy_init();
    if (curl == nullptr) return fail(ErrorCode::network, "cannot initialise libcurl");
    return Session(curl);
}

Session::Session(Session&& other) noexcept : m_handle(other.m_handle) { other.m_handle = nullptr; }

Session::~Session() {
    if (m_handle != nullptr) (*curl_api())->easy_cleanup(static_cast<CURL*>(m_handle));
}

namespace {

/// Why a file:// URL cannot be read within a deadline, if it cannot: libcurl reads a local file
/// with plain blocking reads, which a FIFO without a writer or a kernel file (/proc/kmsg) makes
/// wait forever, whatever the timeouts. A missing file is left to libcurl's own error.
std::optional<std::string> local_file_problem(const std::string& url) {
    if (url.size() < 7 || core::to_lower(std::string_view(url).substr(0, 7)) != "file://") return std::nullopt;
    std::string_view rest = std::string_view(url).substr(7);
    if (rest.starts_with("localhost/")) rest.remove_prefix(9);
    if (!rest.starts_with('/')) return std::nullopt;  // another host: libcurl refuses it
    std::string path;
    for (size_t i = 0; i < rest.size(); ++i) {
        if (rest[i] == '?' || rest[i] == '#') break;
        if (rest[i] == '%' && i + 2 < rest.size() && std::isxdigit(static_cast<unsigned char>(rest[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(rest[i + 2]))) {
            path += static_cast<char>(std::stoi(std::string(rest.substr(i + 1, 2)), nullptr, 16));
            i += 2;
        } else {
            path += rest[i];
        }
    }
    core::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (!fd) return std::nullopt;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return std::nullopt;
    if (!S_ISREG(st.st_mode))
        return fmt::format("{} is not a regular file ({})", path, core::describe_file_type(st.st_mode));
    if (auto kernel = core::kernel_filesystem(fd.get()))
        return fmt::format("{} is a file of the kernel's {} filesystem, not data", path, *kernel);
    return std::nullopt;
}

}  // namespace

TransferResult Session::perform(const TransferSpec& spec) {
    if (auto why = local_file_problem(spec.url)) {
        TransferResult r;
        r.permanent = true;
        r.problem = *why;
        r.effective_url = spec.url;
        return r;
    }
    const CurlApi* api = *curl_api();  // open() succeeded, so it is loaded
    auto* curl = static_cast<CURL*>(m_handle);
    curl_slist* headers = nullptr;
    for (const auto& [k, v] : spec.headers) headers = api->slist_append(headers, (k + ": " + v).c_str());
    struct HeaderCleanup {
        const CurlApi* api;
        curl_slist* h;
        ~HeaderCleanup() { api->slist_free_all(h); }
    } header_cleanup{api, headers};

    Attempt attempt(spec);
    char errbuf[CURL_ERROR_SIZE] = {};
    std::string range = spec.range_from ? fmt::format("{}-", *spec.range_from) : std::string();
    api->easy_reset(curl);
    api->easy_setopt(curl, CURLOPT_URL, spec.url.c_str());
    api->easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    api->easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
    // The CA bundle a site proxy needs, named as curl, OpenSSL, uv and pip users name it (libcurl
    // itself uses only the path it was built with). Read per transfer: a step's [env] may set it.
    for (const char* name : {"CURL_CA_BUNDLE", "SSL_CERT_FILE"})
        if (const char* bundle = std::getenv(name); bundle != nullptr && *bundle != '\0') {
            api->easy_setopt(curl, CURLOPT_CAINFO, bundle);
            break;
        }
    if (const char* dir = std::getenv("SSL_CERT_DIR"); dir != nullptr && *dir != '\0')
        api->easy_setopt(curl, CURLOPT_CAPATH, dir);
    api->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    api->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, static_cast<long>(spec.connect_timeout.count()));
    // A read timeout: abort when the transfer stalls below 1 byte/s for that long.
    api->easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    api->easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(spec.read_timeout.count()));
    api->easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    api->easy_setopt(curl, CURLOPT_WRITEDATA, &attempt);
    api->easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    api->easy_setopt(curl, CURLOPT_HEADERDATA, &attempt);
    api->easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    api->easy_setopt(curl, CURLOPT_XFERINFODATA, &attempt);
    if (spec.deadline) {
        // A backstop behind on_progress's check: libcurl's own overall timeout, a little later
        // so that, when it fires, the deadline has surely passed.
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*spec.deadline - Clock::now());
        api->easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<long>(0, left.count()) + 250));
    }
    api->easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    api->easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    api->easy_setopt(curl, CURLOPT_USERAGENT, "bootstrap");
    // An error answer's body is never read (it could be endless); its status and headers
    // (Retry-After) are all we use.
    api->easy_setopt(curl, CURLOPT_FAILONERROR, 1L);
    // CURLOPT_RANGE rather than RESUME_FROM: with the latter libcurl itself fails a 200 answer
    // ("server doesn't seem to support byte ranges"), where we want to take the whole body.
    if (spec.range_from) api->easy_setopt(curl, CURLOPT_RANGE, range.c_str());
    if (headers) api->easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

    CURLcode rc = api->easy_perform(curl);
    TransferResult r;
    api->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
    char* effective = nullptr;
    api->easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &effective);
    r.effective_url = effective ? effective : spec.url;
    r.head = std::move(attempt.head);
    r.aborted = attempt.aborted;
    // With FAILONERROR an answer >= 400 ends the transfer at its headers: a complete answer.
    r.completed = rc == CURLE_OK || (rc == CURLE_HTTP_RETURNED_ERROR && r.status >= 400);
    r.interrupted = core::interrupt_signal() != 0;
    r.too_slow = attempt.too_slow;
    r.deadline_passed = attempt.deadline_passed || (!r.completed && spec.deadline && Clock::now() >= *spec.deadline);
    if (r.deadline_passed && attempt.stop_reason.empty()) attempt.stop_reason = "the deadline passed";
    r.permanent = permanent_failure(rc);
    r.range_refused = r.status == 416 || rc == CURLE_BAD_DOWNLOAD_RESUME;
    if (!attempt.stop_reason.empty() && !r.completed) r.problem = attempt.stop_reason;
    else if (rc != CURLE_OK && !r.completed) r.problem = errbuf[0] ? errbuf : api->easy_strerror(rc);
    else if (r.status != 0 && (r.status < 200 || r.status >= 300)) r.problem = fmt::format("HTTP status {}", r.status);
    return r;
}

bool worth_retrying(const TransferResult& r) {
    if (r.deadline_passed) return false;
    if (!r.completed) return !r.permanent;
    return is_retryable(r.status);
}

core::RetryDelay retry_delay(const TransferResult& r, double backoff_base, int failures, double max_retry_after) {
    return core::retry_delay(backoff_base, failures, r.head.retry_after, max_retry_after);
}

}  // namespace bootstrap::net::detail
