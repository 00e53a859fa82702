#pragma once
// PEP 427 wheel file names, `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`, and
// their tag sets. Two spellings of one wheel can differ in case ("Pygments" / "pygments") and in
// the order of a compressed tag set ("manylinux_2_5_x86_64.manylinux1_x86_64" /
// "manylinux1_x86_64.manylinux_2_5_x86_64"): compare the parsed parts, never the strings.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "pyenv/version.hpp"

namespace bootstrap::pyenv {

struct WheelName {
    std::string file_name;                 // as given
    std::string name;                      // distribution part as written ("Pygments", "charset_normalizer")
    std::string normalized_name;           // PEP 503 ("pygments", "charset-normalizer")
    std::string version;                   // as written
    Version parsed_version;                // PEP 440
    std::string build_tag;                 // "" when none; starts with a digit
    std::vector<std::string> python_tags;  // the compressed parts split at '.', as written
    std::vector<std::string> abi_tags;
    std::vector<std::string> platform_tags;
    std::set<std::string> tags;  // expanded: every python-abi-platform combination, lower case
};

/// Parse a wheel file name (no directory part). An error names the file and what is wrong.
[[nodiscard]] Result<WheelName> parse_wheel_name(std::string_view file_name);

/// The expanded set of tags given as "python-abi-platform" strings, such as the `Tag:` lines of
/// a dist-info's WHEEL file; a compressed one ("py2.py3-none-any") counts as all it stands for.
/// A malformed tag is an error naming it.
[[nodiscard]] Result<std::set<std::string>> expand_tags(const std::vector<std::string>& tags);

/// True when the wheel is a file of that release: the same PEP 503 name and an equal PEP 440
/// version ("1.0" equals "1.0.0"; a version that does not parse must be spelled the same).
[[nodiscard]] bool is_release_of(const WheelName& wheel, std::string_view name, std::string_view version);

}  // namespace bootstrap::pyenv
