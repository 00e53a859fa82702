#pragma once
// PEP 508 environment markers: parse once, evaluate against an interpreter's marker values.

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "pyenv/version.hpp"

namespace bootstrap::pyenv {

/// Marker variables: python_version, python_full_version, os_name, sys_platform,
/// platform_machine, platform_system, platform_release, platform_version,
/// platform_python_implementation, implementation_name, implementation_version, and "extra".
/// PEP 751's "extras" and "dependency_groups" are sets: their value here is the names joined
/// by ',' ("" or missing is the empty set, as packaging has them for a lock file).
using MarkerEnv = std::map<std::string, std::string>;

/// The longest marker parsed. PEP 508 sets none; real markers are under 300 characters.
inline constexpr size_t k_max_marker_length = 16 * 1024;
/// How deep parentheses may nest in a marker (the parser recurses into each pair; 100,000
/// nested pairs overflowed the stack). Python's packaging stops near 330 (its recursion limit).
inline constexpr int k_max_marker_nesting = 32;

class Marker {
public:
    [[nodiscard]] static Result<Marker> parse(std::string_view text);
    /// As parse, but the failure carries a byte offset into `text` (for Requirement::parse).
    [[nodiscard]] static tl::expected<Marker, SyntaxError> parse_detailed(std::string_view text);
    /// Evaluate as packaging 26 does: python_version, python_full_version,
    /// implementation_version and platform_release compare as PEP 440 versions when the
    /// comparison is a valid specifier, everything else as strings (marker.cpp has the rules).
    /// A variable missing from `env` reads as "" (so a missing "extra" matches no extra).
    [[nodiscard]] bool evaluate(const MarkerEnv& env) const;
    /// Canonical form: variables bare, strings double-quoted, parentheses only where needed.
    [[nodiscard]] const std::string& str() const { return m_text; }

    struct Node;

private:
    std::string m_text;
    std::shared_ptr<const Node> m_root;
};

}  // namespace bootstrap::pyenv
