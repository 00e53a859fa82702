#pragma once
// The installer's own one-line cause of a failure, read from what it printed (for the error
// headline). Plain text, the running tail and widths are core/terminal_text.hpp.

#include <string>
#include <string_view>

namespace bootstrap::steps {

/// The line an installer gives as the reason it failed, "" when it gave none that is known:
///   pip: the first "ERROR: ..." line ("Could not find a version that satisfies ...");
///   uv:  "error: X" (or "× X") with its chain of "cause:" / "Caused by:" / "╰─▶" lines:
///        a resolver's "Because ..." explanation alone, else "X: <last cause>".
/// Continuation lines of a wrapped cause are joined; the result is cut to 400 characters.
[[nodiscard]] std::string installer_cause(std::string_view output);

}  // namespace bootstrap::steps
