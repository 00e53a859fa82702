#include "pyenv/specifier.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/strings.hpp"

namespace bootstrap::pyenv {

namespace {

// Longest first, so "===" is not read as "==" followed by "=1.0".
constexpr std::array<std::string_view, 8> k_operators{"===", "~=", "==", "!=", "<=", ">=", "<", ">"};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool is_wildcard(std::string_view version) { return version.size() >= 2 && version.substr(version.size() - 2) == ".*"; }

/// PEP 440 prefix matching as packaging does it: a version becomes
/// [epoch, release..., pre, post, dev], its release zero-padded to `release_len`; the candidate
/// matches when its list starts with the prefix's.
std::vector<std::string> prefix_components(const Version& v, size_t release_len) {
    std::vector<std::string> out;
    out.push_back(std::to_string(v.epoch()));
    for (size_t i = 0; i < release_len; ++i) out.push_back(std::to_string(i < v.release().size() ? v.release()[i] : 0));
    // The suffixes (pre, post, dev) are compared textually, in canonical spelling. The public
    // form's text after the release gives them; split it at the segment boundaries.
    std::string text = v.public_version().str();
    std::string release_text = v.base_version().str();
    std::string_view rest = std::string_view(text).substr(release_text.size());
    while (!rest.empty()) {
        if (rest.front() == '.') rest.remove_prefix(1);
        size_t end = rest.find('.');
        out.emplace_back(rest.substr(0, end));
        rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
    }
    return out;
}

bool prefix_match(const Version& candidate, const Version& prefix) {
    // Only the candidate is padded: "==1.0.*" matches "1" (padded to 1.0).
    size_t len = std::max(candidate.release().size(), prefix.release().size());
    std::vector<std::string> c = prefix_components(candidate, len);
    std::vector<std::string> p = prefix_components(prefix, prefix.release().size());
    return c.size() >= p.size() && std::equal(p.begin(), p.end(), c.begin());
}

// PEP 440, "Exclusive ordered comparison", as packaging 26 reads it. Both operators compare
// whole versions (pre, post and dev segments included); each then carves out one family of V:
//   <V  excludes the pre-releases of V (V.dev0 and up) unless V is itself a pre-release (a dev
//       release counts): "<2.0" rejects 2.0rc1, "<2.0.post1" takes 2.0rc1, "<2.0rc1" takes 2.0b1.
//   >V  excludes V's local versions, and V's post-releases unless V is a post or dev release:
//       ">2.0" rejects 2.0.post1 and 2.0+cu121, ">2.0a0" takes 2.0+cu121, ">2.0.dev0" takes
//       2.0.post1.

/// `v < V`, and when V is not a pre-release, `v < V.dev0` (the first pre-release of V).
bool less_than(const Version& v, const Version& spec) {
    if (spec.is_prerelease()) return v < spec;
    // `<` takes no local label, so V.dev0 is V's public text with ".dev0" appended.
    auto first_dev = Version::parse(spec.public_version().str() + ".dev0");
    return first_dev && v < *first_dev;
}

/// `v > V` with v's local label dropped (1.7+x is 1.7), and no V.postN when V is final or a
/// pre-release: those share V's release and pre segment.
bool greater_than(const Version& v, const Version& spec) {
    if (!(v.public_version() > spec)) return false;
    if (spec.is_devrelease() || spec.is_postrelease()) return true;
    return !(v.base_version() == spec.base_version() && v.pre() == spec.pre());
}

/// Check one "<op><version>" item (already split and trimmed); offsets are into `item`.
tl::expected<Specifier, SyntaxError> parse_item(std::string_view item) {
    size_t pos = 0;
    std::string_view op;
    for (std::string_view candidate : k_operators) {
        if (item.substr(0, candidate.size()) == candidate) {
            op = candidate;
            break;
        }
    }
    if (op.empty())
        return tl::unexpected(SyntaxError{"expected a comparison operator (==, !=, <=, >=, <, >, ~=, ===)", 0});
    pos = op.size();
    while (pos < item.size() && is_space(item[pos])) ++pos;
    size_t version_start = pos;
    // As packaging reads it: even an arbitrary (===) version ends at ';' and ')', which belong to
    // the requirement around it, so that a requirement's text and its str() parse alike.
    auto in_version = [](char c) { return !is_space(c) && c != ';' && c != ')'; };
    while (pos < item.size() && in_version(item[pos])) ++pos;
    std::string_view version = item.substr(version_start, pos - version_start);
    if (version.empty())
        return tl::unexpected(SyntaxError{fmt::format("expected a version after '{}'", op), version_start});
    if (pos < item.size()) {
        size_t junk = pos;
        while (junk < item.size() && is_space(item[junk])) ++junk;
        return tl::unexpected(SyntaxError{fmt::format("unexpected '{}' after the version", item.substr(junk)), junk});
    }

    auto bad = [&](std::string why) { return tl::unexpected(SyntaxError{std::move(why), version_start}); };
    if (op == "===") return Specifier{std::string(op), std::string(version)};  // arbitrary text

    bool wildcard = is_wildcard(version);
    if (wildcard && op != "==" && op != "!=")
        return bad(fmt::format("'.*' is only allowed with == and !=, not '{}'", op));
    std::string_view body = wildcard ? version.substr(0, version.size() - 2) : version;
    auto parsed = Version::parse(body);
    if (!parsed) return bad(fmt::format("'{}' is not a valid version", version));
    if (!parsed->local().empty() && (wildcard || (op != "==" && op != "!=")))
        return bad(fmt::format("a local version label is not allowed in '{}{}'", op, version));
    // PEP 440 "Version matching": a prefix match ('.*') follows release numbers only.
    if (wildcard && (parsed->is_prerelease() || parsed->is_postrelease())) {
        std::string_view segment = parsed->is_devrelease() ? "dev" : parsed->is_postrelease() ? "post" : "pre";
        return bad(fmt::format("'.*' may only follow release numbers, and '{}{}' puts it after a {}-release segment",
                               op, version, segment));
    }
    if (op == "~=" && parsed->release().size() < 2)
        return bad(fmt::format("'~=' needs at least two release numbers, as in '~={}.0'", body));
    return Specifier{std::string(op), std::string(version)};
}

}  // namespace

Result<Specifier> Specifier::parse(std::string_view text) {
    std::string_view item = core::trim(text);
    auto spec = parse_item(item);
    if (!spec)
        return fail(ErrorCode::invalid_recipe,
                    fmt::format("invalid specifier '{}': {} at column {}", core::clip(text), spec.error().what,
                                spec.error().offset + 1 + static_cast<size_t>(item.data() - text.data())));
    return *spec;
}

bool Specifier::contains(const Version& v) const {
    // PEP 440 "Arbitrary equality": the text as written, compared case-insensitively (as
    // packaging 26 does), not the normalised version: ===1.01 takes "1.01" but not "1.1".
    if (op == "===") return core::to_lower(v.text()) == core::to_lower(core::trim(version));

    bool wildcard = is_wildcard(version);
    auto spec =
        Version::parse(wildcard ? std::string_view(version).substr(0, version.size() - 2) : std::string_view(version));
    if (!spec) return false;

    if (op == "==" || op == "!=") {
        bool equal = false;
        if (wildcard) equal = prefix_match(v.public_version(), *spec);
        else if (spec->local().empty()) equal = v.public_version() == *spec;  // ==1.0 takes 1.0+x
        else equal = v == *spec;
        return op == "==" ? equal : !equal;
    }
    if (op == "~=") {
        // ~=X.Y.N means >=X.Y.N, ==X.Y.*  (suffixes dropped before taking the prefix).
        Version prefix = spec->base_version();
        auto release = prefix.release();
        release.pop_back();
        std::string prefix_text = fmt::format("{}!", prefix.epoch());
        for (size_t i = 0; i < release.size(); ++i) prefix_text += (i ? "." : "") + std::to_string(release[i]);
        auto prefix_version = Version::parse(prefix_text);
        return v.public_version() >= *spec && prefix_version && prefix_match(v.public_version(), *prefix_version);
    }
    if (op == "<=") return v.public_version() <= *spec;
    if (op == ">=") return v.public_version() >= *spec;
    if (op == "<") return less_than(v, *spec);
    if (op == ">") return greater_than(v, *spec);
    return false;
}

bool Specifier::names_prerelease() const {
    if (op == "!=") return false;
    std::string_view body = version;
    // '.*' is a prefix match only after == and !=; `===` text ending in it is no version at all
    // ("===1.0a1.*" names no pre-release, as packaging's Specifier.prereleases has it).
    if (is_wildcard(body) && op != "===") body.remove_suffix(2);
    auto parsed = Version::parse(body);
    return parsed && parsed->is_prerelease();
}

tl::expected<SpecifierSet, SyntaxError> SpecifierSet::parse_detailed(std::string_view text) {
    SpecifierSet set;
    if (core::trim(text).empty()) return set;
    size_t start = 0;
    for (;;) {
        size_t comma = text.find(',', start);
        size_t end = comma == std::string_view::npos ? text.size() : comma;
        std::string_view raw = text.substr(start, end - start);
        std::string_view item = core::trim(raw);
        size_t item_offset = item.empty() ? end : start + static_cast<size_t>(item.data() - raw.data());
        if (item.empty())
            return tl::unexpected(SyntaxError{"expected a version specifier such as '>=1.0'", item_offset});
        auto spec = parse_item(item);
        if (!spec) {
            SyntaxError error = spec.error();
            error.offset += item_offset;
            return tl::unexpected(std::move(error));
        }
        set.m_specs.push_back(std::move(*spec));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return set;
}

Result<SpecifierSet> SpecifierSet::parse(std::string_view text) {
    auto set = parse_detailed(text);
    if (!set)
        return fail(ErrorCode::invalid_recipe, fmt::format("invalid specifier '{}': {} at column {}", core::clip(text),
                                                           set.error().what, set.error().offset + 1));
    return *set;
}

bool SpecifierSet::contains(const Version& v, bool prereleases) const {
    if (v.is_prerelease() && !prereleases &&
        std::none_of(m_specs.begin(), m_specs.end(), [](const Specifier& s) { return s.names_prerelease(); }))
        return false;
    return std::all_of(m_specs.begin(), m_specs.end(), [&](const Specifier& s) { return s.contains(v); });
}

std::string SpecifierSet::str() const {
    std::vector<std::string> parts;
    parts.reserve(m_specs.size());
    for (const Specifier& s : m_specs) parts.push_back(s.str());
    std::sort(parts.begin(), parts.end());
    return core::join(parts, ",");
}

}  // namespace bootstrap::pyenv
