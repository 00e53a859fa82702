#include "pyenv/index_config.hpp"

#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "core/redact.hpp"
#include "core/strings.hpp"

namespace bootstrap::pyenv {

namespace {

namespace fs = std::filesystem;

std::string get(const exec::EnvMap& env, const std::string& name) {
    auto it = env.find(name);
    return it == env.end() ? std::string() : it->second;
}

std::vector<std::string> words(std::string_view s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == ' ' || c == '\t' || c == '\n') {
            if (!cur.empty()) out.push_back(std::move(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) out.push_back(std::move(cur));
    return out;
}

/// UV_INDEX entries may be `name=url`.
std::string index_entry_url(const std::string& entry) {
    auto eq = entry.find('=');
    auto scheme = entry.find("://");
    if (eq != std::string::npos && (scheme == std::string::npos || eq < scheme)) return entry.substr(eq + 1);
    return entry;
}

std::optional<std::string> read_text(const fs::path& p) {
    std::ifstream in(p);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The string values of a TOML value text: "\"a\"" or "[\"a\", 'b']".
std::vector<std::string> toml_strings(std::string_view value) {
    std::vector<std::string> out;
    for (size_t i = 0; i < value.size(); ++i) {
        char q = value[i];
        if (q != '"' && q != '\'') continue;
        auto end = value.find(q, i + 1);
        if (end == std::string_view::npos) break;
        out.emplace_back(value.substr(i + 1, end - i - 1));
        i = end;
    }
    return out;
}

/// The part of uv.toml that names indexes. A line-level reader of the keys involved (uv's
/// settings are flat `key = value` lines and `[[index]]` tables); a multi-line array is read
/// up to its closing bracket.
struct UvConfig {
    std::optional<std::string> index_url;
    std::vector<std::string> extra;
    std::optional<std::string> default_index;  // [[index]] default = true
};

UvConfig parse_uv_toml(const std::string& text) {
    UvConfig c;
    std::string table;
    std::optional<std::string> index_url;
    bool index_default = false;
    auto close_index = [&] {
        if (table == "[[index]]" && index_url) {
            if (index_default) c.default_index = *index_url;
            else c.extra.push_back(*index_url);
        }
        index_url.reset();
        index_default = false;
    };
    auto lines = core::split(text, '\n');
    for (size_t i = 0; i < lines.size(); ++i) {
        std::string line(core::trim(lines[i]));
        if (line.empty() || line[0] == '#') continue;
        if (line[0] == '[') {
            close_index();
            table = line.substr(0, line.find(']') + (line.starts_with("[[") ? 2 : 1));
            continue;
        }
        auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        std::string key(core::trim(line.substr(0, eq)));
        std::string value(core::trim(line.substr(eq + 1)));
        if (value.starts_with("[") && value.find(']') == std::string::npos)
            while (i + 1 < lines.size()) {
                value += lines[++i];
                if (lines[i].find(']') != std::string::npos) break;
            }
        if (table == "[[index]]") {
            if (key == "url" && !toml_strings(value).empty()) index_url = toml_strings(value).front();
            if (key == "default") index_default = core::trim(value) == "true";
            continue;
        }
        if (!table.empty() && table != "[pip]") continue;
        if (key == "index-url" && !toml_strings(value).empty()) c.index_url = toml_strings(value).front();
        if (key == "extra-index-url")
            for (auto& u : toml_strings(value)) c.extra.push_back(u);
    }
    close_index();
    return c;
}

fs::path home_dir(const exec::EnvMap& env) { return get(env, "HOME"); }

std::optional<UvConfig> uv_config(const exec::EnvMap& env) {
    if (!get(env, "UV_NO_CONFIG").empty()) return std::nullopt;
    std::vector<fs::path> files;
    if (auto f = get(env, "UV_CONFIG_FILE"); !f.empty()) {
        files.push_back(f);
    } else {
        // The user's file takes precedence over the system's.
        auto xdg = get(env, "XDG_CONFIG_HOME");
        if (!xdg.empty()) files.push_back(fs::path(xdg) / "uv" / "uv.toml");
        else if (!home_dir(env).empty()) files.push_back(home_dir(env) / ".config" / "uv" / "uv.toml");
        files.push_back("/etc/uv/uv.toml");
    }
    std::optional<UvConfig> merged;
    for (const auto& f : files) {
        auto text = read_text(f);
        if (!text) continue;
        auto c = parse_uv_toml(*text);
        if (!merged) {
            merged = c;
            continue;
        }
        if (!merged->index_url) merged->index_url = c.index_url;
        if (!merged->default_index) merged->default_index = c.default_index;
        merged->extra.insert(merged->extra.end(), c.extra.begin(), c.extra.end());
    }
    return merged;
}

/// pip.conf values: section -> key -> value; later files win.
std::map<std::string, std::map<std::string, std::string>> pip_config(const exec::EnvMap& env, const fs::path& venv) {
    std::vector<fs::path> files;
    auto config_file = get(env, "PIP_CONFIG_FILE");
    if (config_file == "/dev/null" || config_file == "os.devnull") return {};
    files.push_back("/etc/xdg/pip/pip.conf");
    files.push_back("/etc/pip.conf");
    if (!home_dir(env).empty()) {
        files.push_back(home_dir(env) / ".pip" / "pip.conf");
        auto xdg = get(env, "XDG_CONFIG_HOME");
        files.push_back((xdg.empty() ? home_dir(env) / ".config" : fs::path(xdg)) / "pip" / "pip.conf");
    }
    files.push_back(venv / "pip.conf");
    if (!config_file.empty()) files.push_back(config_file);
    std::map<std::string, std::map<std::string, std::string>> out;
    for (const auto& f : files) {
        auto text = read_text(f);
        if (!text) continue;
        std::string section, last_key;
        for (const auto& raw : core::split(*text, '\n')) {
            if (!raw.empty() && (raw[0] == ' ' || raw[0] == '\t') && !last_key.empty()) {
                out[section][last_key] += " " + std::string(core::trim(raw));  // continuation line
                continue;
            }
            std::string line(core::trim(raw));
            if (line.empty() || line[0] == '#' || line[0] == ';') continue;
            if (line[0] == '[') {
                section = line.substr(1, line.find(']') - 1);
                last_key.clear();
                continue;
            }
            auto eq = line.find_first_of("=:");
            if (eq == std::string::npos) continue;
            last_key = std::string(core::trim(line.substr(0, eq)));
            out[section][last_key] = std::string(core::trim(line.substr(eq + 1)));
        }
    }
    return out;
}

}  // namespace

std::vector<std::string> IndexSet::all() const {
    std::vector<std::string> out;
    if (!default_index.empty()) out.push_back(default_index);
    for (const auto& e : extra_indexes)
        if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
    return out;
}

IndexSet effective_indexes(const std::string& installer, const InstallRequest& r, const exec::EnvMap& env,
                           const fs::path& venv) {
    IndexSet set;
    set.extra_indexes = r.extra_index_urls;
    if (r.index_url) {
        set.default_index = *r.index_url;
        set.from = "recipe";
    }
    if (installer == "uv") {
        for (const auto& w : words(get(env, "UV_INDEX"))) set.extra_indexes.push_back(index_entry_url(w));
        for (const auto& w : words(get(env, "UV_EXTRA_INDEX_URL"))) set.extra_indexes.push_back(w);
        std::optional<UvConfig> config;
        if (set.from.empty()) {
            for (const char* name : {"UV_DEFAULT_INDEX", "UV_INDEX_URL"})
                if (auto v = get(env, name); !v.empty()) {
                    set.default_index = v;
                    set.from = name;
                    break;
                }
        }
        config = uv_config(env);
        if (config) {
            set.extra_indexes.insert(set.extra_indexes.end(), config->extra.begin(), config->extra.end());
            if (set.from.empty()) {
                if (config->default_index) set.default_index = *config->default_index;
                else if (config->index_url) set.default_index = *config->index_url;
                if (!set.default_index.empty()) set.from = "uv.toml";
            }
        }
        if (!get(env, "UV_NO_INDEX").empty()) {
            set.default_index.clear();
            set.extra_indexes.clear();
        }
    } else {
        for (const auto& w : words(get(env, "PIP_EXTRA_INDEX_URL"))) set.extra_indexes.push_back(w);
        auto conf = pip_config(env, venv);
        auto conf_value = [&](const std::string& key) {
            for (const char* section : {"install", "global"}) {
                auto s = conf.find(section);
                if (s == conf.end()) continue;
                auto k = s->second.find(key);
                if (k != s->second.end()) return k->second;
            }
            return std::string();
        };
        for (const auto& w : words(conf_value("extra-index-url"))) set.extra_indexes.push_back(w);
        if (set.from.empty()) {
            if (auto v = get(env, "PIP_INDEX_URL"); !v.empty()) {
                set.default_index = v;
                set.from = "PIP_INDEX_URL";
            } else if (auto c = conf_value("index-url"); !c.empty()) {
                set.default_index = c;
                set.from = "pip.conf";
            }
        }
        if (!get(env, "PIP_NO_INDEX").empty() && get(env, "PIP_NO_INDEX") != "0") {
            set.default_index.clear();
            set.extra_indexes.clear();
        }
    }
    if (set.from.empty()) {
        set.default_index = k_pypi_simple;
        set.from = "default";
    }
    if (r.no_index) {
        set.default_index.clear();
        set.extra_indexes.clear();
    }
    return set;
}

std::vector<std::string> known_index_urls(const exec::EnvMap& env, const fs::path& venv,
                                          std::vector<std::string> also) {
    for (const char* installer : {"uv", "pip"}) {
        auto set = effective_indexes(installer, {}, env, venv);
        auto all = set.all();
        also.insert(also.end(), all.begin(), all.end());
    }
    return also;
}

std::string with_credentials(const std::string& recorded, const std::vector<std::string>& known) {
    if (recorded.find(core::k_redacted) == std::string::npos || core::redact_url(recorded) != recorded) return recorded;
    const std::string bare = core::strip_credentials(recorded);
    auto trimmed = [](std::string u) {
        while (u.ends_with("/")) u.pop_back();
        return u;
    };
    for (const auto& k : known)
        if (k != recorded && core::redact_url(k) != k && trimmed(core::strip_credentials(k)) == trimmed(bare)) return k;
    return bare;
}

}  // namespace bootstrap::pyenv
