// Config readers: a small shell-word lexer for args files and scripts, and a yaml-cpp walk for
// the two YAML layouts. Both keep the 1-based line every flag starts on.

#include "doctor/flags.hpp"

#include <cctype>
#include <optional>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/fs.hpp"
#include "core/strings.hpp"

namespace bootstrap::doctor {

std::string Evidence::str() const {
    if (line <= 0) return file;
    return text.empty() ? fmt::format("{}:{}", file, line) : fmt::format("{}:{}: {}", file, line, text);
}

const char* to_string(ConfigFormat format) {
    switch (format) {
        case ConfigFormat::args: return "args";
        case ConfigFormat::yaml_flat: return "flat YAML";
        case ConfigFormat::yaml_nested: return "Megatron --yaml-cfg";
    }
    return "?";
}

std::string normalize_flag(std::string_view name) {
    std::string out(name);
    for (auto& c : out)
        if (c == '_') c = '-';
    while (core::starts_with(out, "---")) out.erase(0, 1);
    if (!core::starts_with(out, "--")) out = (core::starts_with(out, "-") ? "-" : "--") + out;
    return out;
}

namespace {

// ---- args: a shell-word lexer ----------------------------------------------------------------

struct Token {
    enum Kind { word, boundary, newline };
    Kind kind = word;
    std::string text;
    int line = 0;
    bool quoted = false;  // some part was quoted: never an assignment
};

bool is_boundary_char(char c) { return c == ';' || c == '|' || c == '&' || c == '(' || c == ')'; }

/// Splits shell text into words the way sh would before expansion: quotes removed, `\`+newline
/// joins lines, `#` at the start of a word comments out the rest of the line, `;|&()` and
/// newlines end a command. `$(...)` and `${...}` stay inside their word.
class Lexer {
public:
    explicit Lexer(std::string_view text) : m_text(text) {}

    std::vector<Token> run() {
        while (m_i < m_text.size()) {
            char c = m_text[m_i];
            if (c == '\n') {
                m_out.push_back({Token::newline, "", m_line, false});
                ++m_line;
                ++m_i;
            } else if (c == '\\' && peek(1) == '\n') {
                m_i += 2;
                ++m_line;
            } else if (c == ' ' || c == '\t' || c == '\r') {
                ++m_i;
            } else if (c == '#') {
                while (m_i < m_text.size() && m_text[m_i] != '\n') ++m_i;
            } else if (is_boundary_char(c)) {
                std::string op(1, c);
                ++m_i;
                if ((c == '&' || c == '|') && peek(0) == c) op += m_text[m_i++];
                m_out.push_back({Token::boundary, op, m_line, false});
            } else {
                read_word();
            }
        }
        return std::move(m_out);
    }

private:
    char peek(size_t ahead) const { return m_i + ahead < m_text.size() ? m_text[m_i + ahead] : '\0'; }

    void take_newline_aware(std::string& word) {
        if (m_text[m_i] == '\n') ++m_line;
        word += m_text[m_i++];
    }

    /// `$(...)` or `${...}`, kept verbatim, nesting counted.
    void read_expansion(std::string& word) {
        char open = m_text[m_i + 1], close = open == '(' ? ')' : '}';
        word += m_text[m_i++];
        int depth = 0;
        while (m_i < m_text.size()) {
            char c = m_text[m_i];
            if (c == open) ++depth;
            if (c == close && --depth == 0) {
                word += m_text[m_i++];
                return;
            }
            take_newline_aware(word);
        }
    }

    void read_word() {
        Token tok{Token::word, "", m_line, false};
        while (m_i < m_text.size()) {
            char c = m_text[m_i];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || is_boundary_char(c)) break;
            if (c == '\'') {
                tok.quoted = true;
                ++m_i;
                while (m_i < m_text.size() && m_text[m_i] != '\'') take_newline_aware(tok.text);
                ++m_i;
            } else if (c == '"') {
                tok.quoted = true;
                ++m_i;
                while (m_i < m_text.size() && m_text[m_i] != '"') {
                    if (m_text[m_i] == '\\' && std::string_view("\"\\$`\n").find(peek(1)) != std::string_view::npos) {
                        ++m_i;
                        if (m_text[m_i] == '\n') {  // line continuation inside quotes
                            ++m_line;
                            ++m_i;
                            continue;
                        }
                    }
                    take_newline_aware(tok.text);
                }
                ++m_i;
            } else if (c == '\\') {
                ++m_i;
                if (m_i < m_text.size()) {
                    if (m_text[m_i] == '\n') {
                        ++m_line;
                        ++m_i;
                    } else {
                        tok.text += m_text[m_i++];
                    }
                }
            } else if (c == '$' && (peek(1) == '(' || peek(1) == '{')) {
                read_expansion(tok.text);
            } else {
                tok.text += m_text[m_i++];
            }
        }
        m_out.push_back(std::move(tok));
    }

