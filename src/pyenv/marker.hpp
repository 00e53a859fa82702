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
using MarkerEnv = std::map<std::string, std::string>;

class Marker {
public:
    [[nodiscard]] static Result<Marker> parse(std::string_view text);
    /// As parse, but the failure carries a byte offset into `text` (for Requirement::parse).
    [[nodiscard]] static tl::expected<Marker, SyntaxError> parse_detailed(std::string_view text);
    /// Evaluate; version comparisons use PEP 440 where both sides parse, else string compare.
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
