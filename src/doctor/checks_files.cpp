// The files check: every installed file against its distribution's RECORD (path, size, sha256),
// as the wheel spec records them at install time. A file changed or removed since is named, with
// the distribution and the fix (reinstall it). Hashing a big venv takes seconds, so a file that
// matched is remembered by its stat (size, mtime, ctime, inode) in the venv's
// `.bootstrap/verified-files.cache`; a later doctor hashes only what changed since. ctime moves
// on every write and cannot be set back by a user, so an edited file is always hashed again.

#include <sys/stat.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "doctor/checks.hpp"
#include "doctor/checks_util.hpp"
#include "pyenv/record.hpp"

namespace bootstrap::doctor {

namespace {

using recipe::Severity;

constexpr size_t k_shown_files = 5;

/// A file's stat, as the cache keys it.
std::string stamp_of(const struct stat& st) {
    return fmt::format("{} {}.{} {}.{} {}", st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ctim.tv_sec,
                       st.st_ctim.tv_nsec, st.st_ino);
}

/// path -> "STAMP HASH" of files that matched their RECORD hash when last hashed. The file is
/// k_cache_header, then one "STAMP HASH\tPATH" line per file.
class VerifiedCache {
public:
    explicit VerifiedCache(const fs::path& venv) : m_file(venv / ".bootstrap" / "verified-files.cache") {
        std::error_code ec;
        m_writable = fs::is_directory(venv / ".bootstrap", ec);  // bootstrap's venv: never made here
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

/// A console script `bootstrap relocate` (or unpack) rewrote for this venv's path: its shebang
/// names this venv's interpreter, so its RECORD hash (made where the venv was built) differs.
bool relocated_script(const fs::path& file, const fs::path& venv) {
    auto text = core::read_regular_file(file, 1 << 20);
    if (!text || !text->starts_with("#!")) return false;
    const std::string first = text->substr(0, text->find('\n'));
    return first.find((fs::weakly_canonical(venv) / "bin" / "python").string()) != std::string::npos ||
           first.find((venv / "bin" / "python").string()) != std::string::npos;
}

struct DistFiles {
    size_t checked = 0;
    std::vector<std::string> changed;  // "demo_core/x.py (content differs)"
};

/// `dist`'s files against its RECORD; false when interrupted.
bool check_dist(const pyenv::Distribution& dist, const fs::path& site, const fs::path& venv, VerifiedCache& cache,
                DistFiles& out) {
    auto text = core::read_regular_file(dist.dist_info / "RECORD", pyenv::k_max_dist_info_file);
    if (!text) return true;  // the venv check and the snapshot name an unreadable RECORD
    const fs::path root = venv.lexically_normal();
    for (const auto& row : pyenv::parse_record(*text)) {
        if (core::interrupt_signal() != 0) return false;
        if (!row.hash.starts_with("sha256=")) continue;  // RECORD itself, .pyc files: no hash
        const fs::path file = (site / row.path).lexically_normal();
        const auto rel = file.lexically_relative(root);
        if (rel.empty() || *rel.begin() == "..") continue;  // outside the venv: not ours to judge
        ++out.checked;
        struct stat st {};
        if (::lstat(file.c_str(), &st) != 0) {
            out.changed.push_back(row.path + " (missing)");
            continue;
        }
        if (!S_ISREG(st.st_mode)) {
            out.changed.push_back(fmt::format("{} (now {})", row.path, core::describe_file_type(st.st_mode)));
            continue;
        }
        const std::string entry = stamp_of(st) + " " + row.hash;
        if (cache.known(file.string(), entry)) continue;
        if (row.size && *row.size != static_cast<std::uint64_t>(st.st_size)) {
            if (!relocated_script(file, venv))
                out.changed.push_back(fmt::format("{} (size {} bytes, recorded {})", row.path, st.st_size, *row.size));
            continue;
        }
        auto digest = core::sha256_file(file);
        if (!digest) {
            out.changed.push_back(fmt::format("{} (unreadable: {})", row.path, digest.error().message));
            continue;
        }
        if (pyenv::record_hash_of_hex(*digest) == row.hash) cache.remember(file.string(), entry);
        else if (!relocated_script(file, venv)) out.changed.push_back(row.path + " (content differs)");
    }
    return true;
}

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
        DistFiles found;
        if (!check_dist(dist, site, options.venv, cache, found)) {
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
        evidence.push_back((dist.dist_info / "RECORD").string());
        out.push_back(detail::make_finding(
            "installed-files", Severity::error,
            fmt::format("{} {}: {} of its installed files differ{} from its RECORD", dist.name, dist.version,
                        found.changed.size(), found.changed.size() == 1 ? "s" : ""),
            std::move(evidence),
            // The installer's own reinstall: a step re-run finds the requirement satisfied by
            // the metadata and leaves the files as they are.
            detail::install_command(options, name, fmt::format("{}=={}", name, dist.version),
                                    detail::InstallMode::reinstall),
            "a file changed or removed after the install (an edit, a partial copy, a disk fault): the venv "
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
