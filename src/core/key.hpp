#pragma once
// Cache/step keys in the style of ccache: a version prefix, typed and delimited fields, and a
// readable text dump of everything hashed (`plan --explain`).

#include <string>
#include <string_view>
#include <vector>

namespace bootstrap::core {

class KeyBuilder {
public:
    /// `scheme` names the key format and its version, e.g. "step-v1"; bump it on any change.
    explicit KeyBuilder(std::string_view scheme);

    void add(std::string_view field, std::string_view value);
    void add(std::string_view field, const std::vector<std::string>& values);

    /// The hex digest of everything added so far.
    [[nodiscard]] std::string digest() const;
    /// One `field: value` line per input, in order: what `digest()` hashes, made readable.
    [[nodiscard]] const std::string& explain() const { return m_explain; }

private:
    std::string m_material;
    std::string m_explain;
};

}  // namespace bootstrap::core
