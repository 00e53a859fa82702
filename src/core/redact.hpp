#pragma once
// Secrets never reach a file, a log or the screen: credentials in URLs are shown as
// `user:***@`, and values of variables whose names look secret as `***`. The real values go
// only to the child that needs them.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/terminal_filter.hpp"

namespace bootstrap::core {

inline constexpr std::string_view k_redacted = "***";

/// "https://user:pass@host/x" -> "https://user:***@host/x"; "https://token@host" ->
/// "https://***@host". Anything else is returned unchanged.
[[nodiscard]] std::string redact_url(std::string_view url);

/// Every URL with credentials inside free text (argv lines, logs, error messages) redacted, and
/// every secret value (add_secret_values) in it masked as "***".
[[nodiscard]] std::string redact_text(std::string_view text);

/// Values that are secrets wherever they show: those of the secret-named variables a plan reads
/// (`{env.MY_TOKEN}` in an argv, whole or inside "--token=VALUE") or sets. From now on
/// redact_text masks each one k_min_masked or longer, and so does every SecretMask made after:
/// an argv is shown, logged and hashed into a key with "***" where the child gets the value.
void add_secret_values(const std::vector<std::string>& values);
/// Forget every value add_secret_values was given (tests).
void clear_secret_values();

/// Names that hold secrets: *TOKEN*, *SECRET*, *PASSWORD*, *PASSWD*, *_KEY, *CREDENTIAL*,
/// *AUTH* (case-insensitive), or any name in `extra` (a recipe's `[env] secret` list).
[[nodiscard]] bool is_secret_name(std::string_view name, const std::set<std::string>& extra = {});

/// The value to show for variable `name`: "***" for a secret name, else the value with URL
/// credentials redacted.
[[nodiscard]] std::string shown_value(std::string_view name, std::string_view value,
                                      const std::set<std::string>& extra = {});

/// The URL without its userinfo ("https://user:pass@host/x" -> "https://host/x").
[[nodiscard]] std::string strip_credentials(std::string_view url);

/// The secret parts of the URLs in `text`: each password ("user:PASS@") and bare token
/// ("TOKEN@"), as written.
[[nodiscard]] std::vector<std::string> url_credentials(std::string_view text);

/// Secret values shorter than this are not masked in output: "1" or "yes" replaced everywhere
/// would garble it and hide nothing.
inline constexpr size_t k_min_masked = 4;

/// Masks known secret values in a stream of output (a child's), as CI systems do: every
/// occurrence becomes "***", also one split across chunks (the end of a chunk that could begin
/// a secret is held back until the next chunk, or flush()). It matches bytes: give it the text
/// a user will see (escapes stripped: exec::run_process masks after core::TerminalFilter), or
/// "sup\e[0mersecret" passes.
class SecretMask {
public:
    SecretMask() = default;
    /// Values shorter than k_min_masked are dropped; longer ones are tried first. The values
    /// add_secret_values was given so far are masked too.
    explicit SecretMask(std::vector<std::string> secrets);
    /// The same for output that went through a TerminalFilter with `as_text` first: each value
    /// is looked for as that filter shows it (an escape or a control inside a value is gone
    /// there, a byte that is not UTF-8 is U+FFFD), never as raw bytes that could match inside
    /// a character.
    SecretMask(std::vector<std::string> secrets, TerminalFilter::Options as_text);
    [[nodiscard]] bool empty() const { return m_secrets.empty(); }
    /// The next chunk, masked: what can be emitted now.
    [[nodiscard]] std::string feed(std::string_view chunk);
    /// What was held back (the stream ended), masked: a held prefix of a secret is "***" too.
    [[nodiscard]] std::string flush();

private:
    /// Appends `text` masked to `out`; returns how much of it was consumed: all at the end of
    /// the stream, else up to what could still become a secret.
    size_t scan(std::string_view text, bool at_end, std::string& out) const;
    std::vector<std::string> m_secrets;
    std::string m_held;
};

}  // namespace bootstrap::core
