#include "manifest/inputs_json.hpp"

namespace bootstrap::manifest {

nlohmann::json inputs_to_json(const std::vector<core::KeyInput>& inputs) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& in : inputs) {
        if (in.list) out.push_back(nlohmann::json::array({in.field, in.values}));
        else out.push_back(nlohmann::json::array({in.field, in.values.empty() ? std::string() : in.values.front()}));
    }
    return out;
}

std::vector<core::KeyInput> inputs_from_json(const core::JsonFields& f, std::string_view key) {
    std::vector<core::KeyInput> out;
    const nlohmann::json* j = f.find(key);
    if (j == nullptr) return out;
    constexpr std::string_view k_shape = "expected an array of [field, value or list of values]";
    if (!j->is_array()) f.invalid(key, k_shape);
    for (const auto& pair : *j) {
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string()) f.invalid(key, k_shape);
        core::KeyInput in{pair[0].get<std::string>(), {}, pair[1].is_array()};
        if (pair[1].is_string()) {
            in.values.push_back(pair[1].get<std::string>());
        } else if (in.list) {
            for (const auto& v : pair[1]) {
                if (!v.is_string()) f.invalid(key, k_shape);
                in.values.push_back(v.get<std::string>());
            }
        } else {
            f.invalid(key, k_shape);
        }
        out.push_back(std::move(in));
    }
    return out;
}

}  // namespace bootstrap::manifest
