#pragma once
// Reading a JSON file straight into our own types, without nlohmann's tree: its parser (lexer,
// syntax errors naming line and column) calls a SAX handler, and JsonSaxReader turns those calls
// into "a value of kind K at key/index N of the object or array being read" for the reader that
// derives from it. The manifest and the journal are read this way: the tree, its std::maps and
// the copies out of it were most of their reading time.
//
// Errors in the fields are collected, not thrown, with a rank (JsonFirstError): the reader it
// replaced met fields in its own order, and the error it met first is the one reported, whatever
// order the document has them in. A key given twice counts once, its last value (as in the
// tree): the reader forgets what the earlier value got wrong.
//
// Only modules that link nlohmann_json include this header.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace bootstrap::core {

enum class JsonKind { null, boolean, integer, unsigned_integer, number, string, object, array };

/// The errors of a reading, keyed by `Rank` (a tuple: the order the tree reader met them in).
template <class Rank>
class JsonFirstError {
public:
    void add(Rank rank, std::string message) { m_errors.insert_or_assign(std::move(rank), std::move(message)); }
    void erase(const Rank& rank) {
        if (!m_errors.empty()) m_errors.erase(rank);
    }
    /// Forgets the errors from `from` on, while `within(rank)` holds.
    template <class Within>
    void forget(const Rank& from, Within within) {
        if (m_errors.empty()) return;
        for (auto it = m_errors.lower_bound(from); it != m_errors.end() && within(it->first);) it = m_errors.erase(it);
    }
    [[nodiscard]] bool contains(const Rank& rank) const { return m_errors.count(rank) > 0; }
    [[nodiscard]] bool empty() const { return m_errors.empty(); }
    /// The first error's rank and message (not empty()).
    [[nodiscard]] const std::pair<const Rank, std::string>& first() const { return *m_errors.begin(); }

private:
    std::map<Rank, std::string> m_errors;
};

/// A SAX handler for nlohmann::json::sax_parse. `Derived` provides
///   Ctx on_value(Frame& parent, JsonKind kind)  -- a value inside `parent` (its key, for an
///       object, in parent.key; parent.count values before it); returns what an object or array
///       value is read as (Ctx::skip: ignored, at no cost however deep)
///   void on_end(Frame& frame)                   -- the object or array `frame` has ended
/// and `Ctx` (an enum) has a `skip` value; `root` is what the top-level object is read as.
template <class Derived, class Ctx>
class JsonSaxReader {
public:
    struct Frame {
        Ctx ctx = Ctx::skip;
        std::string key;  // the member being read (objects)
        int count = 0;    // the values read before it
    };

    explicit JsonSaxReader(Ctx root) : m_root(root) {}

    // ---- nlohmann's SAX interface ----
    bool null() { return value(JsonKind::null); }
    bool boolean(bool b) {
        m_bool = b;
        return value(JsonKind::boolean);
    }
    bool number_integer(std::int64_t v) {
        m_int = v;
        m_number = static_cast<double>(v);
        return value(JsonKind::integer);
    }
    bool number_unsigned(std::uint64_t v) {
        m_uint = v;
        m_int = static_cast<std::int64_t>(v);  // what get<std::int64_t>() gives
        m_number = static_cast<double>(v);
        return value(JsonKind::unsigned_integer);
    }
    bool number_float(double v, const std::string& /*text*/) {
        m_number = v;
        return value(JsonKind::number);
    }
    bool string(std::string& s) {
        m_str = &s;
        return value(JsonKind::string);
    }
    bool binary(std::vector<std::uint8_t>& /*b*/) { return value(JsonKind::number); }  // never in JSON text
    bool start_object(std::size_t /*size*/) { return value(JsonKind::object); }
    bool start_array(std::size_t /*size*/) { return value(JsonKind::array); }
    bool key(std::string& k) {
        if (m_skip == 0) m_frames[m_depth - 1].key.assign(k);
        return true;
    }
    bool end_object() { return end(); }
    bool end_array() { return end(); }
    bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                     const nlohmann::detail::exception& e) {
        m_syntax = e.what();
        return false;
    }

    /// nlohmann's syntax error, "" when the text parsed.
    [[nodiscard]] const std::string& syntax_error() const { return m_syntax; }
    /// The top-level value was not an object.
    [[nodiscard]] bool not_object() const { return m_not_object; }

protected:
    // The value just handed over, by its kind.
    [[nodiscard]] const std::string& str() const { return *m_str; }
    [[nodiscard]] std::int64_t integer() const { return m_int; }
    [[nodiscard]] std::uint64_t unsigned_integer() const { return m_uint; }
    [[nodiscard]] double number() const { return m_number; }
    [[nodiscard]] bool boolean_value() const { return m_bool; }
    [[nodiscard]] static bool is_integer(JsonKind k) {
        return k == JsonKind::integer || k == JsonKind::unsigned_integer;
    }

private:
    Ctx m_root;
    // Frames are kept when popped: their keys' buffers serve the next object at that depth.
    // Only what is read gets one (a few deep); a skipped value is a count of levels.
    std::vector<Frame> m_frames;
    std::size_t m_depth = 0;
    std::size_t m_skip = 0;
    const std::string* m_str = nullptr;
    std::int64_t m_int = 0;
    std::uint64_t m_uint = 0;
    double m_number = 0;
    bool m_bool = false;
    std::string m_syntax;
    bool m_not_object = false;

    bool value(JsonKind k) {
        const bool container = k == JsonKind::object || k == JsonKind::array;
        if (m_skip > 0) {
            if (container) ++m_skip;
            return true;
        }
        Ctx child = Ctx::skip;
        if (m_depth == 0) {
            if (k == JsonKind::object) {
                child = m_root;
            } else {
                m_not_object = true;
            }
        } else {
            Frame& parent = m_frames[m_depth - 1];
            child = static_cast<Derived*>(this)->on_value(parent, k);
            ++parent.count;
        }
        if (!container) return true;
        if (child == Ctx::skip) {
            m_skip = 1;
        } else {
            if (m_depth == m_frames.size()) m_frames.emplace_back();
            Frame& f = m_frames[m_depth++];
            f.ctx = child;
            f.count = 0;
        }
        return true;
    }

    bool end() {
        if (m_skip > 0) {
            --m_skip;
            return true;
        }
        static_cast<Derived*>(this)->on_end(m_frames[--m_depth]);
        return true;
    }
};

}  // namespace bootstrap::core
