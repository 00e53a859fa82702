#include "net/transfer.hpp"

#include <curl/curl.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/interrupt.hpp"
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
        void* lib = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) {
            problem = fmt::format(
                "cannot load libcurl.so.4 ({}); install it with `apt-get install libcurl4`",
                ::dlerror());
            return;
        }
        auto load = [&](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
            if (fn == nullptr && problem.empty())
                problem = fmt::format("libcurl.so.4 lacks {}", name);
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
    if (!problem.empty()) return fail(ErrorCode::network, problem);
    return &api;
}

// State of one perform(), reached from libcurl's callbacks.
struct Attempt {
    const TransferSpec* spec;
    ResponseHead head;
    bool aborted = false;
};

std::optional<uint64_t> parse_u64(std::string_view s) {
    std::string text(s);
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (end == text.c_str() || errno != 0 || text.front() == '-') return std::nullopt;
    return v;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
    auto* a = static_cast<Attempt*>(user);
    std::string_view line(data, size * n);
    if (line.substr(0, 5) == "HTTP/") {  // a new response (after a redirect or a 1xx) starts
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
        std::string text(value);
        char* end = nullptr;
        double s = std::strtod(text.c_str(), &end);
        if (end != text.c_str() && s >= 0) a->head.retry_after = s;
    } else if (name == "content-type") {
        a->head.content_type = std::string(value);
    } else if (name == "content-length") {
        a->head.content_length = parse_u64(value);
    } else if (name == "content-range" && core::to_lower(value.substr(0, 6)) == "bytes ") {
        a->head.range_start = parse_u64(value.substr(6));  // "*/T" (a 416's) gives none
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

int on_progress(void*, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return core::interrupt_signal() != 0 ? 1 : 0;  // non-zero aborts the transfer
}

// Transport failures that would fail the same way on every attempt.
bool permanent_failure(CURLcode rc) {
    switch (rc) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_FILE_COULDNT_READ_FILE:
    case CURLE_REMOTE_FILE_NOT_FOUND:
    case CURLE_REMOTE_ACCESS_DENIED:
    case CURLE_LOGIN_DENIED:
        return true;
    default:
        return false;
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

TransferResult Session::perform(const TransferSpec& spec) {
    const CurlApi* api = *curl_api();  // open() succeeded, so it is loaded
    auto* curl = static_cast<CURL*>(m_handle);
    curl_slist* headers = nullptr;
    for (const auto& [k, v] : spec.headers)
        headers = api->slist_append(headers, (k + ": " + v).c_str());
    struct HeaderCleanup {
        const CurlApi* api;
        curl_slist* h;
        ~HeaderCleanup() { api->slist_free_all(h); }
    } header_cleanup{api, headers};

    Attempt attempt{&spec, {}, false};
    char errbuf[CURL_ERROR_SIZE] = {};
    std::string range = spec.range_from ? fmt::format("{}-", *spec.range_from) : std::string();
    api->easy_reset(curl);
    api->easy_setopt(curl, CURLOPT_URL, spec.url.c_str());
    api->easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    api->easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
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
    api->easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    api->easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    api->easy_setopt(curl, CURLOPT_USERAGENT, "bootstrap");
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
    r.completed = rc == CURLE_OK;
    r.interrupted = rc == CURLE_ABORTED_BY_CALLBACK || core::interrupt_signal() != 0;
    r.permanent = permanent_failure(rc);
    r.range_refused = r.status == 416 || rc == CURLE_BAD_DOWNLOAD_RESUME;
    if (rc != CURLE_OK)
        r.problem = errbuf[0] ? errbuf : api->easy_strerror(rc);
    else if (r.status != 0 && (r.status < 200 || r.status >= 300))
        r.problem = fmt::format("HTTP status {}", r.status);
    return r;
}

bool worth_retrying(const TransferResult& r) {
    if (!r.completed) return !r.permanent;
    return is_retryable(r.status);
}

double retry_delay(const TransferResult& r, double backoff_base, int failures) {
    if (r.head.retry_after) return *r.head.retry_after;
    return std::min(30.0, backoff_base * static_cast<double>(1u << std::min(failures - 1, 16)));
}

}  // namespace bootstrap::net::detail
