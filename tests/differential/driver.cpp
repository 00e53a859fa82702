// The C++ side of the differential test (tests/differential/run.py): one JSON case per stdin
// line, one JSON answer per stdout line, in order. Each case names an `op` and its inputs; the
// answer holds what bootstrap's public API says about them, or {"error": "..."} when bootstrap
// rejects the input (or the case itself is malformed). Nothing a line holds stops the driver:
// a bad line is an error answer, and the next line is read.
//
//   {"op": "version_parse", "v": S}            {"op": "version_compare", "a": S, "b": S}
//   {"op": "specifier_parse", "spec": S}       {"op": "specifier_contains", "spec": S, "v": S}
//   {"op": "marker_evaluate", "marker": S, "envs": [{VAR: S | [S...]}...]}
//   {"op": "requirement_parse", "req": S}      {"op": "wheel_name", "filename": S}
//   {"op": "normalize", "name": S}
//   {"op": "index_page_html" | "index_page_json", "body": S, "url": S, "content_type": S}

#include <algorithm>
#include <exception>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockfile/index_page.hpp"
#include "pyenv/marker.hpp"
#include "pyenv/name.hpp"
#include "pyenv/requirement.hpp"
#include "pyenv/specifier.hpp"
#include "pyenv/version.hpp"
#include "pyenv/wheel_name.hpp"

namespace {

using nlohmann::json;
namespace pyenv = bootstrap::pyenv;
namespace lockfile = bootstrap::lockfile;

json error_answer(const std::string& message) { return json{{"error", message}}; }

json version_fields(const pyenv::Version& v) {
    return json{{"str", v.str()},
                {"public", v.public_version().str()},
                {"base", v.base_version().str()},
                {"local", v.local()},
                {"epoch", v.epoch()},
                {"release", v.release()},
                {"is_prerelease", v.is_prerelease()},
                {"is_postrelease", v.is_postrelease()},
                {"is_devrelease", v.is_devrelease()}};
}

json version_parse(const json& c) {
    auto v = pyenv::Version::parse(c.at("v").get<std::string>());
    if (!v) return error_answer(v.error().message);
    return version_fields(*v);
}

json version_compare(const json& c) {
    auto a = pyenv::Version::parse(c.at("a").get<std::string>());
    if (!a) return error_answer(a.error().message);
    auto b = pyenv::Version::parse(c.at("b").get<std::string>());
    if (!b) return error_answer(b.error().message);
    auto order = *a <=> *b;
    return json{{"cmp", order < 0 ? -1 : order > 0 ? 1 : 0}};
}

/// The set's specifiers, each as Specifier::str() gives it, sorted, once each.
std::vector<std::string> spec_strings(const pyenv::SpecifierSet& set) {
    std::set<std::string> unique;
    for (const pyenv::Specifier& s : set.specs()) unique.insert(s.str());
    return {unique.begin(), unique.end()};
}

json specifier_parse(const json& c) {
    auto set = pyenv::SpecifierSet::parse(c.at("spec").get<std::string>());
    if (!set) return error_answer(set.error().message);
    bool names_prerelease = std::any_of(set->specs().begin(), set->specs().end(),
                                        [](const pyenv::Specifier& s) { return s.names_prerelease(); });
    return json{{"specs", spec_strings(*set)}, {"str", set->str()}, {"prereleases", names_prerelease}};
}

json specifier_contains(const json& c) {
    auto set = pyenv::SpecifierSet::parse(c.at("spec").get<std::string>());
    if (!set) return error_answer(set.error().message);
    auto v = pyenv::Version::parse(c.at("v").get<std::string>());
    if (!v) return error_answer(v.error().message);
    return json{{"contains", set->contains(*v)}, {"contains_pre", set->contains(*v, true)}};
}

/// A case's environment as a MarkerEnv: strings as they are, a list (PEP 751's `extras` and
/// `dependency_groups`) as its names joined by ',', as marker.hpp reads them.
pyenv::MarkerEnv marker_env(const json& env) {
    pyenv::MarkerEnv out;
    for (const auto& [key, value] : env.items()) {
        if (value.is_array()) {
            std::string joined;
            for (const auto& name : value) joined += (joined.empty() ? "" : ",") + name.get<std::string>();
            out[key] = joined;
        } else {
            out[key] = value.get<std::string>();
        }
    }
    return out;
}

json marker_evaluate(const json& c) {
    auto marker = pyenv::Marker::parse(c.at("marker").get<std::string>());
    if (!marker) return error_answer(marker.error().message);
    json results = json::array();
    for (const auto& env : c.at("envs")) results.push_back(marker->evaluate(marker_env(env)));
    return json{{"str", marker->str()}, {"results", results}};
}

json requirement_parse(const json& c) {
    auto req = pyenv::Requirement::parse(c.at("req").get<std::string>());
    if (!req) return error_answer(req.error().message);
    std::vector<std::string> extras = req->extras;
    std::sort(extras.begin(), extras.end());
    return json{{"name", req->name}, {"normalized_name", req->normalized_name},
                {"extras", extras},  {"specs", spec_strings(req->specifier)},
                {"url", req->url},   {"marker", req->marker ? json(req->marker->str()) : json(nullptr)},
                {"str", req->str()}};
}

json wheel_name(const json& c) {
    auto wheel = pyenv::parse_wheel_name(c.at("filename").get<std::string>());
    if (!wheel) return error_answer(wheel.error().message);
    return json{{"name", wheel->normalized_name},
                {"version", wheel->parsed_version.str()},
                {"build", wheel->build_tag},
                {"tags", std::vector<std::string>(wheel->tags.begin(), wheel->tags.end())}};
}

json normalize(const json& c) {
    auto name = c.at("name").get<std::string>();
    return json{{"normalized", pyenv::normalize_name(name)}, {"valid", pyenv::is_valid_name(name)}};
}

json index_page(const json& c) {
    auto files = lockfile::parse_index_page(c.at("body").get<std::string>(), c.value("content_type", ""),
                                            c.at("url").get<std::string>());
    if (!files) return error_answer(files.error().message);
    json out = json::array();
    for (const lockfile::IndexFile& f : *files)
        out.push_back(json{{"filename", f.filename}, {"url", f.url}, {"sha256", f.sha256}, {"yanked", f.yanked}});
    return json{{"files", out}};
}

json answer(const std::string& line) {
    json c;
    try {
        c = json::parse(line);
    } catch (const json::exception& e) {
        return error_answer(std::string("driver: the line is not JSON: ") + e.what());
    }
    try {
        if (!c.is_object()) return error_answer("driver: the case is not a JSON object");
        const std::string op = c.at("op").get<std::string>();
        if (op == "version_parse") return version_parse(c);
        if (op == "version_compare") return version_compare(c);
        if (op == "specifier_parse") return specifier_parse(c);
        if (op == "specifier_contains") return specifier_contains(c);
        if (op == "marker_evaluate") return marker_evaluate(c);
        if (op == "requirement_parse") return requirement_parse(c);
        if (op == "wheel_name") return wheel_name(c);
        if (op == "normalize") return normalize(c);
        if (op == "index_page_html" || op == "index_page_json") return index_page(c);
        return error_answer("driver: unknown op '" + op + "'");
    } catch (const std::exception& e) {  // a missing or mistyped field of the case
        return error_answer(std::string("driver: malformed case: ") + e.what());
    }
}

}  // namespace

int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        // Bytes that are not UTF-8 (a percent-decoded file name, say) become U+FFFD, as
        // Python's unquote() makes them, instead of making dump() throw.
        std::cout << answer(line).dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
    }
    std::cout.flush();
    return 0;
}
