#include "pyenv/marker.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "pyenv/name.hpp"
#include "pyenv/specifier.hpp"

namespace bootstrap::pyenv {

struct Marker::Node {
    enum class Kind { all_of, any_of, compare };  // "and", "or", "lhs op rhs"
    struct Operand {
        bool is_variable = false;
        std::string text;  // the variable's canonical name, or the literal string
    };

    Kind kind = Kind::compare;
    // all_of / any_of: two or more. `a and b and c` is one node of three, not a chain, so a
    // long marker is a wide tree, and only parentheses (bounded) make it deep.
    std::vector<std::shared_ptr<const Node>> children;
    Operand lhs, rhs;  // compare
    std::string op;    // compare: "==", "in", "not in", ...
};

namespace {

using Node = Marker::Node;
using NodePtr = std::shared_ptr<const Node>;

struct VariableName {
    std::string_view spelling;
    std::string_view canonical;
};

// PEP 508 names, PEP 751's set-valued two, and the legacy dotted spellings that packaging
// still accepts.
constexpr std::array<VariableName, 20> k_variables{{
    {"python_version", "python_version"},
    {"python_full_version", "python_full_version"},
    {"os_name", "os_name"},
    {"sys_platform", "sys_platform"},
    {"platform_release", "platform_release"},
    {"platform_system", "platform_system"},
    {"platform_version", "platform_version"},
    {"platform_machine", "platform_machine"},
    {"platform_python_implementation", "platform_python_implementation"},
    {"implementation_name", "implementation_name"},
    {"implementation_version", "implementation_version"},
    {"extra", "extra"},
    {"extras", "extras"},
    {"dependency_groups", "dependency_groups"},
    {"os.name", "os_name"},
    {"sys.platform", "sys_platform"},
    {"platform.version", "platform_version"},
    {"platform.machine", "platform_machine"},
    {"platform.python_implementation", "platform_python_implementation"},
    {"python_implementation", "platform_python_implementation"},
}};

constexpr std::array<std::string_view, 8> k_comparisons{"===", "==", "!=", "<=", ">=", "~=", "<", ">"};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/// Recursive descent over the PEP 508 marker grammar:
///   or   := and ("or" and)*      and := expr ("and" expr)*
///   expr := "(" or ")" | value op value       value := variable | 'str' | "str"
/// It recurses only into parentheses, at most k_max_marker_nesting deep.
class Parser {
public:
    explicit Parser(std::string_view s) : m_s(s) {}

    tl::expected<NodePtr, SyntaxError> parse() {
        auto root = parse_or();
        if (!root) return root;
        skip_space();
        if (m_pos < m_s.size())
            return error(
                fmt::format("expected 'and', 'or' or the end of the marker, got '{}'", core::clip(m_s.substr(m_pos))));
        return root;
    }

private:
    tl::unexpected<SyntaxError> error(std::string what) const { return error_at(std::move(what), m_pos); }
    static tl::unexpected<SyntaxError> error_at(std::string what, size_t pos) {
        return tl::unexpected(SyntaxError{std::move(what), pos});
    }

    void skip_space() {
        while (m_pos < m_s.size() && is_space(m_s[m_pos])) ++m_pos;
    }

    /// A keyword, only when not the start of a longer identifier ("android" is not "and").
    bool accept_keyword(std::string_view word) {
        skip_space();
        if (m_s.substr(m_pos, word.size()) != word) return false;
        size_t after = m_pos + word.size();
        if (after < m_s.size() && is_ident_char(m_s[after])) return false;
        m_pos = after;
        return true;
    }

    /// `first` (keyword `first`)* as one node of `kind`, or `first` alone.
    template <class Operand>
    tl::expected<NodePtr, SyntaxError> parse_list(Node::Kind kind, std::string_view keyword, Operand operand) {
        auto first = (this->*operand)();
        if (!first) return first;
        std::vector<NodePtr> items{std::move(*first)};
        while (accept_keyword(keyword)) {
            auto next = (this->*operand)();
            if (!next) return next;
            items.push_back(std::move(*next));
        }
        if (items.size() == 1) return std::move(items.front());
        auto node = std::make_shared<Node>();
        node->kind = kind;
        node->children = std::move(items);
        return node;
    }

    tl::expected<NodePtr, SyntaxError> parse_or() { return parse_list(Node::Kind::any_of, "or", &Parser::parse_and); }

    tl::expected<NodePtr, SyntaxError> parse_and() {
        return parse_list(Node::Kind::all_of, "and", &Parser::parse_expr);
    }

