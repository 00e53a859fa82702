// The build cache a run installs from ($BOOTSTRAP_HOME/builds), under the trust model: which
// entries another user could have written, who, and whether a trusted key vouches for them.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "core/cache_trust.hpp"
#include "core/ed25519.hpp"
#include "doctor/checks.hpp"
#include "doctor/checks_util.hpp"

namespace bootstrap::doctor {

std::vector<Finding> check_build_cache(const DoctorOptions& options, CheckSummary* summary) {
    std::vector<Finding> out;
    if (options.bootstrap_home.empty()) {
        detail::summarize(summary, "build cache", "not checked");
        return out;
    }
    const fs::path root = options.bootstrap_home / "builds";
    std::vector<fs::path> entries;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root, ec))
        if (e.is_directory(ec) && !e.path().filename().string().starts_with(".")) entries.push_back(e.path());
    std::sort(entries.begin(), entries.end());
    std::optional<core::TrustedKeys> keys;
    std::optional<Error> keys_error;
    auto trusted = [&]() -> Result<const core::TrustedKeys*> {
        if (!keys && !keys_error) {
            auto loaded = core::load_trusted_keys(options.bootstrap_home, options.trust_env);
            if (loaded) keys = std::move(*loaded);
            else keys_error = loaded.error();
        }
        if (keys_error) return tl::unexpected(*keys_error);
        return &*keys;
    };
    size_t ours = 0;
    size_t vouched = 0;
    size_t refused = 0;
    for (const auto& entry : entries) {
        const std::string key = entry.filename().string();
        auto trust = core::check_entry(entry, key, trusted);
        if (!trust) {
            ++refused;
            out.push_back(
                Finding{"build-cache-trust",
                        recipe::Severity::error,
                        fmt::format("cannot check build cache entry {}: {}", entry.string(), trust.error().message),
                        {},
                        "",
                        trust.error().detail,
                        ""});
            continue;
        }
        if (trust->state == core::EntryTrust::State::ours) {
            ++ours;
            continue;
        }
        if (trust->state == core::EntryTrust::State::trusted) {
            ++vouched;
            out.push_back(Finding{"build-cache-trust",
                                  recipe::Severity::info,
                                  fmt::format("build cache entry {}: {}", entry.string(), trust->describe()),
                                  {},
                                  "",
                                  "",
                                  ""});
            continue;
        }
        ++refused;
        const bool tampered = trust->state == core::EntryTrust::State::bad_signature;
        Finding f{"build-cache-trust",
                  tampered ? recipe::Severity::error : recipe::Severity::warning,
                  fmt::format("build cache entry {}: {}", entry.string(), trust->describe()),
                  {},
                  "an entry another user could have written is installed only when a key you trust signed it; "
                  "bootstrap passes this one over and builds the step here",
                  "",
                  ""};
        if (tampered || trust->state == core::EntryTrust::State::unsigned_entry)
            f.fix = fmt::format("rm -rf {} (the next run that needs it builds it again)", entry.string());
        else
            f.fix = fmt::format(
                "if you trust its signer, add their public key ({}'s `bootstrap cache keygen` "
                "prints it) to {}",
                trust->writer ? trust->writer->who : std::string("the writer"),
                (options.bootstrap_home / "trusted-keys").string());
        out.push_back(std::move(f));
    }
    std::string text = entries.empty()
                           ? "no entries"
                           : fmt::format("{}: {} yours alone, {} signed by a trusted key, {} passed over",
                                         detail::count_of(entries.size(), "entry", "entries"), ours, vouched, refused);
    detail::summarize(summary, "build cache", text);
    return out;
}

}  // namespace bootstrap::doctor
