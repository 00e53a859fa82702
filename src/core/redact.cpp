#include "core/redact.hpp"

#include <algorithm>
#include <memory>
#include <mutex>

#include "core/env_policy.hpp"

#include "core/strings.hpp"

namespace bootstrap::core {

namespace {

/// [begin, end) of the userinfo part ("user:pass") of the URL starting at `s`, when it has one.
bool find_userinfo(std::string_view s, size_t* begin, size_t* end) {
    auto scheme_end = s.find("://");
    if (scheme_end == std::string_view::npos || scheme_end == 0) return false;
    size_t authority = scheme_end + 3;
    size_t stop = s.find_first_of("/?# \t\n\"'<>", authority);
    if (stop == std::string_view::npos) stop = s.size();
    auto at = s.substr(authority, stop - authority).rfind('@');
    if (at == std::string_view::npos) return false;
    *begin = authority;
    *end = authority + at;
    return true;
}

bool is_scheme_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' || c == '-' ||
           c == '.';
}

std::string redact_userinfo(std::string_view userinfo) {
    auto colon = userinfo.find(':');
    if (colon == std::string_view::npos) return std::string(k_redacted);  // a bare token
    return std::string(userinfo.substr(0, colon)) + ":" + std::string(k_redacted);
}

}  // namespace

std::string redact_url(std::string_view url) {
    size_t b = 0, e = 0;
    if (!find_userinfo(url, &b, &e)) return std::string(url);
    return std::string(url.substr(0, b)) + redact_userinfo(url.substr(b, e - b)) + std::string(url.substr(e));
}

namespace {

/// [begin, end) of the userinfo of every URL in `text` that has one, in order.
std::vector<std::pair<size_t, size_t>> userinfo_spans(std::string_view text) {
    std::vector<std::pair<size_t, size_t>> out;
    size_t pos = 0;
    while (pos < text.size()) {
        auto sep = text.find("://", pos);
        if (sep == std::string_view::npos) break;
        size_t start = sep;
        while (start > pos && is_scheme_char(text[start - 1])) --start;
        size_t b = 0, e = 0;
        if (start < sep && find_userinfo(text.substr(start), &b, &e)) {
            out.emplace_back(start + b, start + e);
            pos = start + e;
        } else {
            pos = sep + 3;
        }
    }
    return out;
}

using Values = std::vector<std::string>;

/// The values add_secret_values was given, longest first. Read by every log line and every
/// shown argv, from any thread: replaced whole under the mutex, read as a snapshot.
struct SecretRegistry {
    std::mutex mutex;
    std::shared_ptr<const Values> values = std::make_shared<const Values>();
};

SecretRegistry& registry() {
    static SecretRegistry r;
    return r;
}

std::shared_ptr<const Values> registered_values() {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    return r.values;
}

/// `secrets` without values too short to mask, longest first (a secret that contains another is
/// masked whole), each once.
Values maskable(Values secrets) {
    std::erase_if(secrets, [](const std::string& s) { return s.size() < k_min_masked; });
    std::sort(secrets.begin(), secrets.end(), [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() > b.size() : a < b;
    });
    secrets.erase(std::unique(secrets.begin(), secrets.end()), secrets.end());
    return secrets;
}

/// `text` with each occurrence of a value of `secrets` (longest first) as "***".
std::string mask_values(std::string text, const Values& secrets) {
    if (secrets.empty()) return text;
    std::string out;
    out.reserve(text.size());
    const std::string_view all = text;
    size_t i = 0;
    while (i < all.size()) {
        const std::string_view rest = all.substr(i);
        auto hit =
            std::find_if(secrets.begin(), secrets.end(), [&](const std::string& s) { return rest.starts_with(s); });
        if (hit == secrets.end()) {
            out += all[i++];
            continue;
        }
        out += k_redacted;
        i += hit->size();
    }
    return out;
}

}  // namespace

std::string redact_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    for (const auto& [b, e] : userinfo_spans(text)) {
        out.append(text.substr(pos, b - pos));
        out.append(redact_userinfo(text.substr(b, e - b)));
        pos = e;
    }
    out.append(text.substr(pos));
    return mask_values(std::move(out), *registered_values());
}

void add_secret_values(const std::vector<std::string>& values) {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    Values all = *r.values;
    all.insert(all.end(), values.begin(), values.end());
    r.values = std::make_shared<const Values>(maskable(std::move(all)));
}

void clear_secret_values() {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    r.values = std::make_shared<const Values>();
}

bool is_secret_name(std::string_view name, const std::set<std::string>& extra) {
    if (extra.count(std::string(name))) return true;
    return env_has_use(name, EnvUse::secret);
}

std::string shown_value(std::string_view name, std::string_view value, const std::set<std::string>& extra) {
    if (is_secret_name(name, extra)) return std::string(k_redacted);
    return redact_text(value);
}

std::string strip_credentials(std::string_view url) {
    size_t b = 0, e = 0;
    if (!find_userinfo(url, &b, &e)) return std::string(url);
    return std::string(url.substr(0, b)) + std::string(url.substr(e + 1));
}

std::vector<std::string> url_credentials(std::string_view text) {
    std::vector<std::string> out;
    for (const auto& [b, e] : userinfo_spans(text)) {
        std::string_view userinfo = text.substr(b, e - b);
        auto colon = userinfo.find(':');
        std::string_view secret = colon == std::string_view::npos ? userinfo : userinfo.substr(colon + 1);
        if (!secret.empty()) out.emplace_back(secret);
    }
    return out;
}

SecretMask::SecretMask(std::vector<std::string> secrets) {
    const auto registered = registered_values();
    secrets.insert(secrets.end(), registered->begin(), registered->end());
    m_secrets = maskable(std::move(secrets));
}

SecretMask::SecretMask(std::vector<std::string> secrets, TerminalFilter::Options as_text) {
    const auto registered = registered_values();
    secrets.insert(secrets.end(), registered->begin(), registered->end());
    for (auto& s : secrets) s = filtered_text(s, as_text);
    m_secrets = maskable(std::move(secrets));
}

std::string SecretMask::feed(std::string_view chunk) {
    if (m_secrets.empty()) return std::string(chunk);
    m_held.append(chunk);
    std::string out;
    m_held.erase(0, scan(m_held, false, out));
    return out;
}

std::string SecretMask::flush() {
    std::string out;
    (void)scan(m_held, true, out);
    m_held.clear();
    return out;
}

size_t SecretMask::scan(std::string_view text, bool at_end, std::string& out) const {
    out.reserve(out.size() + text.size());
    size_t i = 0;
    while (i < text.size()) {
        const std::string_view rest = text.substr(i);
        bool matched = false, maybe = false;
        for (const auto& s : m_secrets) {  // longest first
            if (s[0] != rest[0]) continue;
            if (rest.size() < s.size()) {
                maybe = maybe || std::string_view(s).starts_with(rest);
                continue;
            }
            if (!rest.starts_with(s)) continue;
            // A longer secret this could still become wins: wait for more (see below).
            if (!maybe) {
                out += k_redacted;
                i += s.size();
                matched = true;
            }
            break;
        }
        if (matched) continue;
        if (maybe) {
            if (!at_end) return i;  // the rest could begin a secret: wait for more
            // The output ended inside what could have been a secret: any of it shown would be
            // part of one (a longer one's first characters, a shorter one whole).
            out += k_redacted;
            return text.size();
        }
        out += text[i++];
    }
    return i;
}

}  // namespace bootstrap::core
