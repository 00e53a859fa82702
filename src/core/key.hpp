#pragma once
// Cache/step keys in the style of ccache: a version prefix, typed and delimited fields, and a
// readable text dump of everything hashed (`plan --explain`). The inputs are also kept as
// fields, so that a key that changed can be explained input by input (explain_change), as
// ninja's `-d explain` does.

#include <string>
#include <string_view>
#include <vector>

namespace bootstrap::core {

/// One input of a key: a single value, or a list.
struct KeyInput {
    std::string field;
    std::vector<std::string> values;
    bool list = false;
    friend bool operator==(const KeyInput&, const KeyInput&) = default;
};

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
    /// Every input in order, the scheme first. A field added twice is named `field#2`, ...
    [[nodiscard]] const std::vector<KeyInput>& inputs() const { return m_inputs; }

private:
    void remember(std::string_view field, std::vector<std::string> values, bool list);
    std::string m_material;
    std::string m_explain;
    std::vector<KeyInput> m_inputs;
};

/// What differs between the inputs of an old key and a new one, one line per change, in the
/// new key's order:
///   "env NCCL_ALGO: unset → Tree"        env.* fields (but env.unset) hold NAME=VALUE items,
///                                         compared as one environment
///   "installer: uv 0.13.9 → uv 0.14.0"   a single value
///   "argv: +rich, -attrs"                 a list: what was added and removed
///   "argv: same values, another order"
///   "verify: added" / "creates: removed"  a field only one key has
/// Values longer than `width` are shortened in the middle.
[[nodiscard]] std::vector<std::string> explain_change(const std::vector<KeyInput>& before,
                                                      const std::vector<KeyInput>& after, size_t width = 100);

}  // namespace bootstrap::core
