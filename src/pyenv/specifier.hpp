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

    /// Parse one specifier such as ">=1.0" or "==2.*"; checks the version is allowed for the op.
    [[nodiscard]] static Result<Specifier> parse(std::string_view text);
    /// The operator alone; pre-release filtering is SpecifierSet's job.
    [[nodiscard]] bool contains(const Version& v) const;
    /// Does the specifier itself name a pre-release (so pre-releases become acceptable)?
    [[nodiscard]] bool names_prerelease() const;
    [[nodiscard]] std::string str() const { return op + version; }
};

class SpecifierSet {
public:
    /// Parse a comma separated list ("" is the empty set, which matches everything).
    [[nodiscard]] static Result<SpecifierSet> parse(std::string_view text);
    /// As parse, but the failure carries a byte offset into `text` (for Requirement::parse).
    [[nodiscard]] static tl::expected<SpecifierSet, SyntaxError> parse_detailed(std::string_view text);

    /// PEP 440 semantics; pre-releases match only when `prereleases` is true or a specifier
    /// itself names a pre-release.
    ///
    /// Two questions use it. "Is this installed version acceptable?" is `contains(v, true)`: a
    /// pre-release that passes the operators is fine, as `pip check` sees it (transitive
    /// dependencies, doctor, the fixed point). "Would the installer have picked it?" is
    /// `contains(v, pre)` with the install step's `pre` (pip/uv `--pre`): following pip and uv,
    /// a pre-release only when asked for or when a specifier names one (the skip rule's check of
    /// a step's own requirements, through is_satisfied).
    [[nodiscard]] bool contains(const Version& v, bool prereleases = false) const;
    [[nodiscard]] bool empty() const { return m_specs.empty(); }
    [[nodiscard]] const std::vector<Specifier>& specs() const { return m_specs; }
    /// Canonical form: the specifiers sorted and joined by ",".
    [[nodiscard]] std::string str() const;

private:
    std::vector<Specifier> m_specs;
};

}  // namespace bootstrap::pyenv
