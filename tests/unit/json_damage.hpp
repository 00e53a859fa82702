#pragma once
// Damaged copies of a JSON document, for testing a reader against an oracle: every value's
// pointer, values of every JSON type to put there, and the text with one member given twice
// (which nlohmann's dump cannot write).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bs_test {

/// null, booleans, integers of both signs, a float, strings, arrays and objects, empty or not.
inline const std::vector<nlohmann::json>& json_replacements() {
    using nlohmann::json;
    static const std::vector<json> values = {nullptr,
                                             true,
                                             1,
                                             -1,
                                             1.5,
                                             "s",
                                             "",
                                             json::array(),
                                             json::array({"u"}),
                                             json::array({1}),
                                             json::array({"f", "v"}),
                                             json::array({1, 2, 3}),
                                             json::object(),
                                             json::object({{"version", "9"}}),
                                             json::object({{"key", "k"}, {"status", "ok"}}),
                                             2,
                                             0};
    return values;
}

/// Every value's JSON pointer, the root's ("") included.
inline void json_pointers(const nlohmann::json& j, const nlohmann::json::json_pointer& at,
                          std::vector<nlohmann::json::json_pointer>& out) {
    out.push_back(at);
    if (j.is_object())
        for (const auto& [k, v] : j.items()) json_pointers(v, at / k, out);
    if (j.is_array())
        for (std::size_t i = 0; i < j.size(); ++i) json_pointers(j[i], at / i, out);
}

inline std::vector<nlohmann::json::json_pointer> json_pointers(const nlohmann::json& j) {
    std::vector<nlohmann::json::json_pointer> out;
    json_pointers(j, nlohmann::json::json_pointer(), out);
    return out;
}

/// `j` without the value at `ptr` (not the root).
inline nlohmann::json json_without(nlohmann::json j, const nlohmann::json::json_pointer& ptr) {
    auto& parent = j[ptr.parent_pointer()];
    if (parent.is_object()) {
        parent.erase(ptr.back());
    } else {
        parent.erase(std::stoul(ptr.back()));
    }
    return j;
}

/// `j` as text with the member at `target` written twice: `extra` first or last.
inline std::string json_dump_twice(const nlohmann::json& j, const nlohmann::json::json_pointer& target,
                                   const nlohmann::json& extra, bool extra_first,
                                   const nlohmann::json::json_pointer& at = nlohmann::json::json_pointer()) {
    if (!j.is_object()) return j.dump();
    std::string out = "{";
    bool first = true;
    auto member = [&](const std::string& k, const std::string& v) {
        out += (first ? "" : ",") + nlohmann::json(k).dump() + ":" + v;
        first = false;
    };
    for (const auto& [k, v] : j.items()) {
        const auto here = at / k;
        if (here == target) {
            if (extra_first) member(k, extra.dump());
            member(k, v.dump());
            if (!extra_first) member(k, extra.dump());
        } else {
            member(k, json_dump_twice(v, target, extra, extra_first, here));
        }
    }
    return out + "}";
}

}  // namespace bs_test
