#pragma once
// The lines of a requirements file bootstrap writes for an installer (`-r FILE --require-hashes`):
// one requirement per line, built only from checked values. pip splits a line at whitespace and
// reads the first word starting with '-' as an option (`--extra-index-url`), '#' after a space
// as a comment, and a newline as the next requirement; uv reads them alike. So a value that
// reaches an installer holds no control character and starts no word with '-', and a wheel's
// path is written as pip and uv both read it: as is when it is plain, else `name @ file://...`
// with every other byte percent-encoded (a bare `file://` URL with `%23` is misread by uv 0.13).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::pyenv {

/// Why `value` may not reach an installer as written: "holds a control character (U+000A at
/// byte 12)" or "starts with '-' (an installer reads it as an option)"; nullopt when it may.
[[nodiscard]] std::optional<std::string> unsafe_installer_value(std::string_view value);

/// One hashed requirement: `name==version` from an index, or the wheel file `wheel` (absolute).
struct HashedRequirement {
    std::string name;                 // a PEP 508 name
    std::string version;              // a PEP 440 version (with `wheel` too: checked, not written)
    std::string wheel;                // "" when from an index
    std::string marker;               // "" = everywhere
    std::vector<std::string> sha256;  // at least one, 64 hex digits each
};

/// The line for `r` ("demo-core==1.0 ; marker --hash=sha256:H", "/abs/x.whl --hash=...", or
/// "x @ file:///a%20b/x.whl --hash=..."), without its newline. An error naming the field when a
/// value cannot be written safely: a name that is not PEP 508, a version that is not PEP 440, a
/// relative path, a control character, a marker word that starts with '-' or '#', a bad hash.
[[nodiscard]] Result<std::string> hashed_requirement_line(const HashedRequirement& r);

}  // namespace bootstrap::pyenv
