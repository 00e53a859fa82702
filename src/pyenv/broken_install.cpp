#include "pyenv/broken_install.hpp"
#include "pyenv/record.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/strings.hpp"

namespace bootstrap::pyenv {

namespace fs = std::filesystem;

namespace {

/// The path field of a RECORD row.
std::string record_path(std::string_view row) { return parse_record_row(row).path; }

/// Is `p` (lexically normal, absolute) `root` or below it?
bool within(const fs::path& p, const fs::path& root) {
    auto rel = p.lexically_relative(root);
    return !rel.empty() && *rel.begin() != ".." && rel.is_relative();
}

class Remover {
public:
    explicit Remover(fs::path site) : m_site(std::move(site)) {}

    /// Remove the file at `rel` (a RECORD path) when it lies inside site-packages; count it in
    /// `left_outside` when it does not.
    Status remove_row(const std::string& rel, const fs::path& dist_info, BrokenRemoval& out) {
        if (rel.empty()) return {};
        fs::path path = fs::path(rel);
        if (path.is_absolute()) {
            ++out.left_outside;
            return {};
        }
        path = (m_site / path).lexically_normal();
        if (!within(path, m_site) || path == m_site) {
            ++out.left_outside;
            return {};
        }
        if (within(path, dist_info)) return {};  // goes with the dist-info
        // The directory it is in must really be inside site-packages (no symlink out of it).
        std::error_code ec;
        fs::path parent = fs::weakly_canonical(path.parent_path(), ec);
        if (ec || !(parent == m_site || within(parent, m_site))) {
            ++out.left_outside;
            return {};
        }
        fs::path file = parent / path.filename();
        struct stat st {};
        if (::lstat(file.c_str(), &st) != 0) {  // already gone (a copy cut short): its directory may be empty
            m_dirs.insert(parent);
            return {};
        }
        if (S_ISDIR(st.st_mode)) return {};  // RECORD lists files, not directories
        if (::unlink(file.c_str()) != 0)
            return fail(ErrorCode::io, fmt::format("cannot remove {}: {}", file.string(), std::strerror(errno)));
        ++out.files;
        m_dirs.insert(parent);
        if (file.extension() == ".py") remove_bytecode(parent, file.stem().string());
        return {};
    }

    /// Directories the removals left empty, deepest first, up to site-packages.
    void prune() {
        std::vector<fs::path> dirs(m_dirs.begin(), m_dirs.end());
        std::sort(dirs.begin(), dirs.end(),
                  [](const fs::path& a, const fs::path& b) { return a.string().size() > b.string().size(); });
        for (fs::path dir : dirs) {
            while (dir != m_site && within(dir, m_site)) {
                std::error_code ec;
                if (!fs::is_empty(dir, ec) || ec || !fs::remove(dir, ec)) break;
                dir = dir.parent_path();
            }
        }
    }

private:
    /// `__pycache__/NAME.cpython-311.pyc` and friends of a removed `NAME.py`.
    void remove_bytecode(const fs::path& dir, const std::string& stem) {
        const fs::path cache = dir / "__pycache__";
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(cache, ec)) {
            const std::string name = e.path().filename().string();
            if (core::starts_with(name, stem + ".") && name.ends_with(".pyc")) fs::remove(e.path(), ec);
        }
        m_dirs.insert(cache);
    }

    fs::path m_site;
    std::set<fs::path> m_dirs;
};

}  // namespace

std::vector<fs::path> sites_of(const InterpreterFacts& facts) {
    std::vector<fs::path> sites{facts.purelib};
    std::error_code ec;
    if (!facts.platlib.empty() && facts.platlib != facts.purelib && fs::exists(facts.platlib, ec))
        sites.push_back(facts.platlib);
    return sites;
}

Result<std::vector<Distribution>> find_broken_installs(const InterpreterFacts& facts) {
    std::vector<Distribution> out;
    for (const auto& site : sites_of(facts)) {
        BS_TRY(auto dists, scan_site_packages(site, {}, /*include_broken=*/true));
        for (auto& [name, dist] : dists)
            if (!dist.broken.empty()) out.push_back(std::move(dist));
    }
    return out;
}

Result<BrokenRemoval> remove_install(const fs::path& site_packages, const Distribution& dist) {
    std::error_code ec;
    const fs::path site = fs::weakly_canonical(site_packages, ec);
    if (ec) return fail(ErrorCode::io, fmt::format("cannot resolve {}: {}", site_packages.string(), ec.message()));
    // The dist-info must be an entry of site-packages itself.
    const fs::path dist_info = site / dist.dist_info().filename();
    std::error_code parent_ec;
    if (dist.dist_info().filename().empty() ||
        fs::weakly_canonical(dist.dist_info().parent_path(), parent_ec) != site || parent_ec)
        return fail(ErrorCode::internal,
                    fmt::format("{} is not in {}", dist.dist_info().string(), site_packages.string()));
    BrokenRemoval out;
    Remover remover(site);
    // A RECORD that cannot be read leaves only the dist-info to remove: nothing says which
    // files are the package's.
    if (auto record = core::read_regular_file(dist_info / "RECORD", k_max_dist_info_file)) {
        for (const auto& line : core::split(*record, '\n')) {
            std::string_view row = line;
            if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
            BS_CHECK(remover.remove_row(record_path(row), dist_info, out));
        }
    }
    struct stat st {};
    if (::lstat(dist_info.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            fs::remove(dist_info, ec);  // the link only, never what it points to
        } else {
            fs::remove_all(dist_info, ec);
        }
        if (ec) return fail(ErrorCode::io, fmt::format("cannot remove {}: {}", dist_info.string(), ec.message()));
    }
    remover.prune();
    return out;
}

