#include "net/http.hpp"

#include <curl/curl.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/interrupt.hpp"
#include "core/strings.hpp"

namespace bootstrap::net {

namespace {

struct Transfer {
    std::string body;
    std::string content_type;
    std::optional<double> retry_after;  // seconds, from a Retry-After header
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
    static_cast<Transfer*>(user)->body.append(data, size * n);
    return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    std::string_view line(data, size * n);
    auto colon = line.find(':');
    if (colon != std::string_view::npos) {
        auto name = core::to_lower(core::trim(line.substr(0, colon)));
        auto value = std::string(core::trim(line.substr(colon + 1)));
        if (name == "retry-after") {
            // Only the delta-seconds form; an HTTP date falls back to our own backoff.
            char* end = nullptr;
            double s = std::strtod(value.c_str(), &end);
            if (end != value.c_str() && s >= 0) t->retry_after = s;
        } else if (name == "content-type") {
            t->content_type = value;
        }
    }
    return size * n;
}

int on_progress(void*, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return core::interrupt_signal() != 0 ? 1 : 0;  // non-zero aborts the transfer
}

// libcurl is opened on first use, not linked: it pulls in some thirty libraries (TLS, Kerberos,
// LDAP, ...) whose loading would cost every run, while only `lock` ever fetches anything.
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
            problem = fmt::format("cannot load libcurl.so.4 ({}); install it with `apt-get install libcurl4`",
                                  ::dlerror());
            return;
        }
        auto load = [&](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
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
    if (!problem.empty()) return fail(ErrorCode::network, problem);
    return &api;
}

bool sleep_interruptible(double seconds) {
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        if (core::interrupt_signal() != 0) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
}

}  // namespace

bool is_retryable(long status) { return status == 0 || status == 408 || status == 429 || status >= 500; }

// Attempt loop: attempt -> (2xx: done) | (retryable and attempts left: wait Retry-After or
// backoff, then attempt again) | (otherwise: error with the last status or curl's reason).
Result<Response> get(const Request& request) {
    BS_TRY(const CurlApi* api, curl_api());
    CURL* curl = api->easy_init();
    if (curl == nullptr) return fail(ErrorCode::network, "cannot initialise libcurl");
    struct Cleanup {
        const CurlApi* api;
        CURL* c;
        ~Cleanup() { api->easy_cleanup(c); }
    } cleanup{api, curl};

    curl_slist* headers = nullptr;
    for (const auto& [k, v] : request.headers) headers = api->slist_append(headers, (k + ": " + v).c_str());
    struct HeaderCleanup {
        const CurlApi* api;
        curl_slist* h;
        ~HeaderCleanup() { api->slist_free_all(h); }
    } header_cleanup{api, headers};

    Response response;
    std::string last_problem;
    for (int attempt = 1; attempt <= request.retries + 1; ++attempt) {
        Transfer t;
        char errbuf[CURL_ERROR_SIZE] = {};
        api->easy_reset(curl);
        api->easy_setopt(curl, CURLOPT_URL, request.url.c_str());
        api->easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
        api->easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
        api->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        api->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, static_cast<long>(request.connect_timeout.count()));
        // A read timeout: abort when the transfer stalls below 1 byte/s for that long.
        api->easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
        api->easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(request.read_timeout.count()));
        api->easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
        api->easy_setopt(curl, CURLOPT_WRITEDATA, &t);
        api->easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
        api->easy_setopt(curl, CURLOPT_HEADERDATA, &t);
        api->easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
        api->easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
        api->easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
        api->easy_setopt(curl, CURLOPT_USERAGENT, "bootstrap");
        if (headers) api->easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

        CURLcode rc = api->easy_perform(curl);
        response.attempts = attempt;
        long status = 0;
        if (rc == CURLE_OK) api->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
        if (rc == CURLE_ABORTED_BY_CALLBACK || core::interrupt_signal() != 0)
            return fail(ErrorCode::interrupted, fmt::format("interrupted while fetching {}", request.url));
        // file:// transfers have no status code: success is curl's own.
        if (rc == CURLE_OK && (status == 0 || (status >= 200 && status < 300))) {
            char* effective = nullptr;
            api->easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &effective);
            response.status = status;
            response.body = std::move(t.body);
            response.content_type = t.content_type;
            response.effective_url = effective ? effective : request.url;
            return response;
        }
        last_problem = rc != CURLE_OK ? std::string(errbuf[0] ? errbuf : api->easy_strerror(rc))
                                      : fmt::format("HTTP status {}", status);
        if (!is_retryable(status) || attempt > request.retries)
            return fail(ErrorCode::network,
                        fmt::format("GET {} failed after {} attempt{}: {}", request.url, attempt,
                                    attempt == 1 ? "" : "s", last_problem));
        double wait = t.retry_after.value_or(std::min(30.0, request.backoff_base * (1 << (attempt - 1))));
        if (!sleep_interruptible(wait))
            return fail(ErrorCode::interrupted, fmt::format("interrupted while fetching {}", request.url));
    }
    return fail(ErrorCode::network, fmt::format("GET {} failed: {}", request.url, last_problem));
}

}  // namespace bootstrap::net
