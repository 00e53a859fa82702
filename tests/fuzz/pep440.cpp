// Fuzz target: PEP 440 versions and specifiers (pyenv::Version, Specifier, SpecifierSet).
//
// The whole input is parsed as a version and as a specifier set; when it holds a newline, the
// part before is a specifier set and the part after a version it is matched against.

#include "fuzz_support.hpp"
#include "pyenv/specifier.hpp"
#include "pyenv/version.hpp"

namespace {

using bootstrap::pyenv::SpecifierSet;
using bootstrap::pyenv::Version;

/// A version's canonical string must parse back to an equal version.
void check_version(std::string_view text) {
    auto v = Version::parse(text);
    if (!v) return;
    std::string canonical = v->str();
    auto again = Version::parse(canonical);
    if (!again) bootstrap::fuzz::invariant_failed("Version::str() does not parse", canonical);
    if (!(*again == *v)) bootstrap::fuzz::invariant_failed("Version::str() changes the version", canonical);
    (void)v->public_version().str();
    (void)v->base_version().str();
    (void)v->is_prerelease();
}

void check_specifiers(std::string_view text, const Version* version) {
    auto set = SpecifierSet::parse(text);
    if (!set) return;
    std::string canonical = set->str();
    if (!SpecifierSet::parse(canonical))
        bootstrap::fuzz::invariant_failed("SpecifierSet::str() does not parse", canonical);
    for (const auto& spec : set->specs()) (void)spec.names_prerelease();
    if (version) {
        (void)set->contains(*version, false);
        (void)set->contains(*version, true);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view input = bootstrap::fuzz::as_text(data, size);
    check_version(input);
    (void)bootstrap::pyenv::Specifier::parse(input);
    size_t nl = input.find('\n');
    if (nl == std::string_view::npos) {
        check_specifiers(input, nullptr);
        return 0;
    }
    std::string_view version_text = input.substr(nl + 1);
    check_version(version_text);
    auto version = Version::parse(version_text);
    check_specifiers(input.substr(0, nl), version ? &*version : nullptr);
    return 0;
}
