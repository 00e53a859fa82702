#include "pyenv/sdist_name.hpp"

#include <string>

#include "pyenv/name.hpp"
#include "pyenv/version.hpp"

namespace bootstrap::pyenv {

namespace {

std::string_view sdist_stem(std::string_view file_name) {
    for (std::string_view ext : {".tar.gz", ".zip"})
        if (file_name.size() > ext.size() && file_name.ends_with(ext))
            return file_name.substr(0, file_name.size() - ext.size());
    return {};
}

bool same_version(std::string_view a, std::string_view b) {
    auto va = Version::parse(std::string(a));
    auto vb = Version::parse(std::string(b));
    if (va && vb) return *va == *vb;
    return a == b;
}

}  // namespace

bool is_sdist_file_name(std::string_view file_name) { return !sdist_stem(file_name).empty(); }

bool is_sdist_of(std::string_view file_name, std::string_view name, std::string_view version) {
    const auto stem = sdist_stem(file_name);
    if (stem.empty() || file_name.find('/') != std::string_view::npos) return false;
    const std::string want = normalize_name(name);
    for (size_t dash = stem.find('-'); dash != std::string_view::npos; dash = stem.find('-', dash + 1))
        if (normalize_name(stem.substr(0, dash)) == want && same_version(stem.substr(dash + 1), version)) return true;
    return false;
}

}  // namespace bootstrap::pyenv
