#pragma once
// Any TOML document as a toml-free value tree (toml++ stays inside recipe/): what a reader of
// another TOML format walks (a PEP 751 pylock.toml: lockfile/pylock.hpp), every value and key
// located by file:line:col.

#include <string>
#include <string_view>

#include "core/error.hpp"
#include "recipe/value.hpp"

namespace bootstrap::recipe {

/// The document's root table. `file` names it in locations and messages. A syntax error, or
/// text past the bounds a recipe keeps (size, nesting: prescan.hpp), is a usage error
/// "FILE:LINE:COL: what".
[[nodiscard]] Result<Value> parse_toml_document(std::string_view text, const std::string& file);

}  // namespace bootstrap::recipe
