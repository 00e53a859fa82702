#pragma once
// The one way JSON is read (manifests, the journal, lockfiles, caches): checked getters on one
// object, naming the dotted key path of a field of the wrong type ("packages.torch.version:
// expected a string"), and read_json, which turns every problem -- a syntax error, a wrong type,
// anything nlohmann throws -- into an Error naming the file. No exception leaves read_json.
//
// Only modules that link nlohmann_json include this header (it needs nlohmann's types); core
// links it PRIVATE for json_fields.cpp.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json_fwd.hpp>

#include "core/error.hpp"

namespace bootstrap::core {

/// A field of the wrong type or shape, thrown by JsonFields and caught by read_json.
struct JsonInvalid : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Typed access to one JSON object. An absent field reads as the fallback; a present one of the
/// wrong type (null included, except for objects and maps) throws JsonInvalid naming its path.
class JsonFields {
public:
    /// Throws JsonInvalid unless `j` is an object. `path` is where it sits ("" for the top).
    JsonFields(const nlohmann::json& j, std::string path);

    [[nodiscard]] std::string str(std::string_view key, std::string fallback = {}) const;
    [[nodiscard]] bool boolean(std::string_view key, bool fallback = false) const;
    [[nodiscard]] std::int64_t integer(std::string_view key, std::int64_t fallback = 0) const;
    /// A non-negative integer.
    [[nodiscard]] std::uint64_t count(std::string_view key, std::uint64_t fallback = 0) const;
    [[nodiscard]] double number(std::string_view key, double fallback = 0) const;
    [[nodiscard]] std::vector<std::string> strings(std::string_view key) const;
    [[nodiscard]] std::map<std::string, std::string> string_map(std::string_view key) const;
    /// A nested object; nothing when absent or null.
    [[nodiscard]] std::optional<JsonFields> object(std::string_view key) const;
    /// Every member of a nested object that maps names to objects ({"torch": {...}, ...}).
    [[nodiscard]] std::vector<std::pair<std::string, JsonFields>> objects(std::string_view key) const;
    /// The raw value, or nullptr when absent (for shapes the getters do not cover).
    [[nodiscard]] const nlohmann::json* find(std::string_view key) const;
    [[nodiscard]] bool has(std::string_view key) const { return find(key) != nullptr; }

    /// "path.key" (or "key" at the top).
    [[nodiscard]] std::string child(std::string_view key) const;
    /// Throw JsonInvalid("path.key: what").
    [[noreturn]] void invalid(std::string_view key, std::string_view what) const;

private:
    const nlohmann::json* m_j;
    std::string m_path;
};

namespace detail {
/// nlohmann::json::parse, owned; throws on a syntax error (caught by read_json).
[[nodiscard]] std::shared_ptr<const nlohmann::json> parse_json(std::string_view text);
}  // namespace detail

/// Parse `text` and read its top-level object with `read` (returning Result<T>); any problem
/// (a syntax error, naming line and column; a field of the wrong type) is `on_error(why)`.
template <class Read, class OnError>
auto read_json(std::string_view text, Read&& read, OnError&& on_error)
    -> std::invoke_result_t<Read&, const JsonFields&> {
    try {
        auto doc = detail::parse_json(text);
        JsonFields top(*doc, {});
        return read(top);
    } catch (const std::exception& e) {
        return on_error(std::string(e.what()));
    }
}

/// read_json whose errors are io "SOURCE: not a valid WHAT: why".
template <class Read>
auto read_json(std::string_view text, const std::string& source, std::string_view what, Read&& read)
    -> std::invoke_result_t<Read&, const JsonFields&> {
    return read_json(text, std::forward<Read>(read), [&](const std::string& why) {
        return fail(ErrorCode::io, fmt::format("{}: not a valid {}: {}", source, what, why));
    });
}

}  // namespace bootstrap::core