Result<std::vector<std::string>> remove_broken_installs(const InterpreterFacts& facts) {
    std::vector<std::string> notes;
    for (const auto& site : sites_of(facts)) {
        BS_TRY(auto dists, scan_site_packages(site, {}, /*include_broken=*/true));
        for (const auto& [name, dist] : dists) {
            if (dist.broken.empty()) continue;
            BS_TRY(auto removed, remove_install(site, dist));
            std::string note = fmt::format(
                "removed the broken install of {} {} ({}): its dist-info {} and the {} file(s) "
                "its RECORD lists",
                dist.name, dist.version, dist.broken, dist.dist_info().filename().string(), removed.files);
            if (removed.left_outside > 0)
                note += fmt::format(" ({} outside site-packages left alone)", removed.left_outside);
            notes.push_back(std::move(note));
        }
    }
    return notes;
}

Result<std::vector<IncompleteInstall>> find_incomplete_installs(const InterpreterFacts& facts, const fs::path& venv) {
    std::vector<IncompleteInstall> out;
    RecordFileOptions options;
    options.hash_up_to = 0;  // sizes only: what a copy cut short changes
    for (const auto& site : sites_of(facts)) {
        BS_TRY(auto dists, scan_site_packages(site));
        for (auto& [name, dist] : dists) {
            auto check = check_record_files(dist, site, venv, options);
            const bool stop = check.interrupted;
            std::erase_if(check.changed, [](const std::string& line) { return line.ends_with("(content differs)"); });
            // A dist-info copied before its RECORD: nothing says which files it has.
            if (check.record_unreadable) check.changed.push_back("RECORD (missing or unreadable)");
            if (!check.changed.empty()) out.push_back(IncompleteInstall{std::move(dist), site, std::move(check)});
            if (stop) return out;
        }
    }
    return out;
}

Result<std::vector<std::string>> remove_incomplete_installs(const InterpreterFacts& facts, const fs::path& venv) {
    std::vector<std::string> notes;
    BS_TRY(auto found, find_incomplete_installs(facts, venv));
    for (const auto& bad : found) {
        BS_TRY(auto removed, remove_install(bad.site, bad.dist));
        const auto& c = bad.check;
        std::string what = c.record_unreadable ? std::string("its RECORD is missing or unreadable")
                           : c.missing > 0 ? fmt::format("{} of the {} files its RECORD names {} missing", c.missing,
                                                         c.checked, c.missing == 1 ? "is" : "are")
                                           : fmt::format("{} of the {} files its RECORD names differ{}",
                                                         c.changed.size(), c.checked, c.changed.size() == 1 ? "s" : "");
        if (!c.record_unreadable && c.missing > 0 && c.changed.size() > c.missing)
            what += fmt::format(", {} more differ", c.changed.size() - c.missing);
        if (!c.record_unreadable) what += ", e.g. " + c.changed.front();
        std::string note =
            fmt::format("removed the incomplete install of {} {} ({}): its dist-info and the {} file(s) it had",
                        bad.dist.name, bad.dist.version, what, removed.files);
        if (removed.left_outside > 0)
            note += fmt::format(" ({} outside site-packages left alone)", removed.left_outside);
        notes.push_back(std::move(note));
    }
    return notes;
}

Result<size_t> remove_unclaimed_files(const fs::path& site_packages, std::string_view record_text) {
    std::error_code ec;
    const fs::path site = fs::weakly_canonical(site_packages, ec);
    if (ec) return fail(ErrorCode::io, fmt::format("cannot resolve {}: {}", site_packages.string(), ec.message()));
    std::set<fs::path> claimed;
    BS_TRY(auto dists, scan_site_packages(site, {}, /*include_broken=*/true));
    for (const auto& [name, dist] : dists) {
        auto record = core::read_regular_file(dist.dist_info() / "RECORD", k_max_dist_info_file);
        if (!record) continue;
        for (const auto& row : parse_record(*record)) claimed.insert((site / row.path).lexically_normal());
    }
    BrokenRemoval out;
    Remover remover(site);
    const fs::path none = site / ".no-dist-info";
    for (const auto& row : parse_record(record_text)) {
        if (row.path.empty() || fs::path(row.path).is_absolute()) continue;
        const fs::path file = (site / row.path).lexically_normal();
        // The dist-info's own files went with it; what a present distribution lists is its own.
        if (claimed.count(file) || file.parent_path().extension() == ".dist-info") continue;
        BS_CHECK(remover.remove_row(row.path, none, out));
    }
    remover.prune();
    return out.files;
}

}  // namespace bootstrap::pyenv
