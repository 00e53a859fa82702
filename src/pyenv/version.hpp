#pragma once
// PEP 440 versions: parsing, normalisation and total ordering.

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::pyenv {

/// A parse failure inside a larger text: what was expected, and the byte offset where. Lets
/// Requirement::parse report columns in the whole requirement, not in a piece of it.
struct SyntaxError {
    std::string what;
    size_t offset = 0;
};

class Version {
public:
    /// Parse a PEP 440 version (normalising spellings like "1.0RC1", "v1.0", "1.0-post1").
    [[nodiscard]] static Result<Version> parse(std::string_view text);

    [[nodiscard]] const std::vector<long>& release() const { return m_release; }
    [[nodiscard]] long epoch() const { return m_epoch; }
    [[nodiscard]] bool is_prerelease() const;  // has a pre or dev segment
    [[nodiscard]] bool is_postrelease() const { return m_post.has_value(); }
    [[nodiscard]] bool is_devrelease() const { return m_dev.has_value(); }
    /// The pre-release segment: 'a', 'b' or 'c' (rc) and its number; empty if none.
    [[nodiscard]] const std::optional<std::pair<char, long>>& pre() const { return m_pre; }
    [[nodiscard]] const std::string& local() const { return m_local; }  // normalised, "" if none
    [[nodiscard]] Version public_version() const;                       // without the local label
    [[nodiscard]] Version base_version() const;                         // epoch + release only
    /// Canonical string (PEP 440 normal form).
    [[nodiscard]] std::string str() const;
    /// The text parse() read, trimmed ("1.01" where str() says "1.1"): what `===` compares.
    /// A version made by public_version() or base_version() gives its str().
    [[nodiscard]] const std::string& text() const { return m_text; }

    friend std::strong_ordering operator<=>(const Version& a, const Version& b);
    friend bool operator==(const Version& a, const Version& b) { return (a <=> b) == std::strong_ordering::equal; }

private:
    long m_epoch = 0;
    std::vector<long> m_release;
    std::optional<std::pair<char, long>> m_pre;  // 'a', 'b', 'c' (rc)
    std::optional<long> m_post;
    std::optional<long> m_dev;
    std::string m_local;
    std::string m_text;
};

}  // namespace bootstrap::pyenv
