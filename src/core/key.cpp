#include "core/key.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/sha256.hpp"

namespace bootstrap::core {

// Each field is length-prefixed so that no choice of values can make two different inputs
// hash the same ("a","bc" vs "ab","c").
KeyBuilder::KeyBuilder(std::string_view scheme) { add("scheme", scheme); }

void KeyBuilder::remember(std::string_view field, std::vector<std::string> values, bool list) {
    std::string name(field);
    size_t same = 1;
    for (const auto& in : m_inputs)
        if (in.field == field || in.field.starts_with(std::string(field) + "#")) ++same;
    if (same > 1) name += fmt::format("#{}", same);
    m_inputs.push_back(KeyInput{std::move(name), std::move(values), list});
}

void KeyBuilder::add(std::string_view field, std::string_view value) {
    m_material += fmt::format("{}:{}={}:{}\n", field.size(), field, value.size(), value);
    m_explain += fmt::format("{}: {}\n", field, value);
    remember(field, {std::string(value)}, false);
}

void KeyBuilder::add(std::string_view field, const std::vector<std::string>& values) {
    m_material += fmt::format("{}:{}[{}]\n", field.size(), field, values.size());
    for (const auto& v : values) m_material += fmt::format("{}:{}\n", v.size(), v);
    m_explain += fmt::format("{}: [", field);
    for (size_t i = 0; i < values.size(); ++i) m_explain += fmt::format("{}{}", i ? ", " : "", values[i]);
    m_explain += "]\n";
    remember(field, values, true);
}

std::string KeyBuilder::digest() const { return sha256_hex(m_material); }

namespace {

std::string shorten(const std::string& value, size_t width) {
    if (value.size() <= width || width < 8) return value;
    const size_t head = (width - 1) / 2, tail = width - 1 - head;
    return value.substr(0, head) + "…" + value.substr(value.size() - tail);
}

std::string joined(const KeyInput& in) {
    if (!in.list) return in.values.empty() ? std::string() : in.values.front();
    std::string out = "[";
    for (size_t i = 0; i < in.values.size(); ++i) out += (i ? ", " : "") + in.values[i];
    return out + "]";
}

/// A field of NAME=VALUE items (the environment a step gets: env.set, env.inherited).
bool is_env(const KeyInput& in) { return in.list && in.field.starts_with("env.") && in.field != "env.unset"; }

/// Every env field's items by name (a variable the recipe now sets that it inherited before is
/// one change of value, or none).
std::map<std::string, std::string> env_of(const std::vector<KeyInput>& inputs) {
    std::map<std::string, std::string> out;
    for (const auto& in : inputs) {
        if (!is_env(in)) continue;
        for (const auto& item : in.values) {
            const auto eq = item.find('=');
            out[item.substr(0, eq)] = eq == std::string::npos ? std::string() : item.substr(eq + 1);
        }
    }
    return out;
}

void env_changes(const std::vector<KeyInput>& a, const std::vector<KeyInput>& b, size_t width,
                 std::vector<std::string>& out) {
    const auto before = env_of(a), after = env_of(b);
    std::set<std::string> names;
    for (const auto& [k, v] : before) names.insert(k);
    for (const auto& [k, v] : after) names.insert(k);
    for (const auto& name : names) {
        auto x = before.find(name), y = after.find(name);
        const bool had = x != before.end(), has = y != after.end();
        if (had && has && x->second == y->second) continue;
        out.push_back(fmt::format("env {}: {} → {}", name, had ? shorten(x->second, width) : "unset",
                                  has ? shorten(y->second, width) : "unset"));
    }
}

void list_changes(const KeyInput& a, const KeyInput& b, size_t width, std::vector<std::string>& out) {
    std::multiset<std::string> before(a.values.begin(), a.values.end()), after(b.values.begin(), b.values.end());
    std::vector<std::string> parts;
    for (const auto& v : b.values)
        if (auto it = before.find(v); it != before.end()) before.erase(it);
        else parts.push_back("+" + shorten(v, width));
    for (const auto& v : a.values)
        if (auto it = after.find(v); it != after.end()) after.erase(it);
        else parts.push_back("-" + shorten(v, width));
    if (parts.empty()) {
        out.push_back(b.field + ": same values, another order");
        return;
    }
    std::string text = b.field + ": ";
    for (size_t i = 0; i < parts.size(); ++i) text += (i ? ", " : "") + parts[i];
    out.push_back(std::move(text));
}

}  // namespace

std::vector<std::string> explain_change(const std::vector<KeyInput>& before, const std::vector<KeyInput>& after,
                                        size_t width) {
    std::vector<std::string> out;
    std::map<std::string, const KeyInput*> old;
    for (const auto& in : before) old[in.field] = &in;
    std::set<std::string> seen;
    bool env_done = false;
    for (const auto& in : after) {
        seen.insert(in.field);
        if (is_env(in)) {
            if (!env_done) env_changes(before, after, width, out);
            env_done = true;
            continue;
        }
        auto it = old.find(in.field);
        if (it == old.end()) {
            out.push_back(fmt::format("{}: added ({})", in.field, shorten(joined(in), width)));
            continue;
        }
        const KeyInput& was = *it->second;
        if (was == in) continue;
        if (in.list && was.list) list_changes(was, in, width, out);
        else
            out.push_back(
                fmt::format("{}: {} → {}", in.field, shorten(joined(was), width), shorten(joined(in), width)));
    }
    for (const auto& in : before)
        if (!seen.count(in.field) && !is_env(in))
            out.push_back(fmt::format("{}: removed (was {})", in.field, shorten(joined(in), width)));
    return out;
}

}  // namespace bootstrap::core