    tl::expected<NodePtr, SyntaxError> parse_expr() {
        skip_space();
        if (m_pos < m_s.size() && m_s[m_pos] == '(') {
            if (++m_depth > k_max_marker_nesting)
                return error(fmt::format("parentheses nested more than {} deep (the limit is {})", k_max_marker_nesting,
                                         k_max_marker_nesting));
            ++m_pos;
            auto inner = parse_or();
            if (!inner) return inner;
            skip_space();
            if (m_pos >= m_s.size() || m_s[m_pos] != ')') return error("expected ')' to close the parenthesis");
            ++m_pos;
            --m_depth;
            return inner;
        }
        auto node = std::make_shared<Node>();
        auto lhs = parse_value();
        if (!lhs) return tl::unexpected(lhs.error());
        auto op = parse_op();
        if (!op) return tl::unexpected(op.error());
        auto rhs = parse_value();
        if (!rhs) return tl::unexpected(rhs.error());
        node->lhs = std::move(*lhs);
        node->op = std::move(*op);
        node->rhs = std::move(*rhs);
        return node;
    }

    tl::expected<Node::Operand, SyntaxError> parse_value() {
        skip_space();
        if (m_pos >= m_s.size()) return error("expected a marker variable or a quoted string");
        char c = m_s[m_pos];
        if (c == '\'' || c == '"') {
            size_t close = m_s.find(c, m_pos + 1);
            if (close == std::string_view::npos) return error("unterminated string");
            Node::Operand literal{false, std::string(m_s.substr(m_pos + 1, close - m_pos - 1))};
            m_pos = close + 1;
            return literal;
        }
        size_t start = m_pos;
        while (m_pos < m_s.size() && is_ident_char(m_s[m_pos])) ++m_pos;
        std::string_view word = m_s.substr(start, m_pos - start);
        if (word.empty())
            return error_at(
                fmt::format("expected a marker variable or a quoted string, got '{}'", core::clip(m_s.substr(start))),
                start);
        for (const VariableName& v : k_variables)
            if (v.spelling == word) return Node::Operand{true, std::string(v.canonical)};
        return error_at(fmt::format("unknown marker variable '{}'", core::clip(word)), start);
    }

    tl::expected<std::string, SyntaxError> parse_op() {
        skip_space();
        for (std::string_view op : k_comparisons) {
            if (m_s.substr(m_pos, op.size()) == op) {
                m_pos += op.size();
                return std::string(op);
            }
        }
        if (accept_keyword("in")) return std::string("in");
        size_t save = m_pos;
        if (accept_keyword("not")) {
            if (accept_keyword("in")) return std::string("not in");
            m_pos = save;
        }
        skip_space();
        return error("expected a comparison operator (==, !=, <, <=, >, >=, ~=, ===, in, not in)");
    }

