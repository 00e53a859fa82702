#include "rollback/uv_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/strings.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/name.hpp"
#include "pyenv/record.hpp"
#include "pyenv/uv_cache.hpp"

namespace bootstrap::rollback {

namespace {

/// "<version>-<tags>" for `version`: the name of a wheel's entry in uv's per-package directory
/// (the `.http`, `.lock` and `.msgpack` files beside it are uv's bookkeeping).
bool is_wheel_entry(const std::string& entry, std::string_view version) {
    if (entry.size() <= version.size() + 1 || !entry.starts_with(version) || entry[version.size()] != '-') return false;
    for (const char* suffix : {".http", ".lock", ".msgpack", ".tmp"})
        if (entry.ends_with(suffix)) return false;
    return true;
}

/// The path part of a RECORD row as written.
std::string row_path(const std::string& row) { return pyenv::parse_record_row(row).path; }

/// A RECORD path that stays inside site-packages: relative, no `..` component.
bool stays_inside(std::string_view path) {
    if (path.empty() || path.front() == '/') return false;
    for (const auto& part : core::split(path, '/'))
        if (part == "..") return false;
    return true;
}

/// `name = module:attr.path [extras]` lines of entry_points.txt's [console_scripts] and
/// [gui_scripts] sections: {name, module, attr path}. False for a line it cannot read.
struct EntryPoint {
    std::string name, module, attr;
};

bool script_entry_points(std::string_view text, std::vector<EntryPoint>& out) {
    bool in_scripts = false;
    for (const auto& raw : core::split(text, '\n')) {
        std::string_view line = core::trim(raw);
        if (line.empty() || line.front() == '#' || line.front() == ';') continue;
        if (line.front() == '[') {
            in_scripts = line == "[console_scripts]" || line == "[gui_scripts]";
            continue;
        }
        if (!in_scripts) continue;
        size_t eq = line.find('=');
        if (eq == std::string_view::npos) return false;
        std::string_view name = core::trim(line.substr(0, eq));
        std::string_view value = core::trim(line.substr(eq + 1));
        if (size_t bracket = value.find('['); bracket != std::string_view::npos)
            value = core::trim(value.substr(0, bracket));
        size_t colon = value.find(':');
        if (name.empty() || name.find('/') != std::string_view::npos || colon == std::string_view::npos) return false;
        out.push_back({std::string(name), std::string(core::trim(value.substr(0, colon))),
                       std::string(core::trim(value.substr(colon + 1)))});
    }
    return true;
}

/// The script uv writes for an entry point on Linux.
std::string uv_script(const fs::path& python, const EntryPoint& e) {
    const std::string object = e.attr.substr(0, e.attr.find('.'));
    return fmt::format(
        "#!{}\n# -*- coding: utf-8 -*-\nimport sys\nfrom {} import {}\nif __name__ == \"__main__\":\n"
        "    if sys.argv[0].endswith(\"-script.pyw\"):\n        sys.argv[0] = sys.argv[0][:-11]\n"
        "    elif sys.argv[0].endswith(\".exe\"):\n        sys.argv[0] = sys.argv[0][:-4]\n    sys.exit({}())\n",
        python.string(), e.module, object, e.attr);
}

}  // namespace

std::optional<fs::path> uv_cache_dir(const exec::EnvMap& env) { return pyenv::uv_cache_dir(env); }

std::vector<fs::path> cached_wheels(const fs::path& cache, std::string_view normalized_name, std::string_view version) {
    std::vector<fs::path> out;
    for (const auto& dir : pyenv::uv_wheel_dirs(cache, normalized_name)) {
        std::error_code inner;
        if (!fs::is_directory(dir, inner)) continue;
        for (const auto& entry : fs::directory_iterator(dir, inner)) {
            if (!is_wheel_entry(entry.path().filename().string(), version)) continue;
            std::error_code resolve;
            fs::path target = fs::canonical(entry.path(), resolve);
            if (!resolve && fs::is_directory(target, resolve)) out.push_back(std::move(target));
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

Result<std::optional<CachedRestore>> plan_cached_restore(const fs::path& wheel_dir, const manifest::Package& target,
                                                         const RestoreTarget& where, std::string& why) {
    auto refuse = [&](std::string reason) -> Result<std::optional<CachedRestore>> {
        why = std::move(reason);
        return std::optional<CachedRestore>{};
    };
    // uv writes INSTALLER "uv"; another installer's RECORD rows (and scripts) are not this.
    if (target.installer != "uv") return refuse(fmt::format("installed by '{}', not uv", target.installer));
    if (target.record_sha256.empty()) return refuse("the target records no RECORD digest");

    CachedRestore restore;
    restore.wheel_dir = wheel_dir;
    restore.requested = target.requested;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(wheel_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.ends_with(".dist-info")) continue;
        if (pyenv::normalize_name(name.substr(0, name.find('-'))) != target.name) continue;
        if (!restore.dist_info.empty()) return refuse("the wheel holds two dist-info directories for it");
        restore.dist_info = name;
    }
    if (ec) return fail(ErrorCode::io, fmt::format("cannot read {}: {}", wheel_dir.string(), ec.message()));
    if (restore.dist_info.empty()) return refuse("no dist-info for it in the wheel");
    const fs::path dist_info = wheel_dir / restore.dist_info;

    // Console and GUI scripts are the installer's, naming the venv's interpreter.
    std::vector<EntryPoint> entry_points;
    if (std::error_code missing; fs::exists(dist_info / "entry_points.txt", missing)) {
        // Bounded like every dist-info file: a damaged cache must not exhaust the rollback.
        auto text = core::read_regular_file(dist_info / "entry_points.txt", pyenv::k_max_dist_info_file);
        if (!text) return refuse(text.error().message);
        if (!script_entry_points(*text, entry_points))
            return refuse("its entry_points.txt has a line this cannot read");
    }
    BS_TRY(auto record, core::read_regular_file(dist_info / "RECORD", pyenv::k_max_dist_info_file));

    const std::string prefix = restore.dist_info + "/";
    const std::string data_prefix = restore.dist_info.substr(0, restore.dist_info.size() - 10) + ".data/";
    std::vector<std::pair<std::string, std::string>> rows;  // {path, row as written}
    for (const auto& row : pyenv::RecordText::parse(record).rows) {
        std::string path = row_path(row);
        if (path.empty()) continue;
        if (path == prefix + "RECORD" || path == prefix + "INSTALLER" || path == prefix + "REQUESTED") continue;
        if (!stays_inside(path)) return refuse(fmt::format("its RECORD names {} outside site-packages", path));
        if (path.starts_with(data_prefix))
            return refuse("it has a .data directory (the installer moves its files out of site-packages)");
        struct stat st {};
        if (::lstat((wheel_dir / path).c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            return refuse(fmt::format("{} is missing from the cached wheel", path));
        restore.files.push_back(path);
        rows.emplace_back(std::move(path), row);
    }
    const std::string to_scripts = where.scripts.lexically_relative(where.site_packages).string();
    for (const auto& e : entry_points) {
        std::string content = uv_script(where.python, e);
        std::string path = to_scripts + "/" + e.name;
        rows.emplace_back(path, path + "," + pyenv::record_hash(content) + "," + std::to_string(content.size()));
        restore.scripts.emplace_back(e.name, std::move(content));
    }
    rows.emplace_back(prefix + "INSTALLER", prefix + "INSTALLER," + pyenv::record_hash("uv") + ",2");
    if (restore.requested)
        rows.emplace_back(prefix + "REQUESTED", prefix + "REQUESTED," + pyenv::record_hash("") + ",0");
    rows.emplace_back(prefix + "RECORD", prefix + "RECORD,,");
    std::sort(rows.begin(), rows.end());
    for (const auto& [path, row] : rows) {
        restore.record_text += row;
        restore.record_text += '\n';
    }
    if (pyenv::record_text_digest(restore.record_text) != target.record_sha256)
        return refuse("the RECORD it would write differs from the target's");
    return std::optional<CachedRestore>(std::move(restore));
}

Status install_cached(const CachedRestore& restore, const RestoreTarget& where) {
    const fs::path& site_packages = where.site_packages;
    for (const auto& rel : restore.files) {
        const fs::path from = restore.wheel_dir / rel;
        const fs::path to = site_packages / rel;
        std::error_code ec;
        fs::create_directories(to.parent_path(), ec);
        if (ec)
            return fail(ErrorCode::io, fmt::format("cannot create {}: {}", to.parent_path().string(), ec.message()));
        // Linked, as uv links from its cache on Linux; copied across filesystems.
        if (::unlink(to.c_str()) != 0 && errno != ENOENT)
            return fail(ErrorCode::io, fmt::format("cannot replace {}: {}", to.string(), std::strerror(errno)));
        if (where.hardlink && ::link(from.c_str(), to.c_str()) == 0) continue;
        if (!fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec) || ec)
            return fail(ErrorCode::io, fmt::format("cannot copy {} to {}: {}", from.string(), to.string(),
                                                   ec ? ec.message() : "failed"));
    }
    for (const auto& [name, content] : restore.scripts)
        BS_CHECK(core::write_file_atomic(where.scripts / name, content, 0755, core::Durability::unsynced));
    const fs::path dist_info = site_packages / restore.dist_info;
    BS_CHECK(core::write_file_atomic(dist_info / "INSTALLER", "uv", 0644, core::Durability::unsynced));
    if (restore.requested)
        BS_CHECK(core::write_file_atomic(dist_info / "REQUESTED", "", 0644, core::Durability::unsynced));
    return core::write_file_atomic(dist_info / "RECORD", restore.record_text, 0644, core::Durability::unsynced);
}

}  // namespace bootstrap::rollback
