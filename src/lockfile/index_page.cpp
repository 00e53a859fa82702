#include "lockfile/index_page.hpp"

#include <array>
#include <charconv>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/strings.hpp"

namespace bootstrap::lockfile {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/// `digits` as an unsigned number in `base`, only when all of it is one.
std::optional<unsigned long> parse_number(std::string_view digits, int base) {
    unsigned long value = 0;
    if (digits.empty()) return std::nullopt;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
    if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    return value;
}

void append_utf8(std::string& out, unsigned long cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

/// The text a character reference (without '&' and ';') stands for, or nullopt.
std::optional<std::string> entity_text(std::string_view ref) {
    static const std::map<std::string, std::string, std::less<>> named{
        {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
    if (auto it = named.find(ref); it != named.end()) return it->second;
    if (ref.size() < 2 || ref[0] != '#') return std::nullopt;
    bool hex = ref[1] == 'x' || ref[1] == 'X';
    auto cp = parse_number(ref.substr(hex ? 2 : 1), hex ? 16 : 10);
    if (!cp || *cp == 0 || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return std::nullopt;
    std::string out;
    append_utf8(out, *cp);
    return out;
}

/// RFC 3986 section 5.2.4: "." and ".." segments of an absolute path.
std::string remove_dot_segments(std::string_view path) {
    auto segments = core::split(path, '/');
    std::vector<std::string> out;
    for (size_t i = 1; i < segments.size(); ++i) {  // segments[0] is "" before the leading '/'
        const auto& s = segments[i];
        bool last = i + 1 == segments.size();
        if (s == "..") {
            if (!out.empty()) out.pop_back();
            if (last) out.emplace_back();
        } else if (s == ".") {
            if (last) out.emplace_back();
        } else {
            out.push_back(s);
        }
    }
    return "/" + core::join(out, "/");
}

bool has_scheme(std::string_view s) {
    if (s.empty() || !is_alpha(s[0])) return false;
    for (char c : s.substr(1)) {
        if (c == ':') return true;
        if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.') return false;
    }
    return false;
}

using Attributes = std::map<std::string, std::string>;

struct Tag {
    std::string name;  // lower case: "a" or "base"
    Attributes attrs;
};

/// The attributes from `i` (just after the tag name) to the tag's '>' (names lower-cased,
/// values with references decoded); `i` ends past the '>'. `self_closing` is set when the tag
/// ends in "/>".
Attributes read_attributes(std::string_view html, size_t& i, bool& self_closing) {
    Attributes attrs;
    while (i < html.size() && html[i] != '>') {
        if (is_space(html[i]) || html[i] == '/') {
            ++i;
            continue;
        }
        size_t name_at = i;
        while (i < html.size() && !is_space(html[i]) && html[i] != '=' && html[i] != '>' && html[i] != '/') ++i;
        std::string name = core::to_lower(html.substr(name_at, i - name_at));
        while (i < html.size() && is_space(html[i])) ++i;
        std::string value;
        if (i < html.size() && html[i] == '=') {
            ++i;
            while (i < html.size() && is_space(html[i])) ++i;
            if (i < html.size() && (html[i] == '"' || html[i] == '\'')) {
                char quote = html[i++];
                size_t end = html.find(quote, i);
                if (end == std::string_view::npos) end = html.size();
                value = html.substr(i, end - i);
                i = end + 1;
            } else {
                size_t value_at = i;
                while (i < html.size() && !is_space(html[i]) && html[i] != '>') ++i;
                value = html.substr(value_at, i - value_at);
            }
        }
        attrs.emplace(std::move(name), decode_html_entities(value));
    }
    self_closing = i < html.size() && i > 0 && html[i - 1] == '/';
    ++i;
    return attrs;
}

/// Where the raw text of a `<script>` or `<style>` element that starts at `i` ends: at its end
/// tag ("</script" then a space, '/' or '>', in any case), or the end of the page.
size_t raw_text_end(std::string_view html, size_t i, std::string_view name) {
    while ((i = html.find("</", i)) != std::string_view::npos) {
        size_t after = i + 2 + name.size();
        if (core::to_lower(html.substr(i + 2, name.size())) == name &&
            (after == html.size() || is_space(html[after]) || html[after] == '/' || html[after] == '>'))
            return i;
        i += 2;
    }
    return html.size();
}

/// Every `<a>` and `<base>` tag, in page order, given to `on_tag` one at a time (nothing of
/// the page is kept) until it returns false. Comments (bogus ones too) are skipped, and so is
/// the text of `<script>` and `<style>`: it is raw text in HTML, so an `<a href>` written there
/// is no link (pip's parser, Python's html.parser, reads it so too).
void for_each_link_tag(std::string_view html, const std::function<bool(Tag&&)>& on_tag) {
    size_t i = 0;
    while ((i = html.find('<', i)) != std::string_view::npos) {
        if (html.substr(i, 4) == "<!--") {
            size_t end = html.find("-->", i + 4);
            if (end == std::string_view::npos) break;
            i = end + 3;
            continue;
        }
        // "<!DOCTYPE ..>", "<![CDATA[ ..", "<?xml ..": in HTML a bogus comment (or the doctype)
        // that ends at the first '>', so an <a> written inside is no link (nor is it to pip).
        if (html.substr(i, 2) == "<!" || html.substr(i, 2) == "<?") {
            size_t end = html.find('>', i + 2);
            if (end == std::string_view::npos) break;
            i = end + 1;
            continue;
        }
        size_t name_at = ++i;
        while (i < html.size() && (is_alpha(html[i]) || is_digit(html[i]))) ++i;
        std::string name = core::to_lower(html.substr(name_at, i - name_at));
        bool tag_ends = i < html.size() && (is_space(html[i]) || html[i] == '>' || html[i] == '/');
        bool wanted = name == "a" || name == "base" || name == "script" || name == "style";
        if (!tag_ends || !wanted) continue;
        bool self_closing = false;
        Attributes attrs = read_attributes(html, i, self_closing);
        if (name == "script" || name == "style") {
            // `<script src=x />` has no content for Python's parser (an HTML parser would
            // still read raw text after it; pip's view keeps the links that follow).
            if (!self_closing) i = raw_text_end(html, i, name);
            continue;
        }
        if (!on_tag(Tag{std::move(name), std::move(attrs)})) return;
    }
}

/// An href as a URL parser reads it (WHATWG URL, "basic URL parser"): leading and trailing C0
/// controls and spaces stripped, tabs and newlines removed wherever they are.
std::string clean_href(std::string_view href) {
    while (!href.empty() && static_cast<unsigned char>(href.front()) <= 0x20) href.remove_prefix(1);
    while (!href.empty() && static_cast<unsigned char>(href.back()) <= 0x20) href.remove_suffix(1);
    std::string out;
    for (char c : href)
        if (c != '\t' && c != '\n' && c != '\r') out += c;
    return out;
}

/// The URL relative links resolve against: the first `<base href>`'s (itself resolved against
/// the page's URL), else the page's. pip (HTMLLinkParser) takes the first base too; it does
/// not resolve a relative one, which HTML does.
std::string base_url(std::string_view html, const std::string& page_url) {
    std::string out = page_url;
    for_each_link_tag(html, [&](Tag&& tag) {
        if (tag.name != "base") return true;
        auto href = tag.attrs.find("href");
        if (href == tag.attrs.end()) return true;
        std::string cleaned = clean_href(href->second);
        if (!cleaned.empty()) out = resolve_url(page_url, cleaned);
        return false;
    });
    return out;
}

/// The sha256 in a URL's fragment (`url` from its '#'), read as pip's LinkHash does: the first
/// `<name>=<value>` that follows a '#' or '&' and names a hash pip knows wins, its value running
/// to the next '&' ("#sha256=<hex>&egg=x" gives the hex). Nothing when there is none or the
/// winner is not a sha256 ("#md5=..&sha256=.." gives nothing: pip checks the md5).
std::optional<std::string_view> fragment_sha256(std::string_view url) {
    static constexpr std::array<std::string_view, 6> k_hashes{
        "sha512=", "sha384=", "sha256=", "sha224=", "sha1=", "md5="};
    size_t hash = url.find('#');
    if (hash == std::string_view::npos) return std::nullopt;
    for (size_t i = hash; i < url.size(); ++i) {
        if (url[i] != '#' && url[i] != '&') continue;
        std::string_view item = url.substr(i + 1);
        for (std::string_view name : k_hashes) {
            if (!core::starts_with(item, name)) continue;
            if (name != "sha256=") return std::nullopt;
            std::string_view value = item.substr(name.size());
            return value.substr(0, value.find('&'));
        }
    }
    return std::nullopt;
}

/// `url` without its fragment.
std::string_view without_fragment(std::string_view url) { return url.substr(0, url.find('#')); }

/// A sha256 as the index wrote it, checked and lower-cased.
Result<std::string> checked_sha256(std::string_view hex, const std::string& filename, const std::string& page_url) {
    std::string out = core::to_lower(hex);
    bool ok = out.size() == 64;
    for (char c : out) ok = ok && is_hex(c);
    if (!ok)
        return fail(ErrorCode::network,
                    fmt::format("{} lists {} with a malformed sha256 '{}'", page_url, filename, hex));
    return out;
}

/// The page's links, read in two passes over it (its base, then each link) that keep only what
/// `keep` wants: a page of a million links costs its own bytes, not a tree of them.
Result<std::vector<IndexFile>> parse_html(std::string_view body, const std::string& page_url, const KeepFile& keep) {
    std::vector<IndexFile> files;
    const std::string base = base_url(body, page_url);
    std::optional<Error> error;
    for_each_link_tag(body, [&](Tag&& tag) {
        auto href = tag.attrs.find("href");
        if (tag.name != "a" || href == tag.attrs.end()) return true;
        std::string cleaned = clean_href(href->second);
        std::string_view link = without_fragment(cleaned);
        std::string_view path = link.substr(0, link.find('?'));
        IndexFile f;
        f.filename = core::percent_decode(path.substr(path.rfind('/') + 1));
        if (f.filename.empty()) return true;  // a link to a directory, not a file
        // PEP 503: the fragment is "<hashname>=<hexdigest>"; only sha256 is of use here.
        if (auto digest = fragment_sha256(cleaned)) {
            auto sha = checked_sha256(*digest, f.filename, page_url);
            if (!sha) {
                error = sha.error();
                return false;
            }
            f.sha256 = std::move(*sha);
        }
        if (keep && !keep(f.filename)) return true;
        f.url = resolve_url(base, link);
        f.yanked = tag.attrs.count("data-yanked") > 0;
        files.push_back(std::move(f));
        return true;
    });
    if (error) return tl::unexpected(std::move(*error));
    return files;
}

/// One entry of a PEP 691 page's "files" (nlohmann's exceptions for a missing key or a wrong
/// type are the caller's to catch).
Result<IndexFile> json_file(const nlohmann::json& entry, const std::string& page_url) {
    IndexFile f;
    f.filename = entry.at("filename").get<std::string>();
    auto url = entry.at("url").get<std::string>();
    f.url = resolve_url(page_url, without_fragment(url));
    if (entry.contains("hashes") && entry["hashes"].contains("sha256")) {
        BS_TRY(f.sha256, checked_sha256(entry["hashes"]["sha256"].get<std::string>(), f.filename, page_url));
    }
    // A "#sha256=" on the url wins over "hashes", as in pip (Link.from_json).
    if (auto digest = fragment_sha256(url)) {
        BS_TRY(f.sha256, checked_sha256(*digest, f.filename, page_url));
    }
    // PEP 691: false, true, or a non-empty reason string.
    if (auto y = entry.find("yanked"); y != entry.end())
        f.yanked = y->is_string() ? !y->get<std::string>().empty() : y->get<bool>();
    return f;
}

/// The page's files. With `keep`, an entry of the top-level "files" is dropped from the tree as
/// soon as it is parsed when it reads without error and `keep` does not want it, so the tree
/// holds only the files kept (and any entry in error, reported below in page order as before).
Result<std::vector<IndexFile>> parse_json(std::string_view body, const std::string& page_url, const KeepFile& keep) {
    auto invalid = [&](const std::string& why) {
        return fail(ErrorCode::network, fmt::format("{} is not a valid PEP 691 project page: {}", page_url, why));
    };
    nlohmann::json page;
    std::string top_key;  // the top-level member being parsed
    auto drop_unwanted = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using Event = nlohmann::json::parse_event_t;
        if (depth == 1 && event == Event::key) top_key = parsed.get<std::string>();
        if (depth != 2 || event != Event::object_end || top_key != "files") return true;
        try {
            auto f = json_file(parsed, page_url);
            return !f || keep(f->filename);
        } catch (const nlohmann::json::exception&) {
            return true;  // kept: the loop below reports it where the tree reader did
        }
    };
    try {
        page = keep ? nlohmann::json::parse(body, drop_unwanted) : nlohmann::json::parse(body);
    } catch (const nlohmann::json::exception& e) {
        return invalid(e.what());
    }
    if (!page.is_object()) return invalid("not a JSON object");
    try {
        if (page.contains("meta") && page["meta"].contains("api-version")) {
            auto api = page["meta"]["api-version"].get<std::string>();
            if (api.substr(0, api.find('.')) != "1")
                return invalid(fmt::format("api-version {} (this bootstrap reads 1.x)", api));
        }
        if (!page.contains("files") || !page["files"].is_array()) return invalid("no \"files\" array");
        std::vector<IndexFile> files;
        for (const auto& entry : page["files"]) {
            BS_TRY(auto f, json_file(entry, page_url));
            // With `keep`, the tree holds only what it kept (asked once per file, when parsed).
            files.push_back(std::move(f));
        }
        return files;
    } catch (const nlohmann::json::exception& e) {
        return invalid(e.what());
    }
}

}  // namespace

std::string decode_html_entities(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '&') {
            size_t semi = text.find(';', i + 1);
            if (semi != std::string_view::npos && semi - i <= 12) {
                if (auto decoded = entity_text(text.substr(i + 1, semi - i - 1))) {
                    out += *decoded;
                    i = semi;
                    continue;
                }
            }
        }
        out += text[i];
    }
    return out;
}

std::string resolve_url(std::string_view base, std::string_view href) {
    if (has_scheme(href)) return std::string(href);
    base = base.substr(0, base.find('#'));
    if (href.empty()) return std::string(base);
    if (href[0] == '#') return std::string(base) + std::string(href);
    base = base.substr(0, base.find('?'));
    size_t colon = has_scheme(base) ? base.find(':') : std::string_view::npos;
    std::string_view scheme = colon == std::string_view::npos ? "" : base.substr(0, colon + 1);
    std::string_view rest = base.substr(scheme.size());
    std::string_view authority;
    if (core::starts_with(rest, "//")) {
        size_t slash = rest.find('/', 2);
        authority = rest.substr(0, slash);
        rest = slash == std::string_view::npos ? "" : rest.substr(slash);
    }
    if (core::starts_with(href, "//")) return fmt::format("{}{}", scheme, href);
    if (href[0] == '?') return fmt::format("{}{}{}{}", scheme, authority, rest, href);
    size_t query_at = href.find('?');
    std::string_view href_path = href.substr(0, query_at);
    std::string_view query = query_at == std::string_view::npos ? "" : href.substr(query_at);
    std::string merged;
    if (href_path[0] == '/') merged = href_path;
    else if (rest.empty()) merged = fmt::format("/{}", href_path);
    else merged = fmt::format("{}{}", rest.substr(0, rest.rfind('/') + 1), href_path);
    return fmt::format("{}{}{}{}", scheme, authority, remove_dot_segments(merged), query);
}

Result<std::vector<IndexFile>> parse_index_page(std::string_view body, std::string_view content_type,
                                                const std::string& page_url, const KeepFile& keep) {
    std::string type = core::to_lower(core::trim(content_type.substr(0, content_type.find(';'))));
    bool json = type.find("json") != std::string::npos;
    if (!json && type.find("html") == std::string::npos) {
        // No usable Content-Type (a file:// index, a bare server): the body tells.
        std::string_view start = core::trim(body);
        json = !start.empty() && start[0] == '{';
    }
    return json ? parse_json(body, page_url, keep) : parse_html(body, page_url, keep);
}

}  // namespace bootstrap::lockfile
