#pragma once
// Errors are values: every fallible function returns Result<T>; only main maps them to exit codes.

#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace bootstrap {

enum class ErrorCode {
    usage,           // bad command line (exit 2)
    invalid_recipe,  // recipe failed validation (exit 2)
    io,              // filesystem
    process,         // a child failed to start or exited non-zero
    timeout,         // a child or a wait ran past its limit
    interrupted,     // SIGINT / SIGTERM (exit 130)
    network,
    not_found,
    lock_timeout,
    step_failed,  // a recipe step failed (exit 1)
    internal,
};

struct Error {
    ErrorCode code = ErrorCode::internal;
    std::string message;  // one line: what was attempted, on what, why it failed
    std::string detail;   // optional: log tail, list of problems, ...
};

template <class T>
using Result = tl::expected<T, Error>;

using Status = Result<void>;

[[nodiscard]] inline tl::unexpected<Error> fail(ErrorCode code, std::string message, std::string detail = {}) {
    return tl::unexpected<Error>(Error{code, std::move(message), std::move(detail)});
}

/// Process exit code for an error (README, "Commands": 1 failure, 2 usage/recipe, 130 interrupted).
[[nodiscard]] int exit_code_for(const Error& error);

}  // namespace bootstrap

#define BS_CONCAT_INNER(a, b) a##b
#define BS_CONCAT(a, b) BS_CONCAT_INNER(a, b)

/// BS_TRY(auto x, expr): evaluate a Result, return its error, else bind the value.
#define BS_TRY(decl, expr) BS_TRY_IMPL(decl, expr, BS_CONCAT(bs_try_, __LINE__))
#define BS_TRY_IMPL(decl, expr, tmp)                                             \
    auto tmp = (expr);                                                           \
    if (!tmp) return tl::unexpected<::bootstrap::Error>(std::move(tmp.error())); \
    decl = std::move(*tmp)

/// BS_CHECK(expr): evaluate a Status-like Result, return its error on failure.
#define BS_CHECK(expr)                                                                             \
    do {                                                                                           \
        auto bs_check_r = (expr);                                                                  \
        if (!bs_check_r) return tl::unexpected<::bootstrap::Error>(std::move(bs_check_r.error())); \
    } while (0)
