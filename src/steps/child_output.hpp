#pragma once
// The installer's own one-line cause of a failure, read from what it printed (for the error
// headline). Plain text, the running tail and widths are core/terminal_text.hpp.

#include <string>
#include <string_view>

namespace bootstrap::steps {

/// Whether trying a failed step again can change the outcome.
enum class FailureKind {
    unknown,    // nothing known: retried as [network] attempts says
    transient,  // timeouts, resets, DNS, HTTP 5xx/408/429: worth another attempt
    permanent,  // an impossible resolution, a missing file or project, HTTP 4xx, a hash
                // mismatch: another attempt gives the same answer
};

struct FailureClass {
    FailureKind kind = FailureKind::unknown;
    std::string why;  // what decided it: "no solution to the resolution", "HTTP 503", ...
};

/// What an installer's (uv's, pip's) output says about retrying it. Network trouble wins over
/// a resolver's verdict: a resolution that could not read an index proves nothing.
[[nodiscard]] FailureClass classify_installer_output(std::string_view output);

/// The line an installer gives as the reason it failed, "" when it gave none that is known:
///   pip: the first "ERROR: ..." line ("Could not find a version that satisfies ...");
///   uv:  "error: X" (or "× X") with its chain of "cause:" / "Caused by:" / "╰─▶" lines:
///        a resolver's "Because ..." explanation alone, else "X: <last cause>".
/// Continuation lines of a wrapped cause are joined; the result is cut to 400 characters.
[[nodiscard]] std::string installer_cause(std::string_view output);

}  // namespace bootstrap::steps