    std::string_view m_s;
    size_t m_pos = 0;
    int m_depth = 0;  // open parentheses
};

std::string operand_str(const Node::Operand& o) {
    if (o.is_variable) return o.text;
    // PEP 508 strings have no escapes; pick the quote the text does not contain.
    char quote = o.text.find('"') == std::string::npos ? '"' : '\'';
    return fmt::format("{}{}{}", quote, o.text, quote);
}

std::string node_str(const Node& node) {
    switch (node.kind) {
        case Node::Kind::compare: return fmt::format("{} {} {}", operand_str(node.lhs), node.op, operand_str(node.rhs));
        case Node::Kind::all_of:
        case Node::Kind::any_of: {
            const bool all = node.kind == Node::Kind::all_of;
            std::string out;
            for (const NodePtr& child : node.children) {
                if (!out.empty()) out += all ? " and " : " or ";
                bool wrap = all && child->kind == Node::Kind::any_of;
                out += wrap ? "(" + node_str(*child) + ")" : node_str(*child);
            }
            return out;
        }
    }
    return {};
}

// The variables whose values packaging 26 compares as PEP 440 versions (its
// MARKERS_REQUIRING_VERSION); every other variable compares as a string.
bool is_version_variable(std::string_view name) {
    return name == "python_version" || name == "python_full_version" || name == "implementation_version" ||
           name == "platform_release";
}

// PEP 751's set-valued variables: the extras and dependency groups a lock file was installed with.
bool is_set_variable(const Node::Operand& o) {
    return o.is_variable && (o.text == "extras" || o.text == "dependency_groups");
}

std::string operand_value(const Node::Operand& o, const MarkerEnv& env) {
    if (!o.is_variable) return o.text;
    auto it = env.find(o.text);
    std::string value = it == env.end() ? std::string() : it->second;
    // An interpreter built from an untagged tree reports "3.12.3+", which is not PEP 440.
    // packaging (markers._repair_python_full_version) reads it as "3.12.3+local" before any
    // comparison, so it still compares as 3.12.3: `>= "3.9"` holds, `== "3.12.3+"` does not.
    if (o.text == "python_full_version" && value.ends_with('+')) value += "local";
    return value;
}

/// `lhs op rhs` between strings, where there is no PEP 440 meaning. PEP 508 ("Environment
/// Markers") fell back to Python's string operators; the PyPA dependency-specifiers spec as
/// amended ("Marker comparisons") and packaging 26 (markers._operators) define no order
/// between strings: `<` and `>` are false, `<=` and `>=` mean `==`. So
/// `platform_release < "7"` is false for "6.1.0-18-amd64", not a lexicographic true.
bool compare_strings(const std::string& lhs, const std::string& op, const std::string& rhs) {
    if (op == "in") return rhs.find(lhs) != std::string::npos;
    if (op == "not in") return rhs.find(lhs) == std::string::npos;
    if (op == "==" || op == "===" || op == "<=" || op == ">=") return lhs == rhs;
    if (op == "!=") return lhs != rhs;
    return false;  // "<", ">"; "~=" between non-versions is undefined: packaging raises, we say no
}

/// A version variable, as packaging's _eval_op: when "op rhs" is a PEP 440 specifier, the
/// specifier decides, and a value that is not a version ("6.1.0-18-amd64") matches none of
/// its operators (even `!=`); `===` compares the text. Otherwise, strings.
bool compare_versions(const std::string& lhs, const std::string& op, const std::string& rhs) {
    auto spec = Specifier::parse(op + rhs);
    if (!spec) return compare_strings(lhs, op, rhs);
    if (spec->op == "===") return core::to_lower(lhs) == core::to_lower(spec->version);
    auto version = Version::parse(lhs);
    return version && spec->contains(*version);
}

/// `"name" op set`, set being a PEP 751 variable's comma-separated names ("" is the empty set).
/// As packaging 26: `in` / `not in` test membership by normalised name; a string is never equal
/// to a set (`==` false, `!=` true) and has no order with it; `~=` and `===` are undefined.
bool compare_with_set(const std::string& name, const std::string& op, const std::string& set) {
    bool member = false;
    std::string wanted = normalize_name(name);
    for (const std::string& item : core::split(set, ','))
        member = member || (!core::trim(item).empty() && normalize_name(core::trim(item)) == wanted);
    if (op == "in") return member;
    if (op == "not in") return !member;
    return op == "!=";
}

bool compare(const Node& node, const MarkerEnv& env) {
    // A set on the left ('extras == "x"') is undefined: packaging raises, we say no.
    if (is_set_variable(node.lhs)) return false;
    if (is_set_variable(node.rhs))
        return compare_with_set(operand_value(node.lhs, env), node.op, operand_value(node.rhs, env));
    std::string lhs = operand_value(node.lhs, env);
    std::string rhs = operand_value(node.rhs, env);
    // The variable names the comparison's kind; packaging looks at the left side first.
    std::string_view variable;
    if (node.lhs.is_variable) variable = node.lhs.text;
    else if (node.rhs.is_variable) variable = node.rhs.text;
    if (variable == "extra") {  // extras compare by normalised name: "Foo_Bar" == "foo-bar"
        lhs = normalize_name(lhs);
        rhs = normalize_name(rhs);
    }
    bool membership = node.op == "in" || node.op == "not in";  // never a PEP 440 specifier
    if (!membership && is_version_variable(variable)) return compare_versions(lhs, node.op, rhs);
    return compare_strings(lhs, node.op, rhs);
}

bool evaluate_node(const Node& node, const MarkerEnv& env) {
    switch (node.kind) {
        case Node::Kind::all_of:
            return std::all_of(node.children.begin(), node.children.end(),
                               [&](const NodePtr& c) { return evaluate_node(*c, env); });
        case Node::Kind::any_of:
            return std::any_of(node.children.begin(), node.children.end(),
                               [&](const NodePtr& c) { return evaluate_node(*c, env); });
        case Node::Kind::compare: return compare(node, env);
    }
    return false;
}

}  // namespace

tl::expected<Marker, SyntaxError> Marker::parse_detailed(std::string_view text) {
    if (text.size() > k_max_marker_length)
        return tl::unexpected(
            SyntaxError{fmt::format("marker of {} characters (the limit is {})", text.size(), k_max_marker_length), 0});
    auto root = Parser(text).parse();
    if (!root) return tl::unexpected(root.error());
    Marker marker;
    marker.m_root = std::move(*root);
    marker.m_text = node_str(*marker.m_root);
    return marker;
}

Result<Marker> Marker::parse(std::string_view text) {
    auto marker = parse_detailed(text);
    if (!marker)
        return fail(ErrorCode::invalid_recipe, fmt::format("invalid marker '{}': {} at column {}", core::clip(text),
                                                           marker.error().what, marker.error().offset + 1));
    return *marker;
}

bool Marker::evaluate(const MarkerEnv& env) const { return m_root ? evaluate_node(*m_root, env) : true; }

}  // namespace bootstrap::pyenv