    std::string_view m_text;
    size_t m_i = 0;
    int m_line = 1;
    std::vector<Token> m_out;
};

bool is_env_assignment(const Token& t) {
    if (t.kind != Token::word) return false;
    size_t eq = t.text.find('=');
    if (eq == std::string::npos || eq == 0) return false;
    if (std::isdigit(static_cast<unsigned char>(t.text[0]))) return false;
    for (size_t i = 0; i < eq; ++i)
        if (!std::isalnum(static_cast<unsigned char>(t.text[i])) && t.text[i] != '_') return false;
    return true;
}

/// `>file`, `2>`, `<in`: a redirection ends the command's arguments.
bool is_redirection(const std::string& w) {
    size_t i = 0;
    while (i < w.size() && std::isdigit(static_cast<unsigned char>(w[i]))) ++i;
    return i < w.size() && (w[i] == '>' || w[i] == '<');
}

/// A word that starts another option, ending the values of the flag before it. "-1" and "-.5"
/// are values.
bool is_option_word(const std::string& w) {
    return w.size() > 1 && w[0] == '-' && !std::isdigit(static_cast<unsigned char>(w[1])) && w[1] != '.';
}

class LineIndex {
public:
    explicit LineIndex(std::string_view text) : m_lines(core::split(text, '\n')) {}
    Evidence at(const std::string& file, int line) const {
        std::string text;
        if (line >= 1 && static_cast<size_t>(line) <= m_lines.size()) text = std::string(core::trim(m_lines[line - 1]));
        return {file, line, text};
    }

private:
    std::vector<std::string> m_lines;
};

/// Flags and assignments from a token stream. `line_override` (> 0) pins every evidence to one
/// line: a YAML list element is one line of the YAML file.
void collect_args(const std::vector<Token>& tokens, const LineIndex& lines, const std::string& file, int line_override,
                  TrainingConfig& out) {
    bool command_start = true;
    // Index of the flag taking values; npos: none. (An std::optional here trips GCC 12's
    // -Wmaybe-uninitialized at -O2 once fmt is header-only: a false positive.)
    constexpr size_t none = std::string::npos;
    size_t current = none;
    auto where = [&](int line) { return lines.at(file, line_override > 0 ? line_override : line); };
    for (size_t i = 0; i < tokens.size(); ++i) {
        const Token& t = tokens[i];
        if (t.kind != Token::word) {
            current = none;
            command_start = true;
            continue;
        }
        if (command_start && (t.text == "export" || t.text == "env")) continue;
        if (command_start && !t.quoted && is_env_assignment(t)) {
            bool array = i + 1 < tokens.size() && tokens[i + 1].kind == Token::boundary && tokens[i + 1].text == "(" &&
                         t.text.back() == '=';
            if (!array) {
                size_t eq = t.text.find('=');
                out.env.push_back({t.text.substr(0, eq), t.text.substr(eq + 1), where(t.line)});
            }
            continue;
        }
        command_start = false;
        if (core::starts_with(t.text, "--") && t.text.size() > 2) {
            size_t eq = t.text.find('=');
            Flag flag{t.text.substr(0, eq), {}, where(t.line)};
            if (eq != std::string::npos) {
                flag.values.push_back(t.text.substr(eq + 1));
                current = none;
            } else {
                current = out.flags.size();
            }
            out.flags.push_back(std::move(flag));
        } else if (is_option_word(t.text) || (!t.quoted && is_redirection(t.text))) {
            current = none;
        } else if (current != none) {
            out.flags[current].values.push_back(t.text);
        }
    }
}

// ---- YAML --------------------------------------------------------------------------------------

bool is_plain(const YAML::Node& n) { return n.Tag() == "?"; }

/// YAML 1.1 booleans, as PyYAML's safe_load (which Megatron uses) reads them.
std::optional<bool> yaml_bool(const YAML::Node& n) {
    if (!n.IsScalar() || !is_plain(n)) return std::nullopt;
    std::string v = core::to_lower(n.Scalar());
    if (v == "true" || v == "yes" || v == "on") return true;
    if (v == "false" || v == "no" || v == "off") return false;
    return std::nullopt;
}

void collect_yaml_map(const YAML::Node& map, const LineIndex& lines, const std::string& file, TrainingConfig& out) {
    for (auto it = map.begin(); it != map.end(); ++it) {
        // Copies: a yaml-cpp map iterator's operator-> returns a temporary proxy, so a reference
        // to it->first dangles at the end of the statement (ASan: stack-use-after-scope).
        const YAML::Node key = it->first;
        const YAML::Node value = it->second;
        if (!key.IsScalar()) continue;
        Evidence where = lines.at(file, key.Mark().line + 1);
        if (value.IsMap()) {
            out.format = ConfigFormat::yaml_nested;
            collect_yaml_map(value, lines, file, out);
            continue;
        }
        std::string name = normalize_flag(key.Scalar());
        if (value.IsNull()) continue;  // "not given"
        if (auto b = yaml_bool(value)) {
            if (*b) out.flags.push_back({name, {}, where});
            else if (auto bare = core::after_prefix(name, "--"); bare && !core::starts_with(name, "--no-"))
                out.flags.push_back({"--no-" + std::string(*bare), {}, where});
            continue;
        }
        Flag flag{name, {}, where};
        if (value.IsSequence()) {
            for (const auto& item : value)
                if (item.IsScalar()) flag.values.push_back(item.Scalar());
        } else if (value.IsScalar()) {
            flag.values.push_back(value.Scalar());
        }
        out.flags.push_back(std::move(flag));
    }
}

bool has_yaml_extension(const std::string& name) {
    std::string ext = core::to_lower(std::filesystem::path(name).extension().string());
    return ext == ".yaml" || ext == ".yml";
}

Result<YAML::Node> load_yaml(std::string_view text, const std::string& name) {
    try {
        return YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
        return fail(ErrorCode::usage, fmt::format("{}:{}:{}: cannot read the YAML configuration: {}", name,
                                                  e.mark.line + 1, e.mark.column + 1, e.msg));
    }
}

Result<TrainingConfig> config_from_yaml(const YAML::Node& root, std::string_view text, const std::string& name) {
    TrainingConfig out;
    out.file = name;
    out.format = ConfigFormat::yaml_flat;
    LineIndex lines(text);
    try {
        if (root.IsMap()) {
            collect_yaml_map(root, lines, name, out);
        } else if (root.IsSequence()) {
            for (const auto& item : root) {
                if (!item.IsScalar()) continue;
                collect_args(Lexer(item.Scalar()).run(), lines, name, item.Mark().line + 1, out);
            }
        } else {
            return fail(ErrorCode::usage, fmt::format("{}: expected a YAML mapping of flags (`--flag: value` or "
                                                      "Megatron's --yaml-cfg layout)",
                                                      name));
        }
    } catch (const YAML::Exception& e) {
        return fail(ErrorCode::usage,
                    fmt::format("{}:{}: cannot read the YAML configuration: {}", name, e.mark.line + 1, e.msg));
    }
    return out;
}

}  // namespace

TrainingConfig parse_args(std::string_view text, const std::string& name) {
    TrainingConfig out;
    out.file = name;
    out.format = ConfigFormat::args;
    collect_args(Lexer(text).run(), LineIndex(text), name, 0, out);
    return out;
}

Result<TrainingConfig> parse_yaml(std::string_view text, const std::string& name) {
    BS_TRY(YAML::Node root, load_yaml(text, name));
    return config_from_yaml(root, text, name);
}

Result<TrainingConfig> parse_config(std::string_view text, const std::string& name) {
    if (!has_yaml_extension(name)) return parse_args(text, name);
    BS_TRY(YAML::Node root, load_yaml(text, name));
    // A `.yaml` that is one plain scalar is a list of `--flag value` lines (start.sh style).
    if (!root.IsMap() && !root.IsSequence()) return parse_args(text, name);
    return config_from_yaml(root, text, name);
}

Result<TrainingConfig> read_config(const std::filesystem::path& file) {
    BS_TRY(std::string text, core::read_regular_file(file, core::k_max_user_input));
    return parse_config(text, file.string());
}

}  // namespace bootstrap::doctor
