#include "pyenv/module_owner.hpp"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "pyenv/record.hpp"
#include "pyenv/version.hpp"

namespace bootstrap::pyenv {

namespace {

/// The path field of a RECORD row.
std::string record_path(const std::string& row) { return parse_record_row(row).path; }

/// Does a RECORD path belong to the module whose path is `stem` ("a/b")? Its package directory,
/// its source file, or an extension module "a/b.cpython-311-x86_64-linux-gnu.so".
bool provides(std::string_view path, std::string_view stem) {
    if (!path.starts_with(stem)) return false;
    std::string_view rest = path.substr(stem.size());
    if (rest.starts_with("/")) return true;
    if (rest == ".py") return true;
    return rest.starts_with(".") && rest.find('/') == std::string_view::npos &&
           (rest.ends_with(".so") || rest.ends_with(".pyd"));
}

bool record_provides(const Distribution& dist, std::string_view stem) {
    std::ifstream record(dist.dist_info() / "RECORD");
    for (std::string row; std::getline(record, row);)
        if (provides(record_path(row), stem)) return true;
    return false;
}

bool top_level_names(const Distribution& dist, std::string_view top) {
    std::ifstream file(dist.dist_info() / "top_level.txt");
    for (std::string line; std::getline(file, line);)
        if (core::trim(line) == top) return true;
    return false;
}

}  // namespace

std::vector<std::string> top_level_modules(const Distribution& dist) {
    std::vector<std::string> out;
    auto add = [&](std::string name) {
        if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
    };
    std::ifstream top(dist.dist_info() / "top_level.txt");
    for (std::string line; std::getline(top, line);) add(std::string(core::trim(line)));
    std::ifstream record(dist.dist_info() / "RECORD");
    for (std::string row; std::getline(record, row);) {
        std::string path = record_path(row);
        if (path.empty() || path.find(".dist-info/") != std::string::npos || core::starts_with(path, "..")) continue;
        std::string first = path.substr(0, path.find('/'));
        if (first == path) {  // a top-level module file: "six.py", "amp_C.cpython-312-...so"
            if (first.ends_with(".py")) add(first.substr(0, first.size() - 3));
            else if (first.ends_with(".so")) add(first.substr(0, first.find('.')));
        } else if (first != "__pycache__") {
            add(first);
        }
    }
    return out;
}

std::vector<const Distribution*> distributions_providing(std::string_view module,
                                                         const std::map<std::string, Distribution>& installed) {
    std::vector<const Distribution*> out;
    // "a.b.c", then "a.b", then "a": a submodule made at import time has no file of its own.
    for (std::string_view name = module; !name.empty();) {
        std::string stem(name);
        std::replace(stem.begin(), stem.end(), '.', '/');
        for (const auto& [key, dist] : installed)
            if (record_provides(dist, stem)) out.push_back(&dist);
        if (!out.empty()) return out;
        size_t dot = name.rfind('.');
        name = dot == std::string_view::npos ? std::string_view() : name.substr(0, dot);
    }
    std::string_view top = module.substr(0, module.find('.'));
    for (const auto& [name, dist] : installed)
        if (top_level_names(dist, top)) out.push_back(&dist);
    return out;
}

Result<Distribution> check_module_version(std::string_view module, const SpecifierSet& specifiers,
                                          const std::map<std::string, Distribution>& installed) {
    auto owners = distributions_providing(module, installed);
    if (owners.empty())
        return fail(ErrorCode::step_failed,
                    fmt::format("{}: no installed distribution provides this module, so its version "
                                "cannot be checked against {}",
                                module, specifiers.str()));
    if (owners.size() > 1) {
        std::vector<std::string> names;
        for (const auto* d : owners) names.push_back(d->name + " " + d->version);
        return fail(ErrorCode::step_failed,
                    fmt::format("{}: provided by several distributions ({}); check the version of a "
                                "module only one of them provides",
                                module, core::join(names, ", ")));
    }
    const Distribution& dist = *owners.front();
    auto version = Version::parse(dist.version);
    if (!version)
        return fail(ErrorCode::step_failed,
                    fmt::format("{}: distribution {} has version '{}', which is not a PEP 440 version "
                                "({} cannot be checked)",
                                module, dist.name, dist.version, specifiers.str()));
    if (!specifiers.contains(*version, true))
        return fail(ErrorCode::step_failed, fmt::format("{} {} does not satisfy {} (distribution {})", module,
                                                        dist.version, specifiers.str(), dist.name));
    return dist;
}

}  // namespace bootstrap::pyenv
