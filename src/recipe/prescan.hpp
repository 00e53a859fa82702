#pragma once
// Internal to recipe/: the bounds a recipe's text must keep before toml++ sees it. toml++ 3.3
// (Debian's) caps nested arrays and inline tables at 256 but recurses without a bound over
// dotted keys and table names, and overflowed the stack on `a.a.a...` of ~35,000 parts.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "recipe/validate.hpp"

namespace bootstrap::recipe::detail {

/// The largest recipe read, in bytes. Real recipes are a few KiB; toml++'s tree of a 4 MiB file
/// stays well under 100 MiB.
inline constexpr size_t k_max_recipe_bytes = size_t{4} << 20;

/// How deep tables, dotted keys, arrays and inline tables may nest, all counted together
/// (`[a.b]` then `c.d = [{ e = 1 }]` puts `e` at depth 6). Real recipes stay under 6.
inline constexpr int k_max_nesting = 64;

/// "recipe is N bytes; ..." at `file`:1:1.
[[nodiscard]] Problem too_large(uintmax_t bytes, const std::string& file);

/// The first place `text` breaks a bound above (size, a dotted key or table name of more than
/// k_max_nesting parts, or nesting deeper than that), as a problem located in `file`; nullopt
/// when toml++ may be given the text. The scan reads TOML's lexical structure (strings of all
/// four kinds, comments, keys, arrays, inline tables) without recursion; where the text is
/// malformed it stops and leaves the report to toml++, which stops at or before that place.
[[nodiscard]] std::optional<Problem> prescan_toml(std::string_view text, const std::string& file);

}  // namespace bootstrap::recipe::detail
