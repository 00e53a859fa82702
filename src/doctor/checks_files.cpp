// The files check: every installed file against its distribution's RECORD (path, size, sha256),
// as the wheel spec records them at install time. A file changed or removed since is named, with
// the distribution and the fix (reinstall it). Hashing a big venv takes seconds, so a file that
// matched is remembered by its stat (size, mtime, ctime, inode) in the venv's
// `.bootstrap/verified-files.cache`; a later doctor hashes only what changed since. ctime moves
// on every write and cannot be set back by a user, so an edited file is always hashed again.

#include <algorithm>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/strings.hpp"
#include "doctor/checks.hpp"
#include "doctor/checks_util.hpp"
#include "pyenv/record_files.hpp"
#include "state/layout.hpp"

namespace bootstrap::doctor {

namespace {

using recipe::Severity;

constexpr size_t k_shown_files = 5;

/// path -> "STAMP HASH" of files that matched their RECORD hash when last hashed. The file is
/// k_cache_header, then one "STAMP HASH\tPATH" line per file.
class VerifiedCache {
public:
    explicit VerifiedCache(const fs::path& venv) : m_file(state::Layout(venv).verified_files_cache()) {
        std::error_code ec;
        m_writable = state::Layout(venv).exists();  // bootstrap's venv: never made here
        auto text = core::read_regular_file(m_file, 256ull << 20);
        if (!text || !text->starts_with(k_cache_header)) return;
        for (const auto& line : core::split(std::string_view(*text).substr(k_cache_header.size()), '\n')) {
            const auto tab = line.find('\t');
            if (tab != std::string::npos) m_old.emplace(line.substr(tab + 1), line.substr(0, tab));
        }
    }

    [[nodiscard]] bool known(const std::string& path, const std::string& entry) {
        auto it = m_old.find(path);
        if (it == m_old.end() || it->second != entry) return false;
        m_new[path] = entry;
        return true;
    }
    void remember(const std::string& path, std::string entry) {
        if (path.find_first_of("\t\n") == std::string::npos) m_new[path] = std::move(entry);
    }

    /// Only a speed-up: a cache that cannot be written means hashing again next time.
    void save() const {
        if (!m_writable || m_new == m_old) return;
        std::string text(k_cache_header);
        for (const auto& [path, entry] : m_new) text += entry + "\t" + path + "\n";
        (void)core::write_file_atomic(m_file, text);
    }

private:
    static constexpr std::string_view k_cache_header = "bootstrap verified-files 1\n";
    fs::path m_file;
    bool m_writable = false;
    std::map<std::string, std::string> m_old;
    std::map<std::string, std::string> m_new;
};

}  // namespace

std::vector<Finding> check_installed_files(const DoctorOptions& options, CheckSummary* summary) {
    std::vector<Finding> out;
    if (!options.check_files) {
        detail::summarize(summary, "files", "not checked here (`bootstrap doctor` checks them against their RECORD)");
        return out;
    }
    const fs::path site = find_site_packages(options.venv);
    if (site.empty()) {
        detail::summarize(summary, "files", "not checked (no site-packages)");
        return out;
    }
    auto dists = pyenv::scan_site_packages(site);
    if (!dists) {
        detail::summarize(summary, "files", "not checked: " + dists.error().message);
        return out;
    }
    VerifiedCache cache(options.venv);
    size_t files = 0, changed = 0;
    for (const auto& [name, dist] : *dists) {
        pyenv::RecordFileOptions check;
        check.known = [&](const fs::path& file, const std::string& entry) { return cache.known(file.string(), entry); };
        check.matched = [&](const fs::path& file, std::string entry) {
            cache.remember(file.string(), std::move(entry));
        };
        auto found = pyenv::check_record_files(dist, site, options.venv, check);
        if (found.interrupted) {
            detail::summarize(summary, "files", "interrupted");
            return out;
        }
        files += found.checked;
        if (found.changed.empty()) continue;
        changed += found.changed.size();
        std::vector<std::string> evidence(found.changed.begin(),
                                          found.changed.begin() + std::min(found.changed.size(), k_shown_files));
        if (found.changed.size() > k_shown_files)
            evidence.push_back(fmt::format("and {} more", found.changed.size() - k_shown_files));
        evidence.push_back((dist.dist_info() / "RECORD").string());
        out.push_back(detail::make_finding(
            "installed-files", Severity::error,
            found.missing == 0
                ? fmt::format("{} {}: {} of its installed files differ{} from its RECORD", dist.name, dist.version,
                              found.changed.size(), found.changed.size() == 1 ? "s" : "")
                // An install cut short (Ctrl-C or a killed job while the installer copied files).
                : fmt::format("{} {} is a broken install: {} of the {} files its RECORD names {} missing{}", dist.name,
                              dist.version, found.missing, found.checked, found.missing == 1 ? "is" : "are",
                              found.changed.size() > found.missing
                                  ? fmt::format(" and {} more differ", found.changed.size() - found.missing)
                                  : std::string()),
            std::move(evidence),
            // The installer's own reinstall: a step re-run finds the requirement satisfied by
            // the metadata and leaves the files as they are.
            detail::install_command(options, name, fmt::format("{}=={}", name, dist.version),
                                    detail::InstallMode::reinstall),
            "a file changed or removed after the install (an edit, an install cut short by Ctrl-C or a killed "
            "job, a disk fault): the venv "
            "is no longer what its manifest records, and a module may not import or may behave differently"));
    }
    cache.save();
    detail::summarize(summary, "files",
                      changed == 0 ? fmt::format("{} of {} match their RECORD hashes",
                                                 detail::count_of(files, "installed file", "installed files"),
                                                 detail::count_of(dists->size(), "distribution", "distributions"))
                                   : fmt::format("{} of {} installed files differ from their RECORD", changed, files));
    return out;
}

}  // namespace bootstrap::doctor
