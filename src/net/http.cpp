#include "net/http.hpp"

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "net/transfer.hpp"

namespace bootstrap::net {

bool is_retryable(long status) { return status == 0 || status == 408 || status == 429 || status >= 500; }

// Attempt loop: attempt -> (2xx, or file:// done: return) | (worth retrying and attempts left:
// wait Retry-After or backoff, then attempt again) | (otherwise: error with the last status or
// curl's reason).
Result<Response> get(const Request& request) {
    BS_TRY(auto session, detail::Session::open());
    std::string body;
    detail::TransferSpec spec;
    spec.url = request.url;
    spec.headers = request.headers;
    spec.connect_timeout = request.connect_timeout;
    spec.read_timeout = request.read_timeout;
    spec.deadline = request.deadline;
    bool too_long = false;  // the body passed max_bytes: an endless page, not a big one
    spec.on_body = [&](const detail::ResponseHead&, std::string_view chunk) {
        if (body.size() + chunk.size() > request.max_bytes) {
            too_long = true;
            return false;
        }
        body.append(chunk);
        return true;
    };
    auto interrupted = [&] {
        return fail(ErrorCode::interrupted, fmt::format("interrupted while fetching {}", request.url));
    };
    auto out_of_time = [&] {
        return fail(ErrorCode::timeout, fmt::format("GET {} did not finish in the time it was given", request.url));
    };
    std::string capped;  // a note when a Retry-After was cut to the cap
    for (int attempt = 1;; ++attempt) {
        body.clear();
        auto r = session.perform(spec);
        if (r.interrupted) return interrupted();
        if (r.deadline_passed) return out_of_time();
        if (too_long)
            return fail(ErrorCode::network, fmt::format("GET {} refused: the body is longer than the limit of {}",
                                                        request.url, core::format_size(request.max_bytes)));
        // file:// transfers have no status code: success is curl's own.
        if (r.completed && (r.status == 0 || (r.status >= 200 && r.status < 300))) {
            Response response;
            response.status = r.status;
            response.body = std::move(body);
            response.content_type = r.head.content_type;
            response.effective_url = r.effective_url;
            response.attempts = attempt;
            return response;
        }
        if (!detail::worth_retrying(r) || attempt > request.retries)
            return fail(ErrorCode::network,
                        fmt::format("GET {} failed after {} attempt{}: {}{}", request.url, attempt,
                                    attempt == 1 ? "" : "s", r.problem, capped.empty() ? "" : " (" + capped + ")"));
        auto wait = detail::retry_delay(r, request.backoff_base, attempt, request.max_retry_after);
        if (wait.asked) capped = wait.note();
        if (request.deadline &&
            std::chrono::steady_clock::now() + std::chrono::duration<double>(wait.seconds) >= *request.deadline)
            return out_of_time();
        if (!core::sleep_interruptible(wait.seconds)) return interrupted();
    }
}

}  // namespace bootstrap::net
