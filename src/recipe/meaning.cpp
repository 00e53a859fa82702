#include "recipe/meaning.hpp"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "core/redact.hpp"
#include "core/strings.hpp"
#include "recipe/value.hpp"

namespace bootstrap::recipe {

namespace {

/// Not what the step does: its identity (id, kind: kept apart), fields Step keeps (env,
/// env_unset), and how it is run (timeout, attempts, optional).
constexpr std::string_view k_not_written[] = {"id", "kind", "env", "env_unset", "timeout", "attempts", "optional"};

std::string in_quotes(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

/// A value inside another (an array's item, a table's entry): strings quoted.
std::string inline_value(const Value& v) {
    switch (v.type) {
        case ValueType::string: return in_quotes(v.string);
        case ValueType::integer: return std::to_string(v.integer);
        case ValueType::floating_point: return fmt::format("{}", v.floating_point);
        case ValueType::boolean: return v.boolean ? "true" : "false";
        case ValueType::array: {
            std::vector<std::string> items;
            for (const auto& item : v.array) items.push_back(inline_value(item));
            return "[" + core::join(items, ", ") + "]";
        }
        case ValueType::table: {
            std::vector<std::string> items;
            for (const auto& e : v.table) items.push_back(e.key + " = " + inline_value(e.value));
            return "{" + core::join(items, ", ") + "}";
        }
        default: return type_name(v.type);  // no step key takes a date or time
    }
}

/// A value at the top of a step's table: a string as written.
std::string top_value(const Value& v) { return v.is(ValueType::string) ? v.string : inline_value(v); }

core::KeyInput single(std::string field, std::string value) { return {std::move(field), {std::move(value)}, false}; }

core::KeyInput list(std::string field, std::vector<std::string> values) {
    return {std::move(field), std::move(values), true};
}

/// NAME=VALUE items as step keys show them (a secret-named variable's value "***").
std::vector<std::string> env_items(const std::map<std::string, Text>& env, const std::set<std::string>& secret) {
    std::vector<std::string> out;
    for (const auto& [name, value] : env) out.push_back(name + "=" + core::shown_value(name, value.value, secret));
    return out;
}

/// Every value with URL credentials and registered secret values masked.
void redact(std::vector<core::KeyInput>& inputs) {
    for (auto& in : inputs)
        for (auto& v : in.values) v = core::redact_text(v);
}

}  // namespace

namespace detail {

std::vector<core::KeyInput> written_inputs(const Value& step_table) {
    std::vector<core::KeyInput> out;
    for (const auto& e : step_table.table) {
        if (std::find(std::begin(k_not_written), std::end(k_not_written), e.key) != std::end(k_not_written)) continue;
        const Value& v = e.value;
        if (v.is(ValueType::array)) {
            std::vector<std::string> items;
            for (const auto& item : v.array) items.push_back(top_value(item));
            out.push_back(list(e.key, std::move(items)));
        } else if (v.is(ValueType::table)) {
            std::vector<std::string> items;
            for (const auto& entry : v.table) items.push_back(entry.key + "=" + top_value(entry.value));
            out.push_back(list(e.key, std::move(items)));
        } else {
            out.push_back(single(e.key, top_value(v)));
        }
    }
    return out;
}

}  // namespace detail

Meaning meaning(const Recipe& recipe) {
    Meaning out;
    std::vector<std::string> ids;
    for (const auto& step : recipe.steps) ids.push_back(step.id);
    auto& r = out.recipe;
    r.push_back(list("steps", ids));
    r.push_back(single("venv.python", recipe.venv.python));
    r.push_back(single("venv.installer", to_string(recipe.venv.installer)));
    for (const auto& [name, value] : recipe.vars)
        r.push_back(single("vars." + name, core::shown_value(name, value.value, recipe.env_secret)));
    // env.* lists of NAME=VALUE are read as one environment by core::explain_change.
    r.push_back(list("env.set", env_items(recipe.env_set, recipe.env_secret)));
    r.push_back(list("env.unset", recipe.env_unset));
    r.push_back(list("env_key", {recipe.env_key.begin(), recipe.env_key.end()}));  // not env.*: names only
    r.push_back(list("device.probes", recipe.device_probes));
    r.push_back(single("device.fallback_arch", recipe.device_fallback_arch.value_or("")));
    r.push_back(single("device.ptx", recipe.device_ptx ? "true" : "false"));
    redact(r);
    for (const auto& step : recipe.steps) {
        StepMeaning m{step.id, {}};
        m.inputs.push_back(single("kind", step.kind));
        m.inputs.push_back(list("env.set", env_items(step.env, recipe.env_secret)));
        m.inputs.push_back(list("env.unset", step.env_unset));
        m.inputs.insert(m.inputs.end(), step.written.begin(), step.written.end());
        redact(m.inputs);
        out.steps.push_back(std::move(m));
    }
    return out;
}

}  // namespace bootstrap::recipe
