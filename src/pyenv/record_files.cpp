#include "pyenv/record_files.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/sha256.hpp"
#include "pyenv/record.hpp"

namespace bootstrap::pyenv {

namespace fs = std::filesystem;

namespace {

/// A file's stat as a cache keys it: size, mtime, ctime, inode (ctime moves on every write and
/// cannot be set back by a user, so an edited file never matches an old entry).
std::string stamp_of(const struct stat& st) {
    return fmt::format("{} {}.{} {}.{} {}", st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ctim.tv_sec,
                       st.st_ctim.tv_nsec, st.st_ino);
}

/// A console script `relocate` (or `unpack`) rewrote for this venv's path.
bool relocated_script(const fs::path& file, const fs::path& venv) {
    auto text = core::read_regular_file(file, 1 << 20);
    if (!text || !text->starts_with("#!")) return false;
    const std::string first = text->substr(0, text->find('\n'));
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(venv, ec);
    return (!ec && first.find((canonical / "bin" / "python").string()) != std::string::npos) ||
           first.find((venv / "bin" / "python").string()) != std::string::npos;
}

}  // namespace

RecordFileCheck check_record_files(const Distribution& dist, const fs::path& site, const fs::path& venv,
                                   const RecordFileOptions& options) {
    RecordFileCheck out;
    auto text = core::read_regular_file(dist.dist_info() / "RECORD", k_max_dist_info_file);
    if (!text) {
        out.record_unreadable = true;
        return out;
    }
    const fs::path root = venv.lexically_normal();
    const fs::path& scripts_venv = options.scripts_venv.empty() ? venv : options.scripts_venv;
    for (const auto& row : parse_record(*text)) {
        if (core::interrupt_signal() != 0) {
            out.interrupted = true;
            return out;
        }
        if (!row.hash.starts_with("sha256=")) continue;  // RECORD itself, .pyc files: no hash
        const fs::path file = (site / row.path).lexically_normal();
        const auto rel = file.lexically_relative(root);
        if (rel.empty() || *rel.begin() == "..") continue;  // outside the venv: not ours to judge
        ++out.checked;
        struct stat st {};
        if (::lstat(file.c_str(), &st) != 0) {
            out.changed.push_back(row.path + " (missing)");
            ++out.missing;
            continue;
        }
        if (!S_ISREG(st.st_mode)) {
            out.changed.push_back(fmt::format("{} (now {})", row.path, core::describe_file_type(st.st_mode)));
            continue;
        }
        const auto size = static_cast<std::uint64_t>(st.st_size);
        if (row.size && *row.size != size) {
            if (!relocated_script(file, scripts_venv))
                out.changed.push_back(fmt::format("{} (size {} bytes, recorded {})", row.path, size, *row.size));
            continue;
        }
        if (size > options.hash_up_to) continue;
        const std::string entry = stamp_of(st) + " " + row.hash;
        if (options.known && options.known(file, entry)) continue;
        auto digest = core::sha256_file(file);
        if (!digest) {
            out.changed.push_back(fmt::format("{} (unreadable: {})", row.path, digest.error().message));
            continue;
        }
        if (record_hash_of_hex(*digest) == row.hash) {
            if (options.matched) options.matched(file, entry);
        } else if (!relocated_script(file, scripts_venv)) {
            out.changed.push_back(row.path + " (content differs)");
        }
    }
    return out;
}

}  // namespace bootstrap::pyenv
