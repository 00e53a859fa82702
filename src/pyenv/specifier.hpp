#pragma once
// PEP 440 version specifiers: ~=, ==, !=, <=, >=, <, >, ===, and == / != with ".*" prefixes.

#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "pyenv/version.hpp"

namespace bootstrap::pyenv {

struct Specifier {
    std::string op;       // "~=", "==", "!=", "<=", ">=", "<", ">", "==="
    std::string version;  // as written (may end in ".*" for == / !=)
    [[nodiscard]] bool contains(const Version& v) const;
};

class SpecifierSet {
public:
    /// Parse a comma separated list ("" is the empty set, which matches everything).
    [[nodiscard]] static Result<SpecifierSet> parse(std::string_view text);

    /// PEP 440 semantics; pre-releases match only when `prereleases` is true or a specifier
    /// itself names a pre-release.
    [[nodiscard]] bool contains(const Version& v, bool prereleases = false) const;
    [[nodiscard]] bool empty() const { return m_specs.empty(); }
    [[nodiscard]] const std::vector<Specifier>& specs() const { return m_specs; }
    [[nodiscard]] std::string str() const;

private:
    std::vector<Specifier> m_specs;
};

}  // namespace bootstrap::pyenv
