#include "pack/carried_sources.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/guarded_paths.hpp"
#include "core/strings.hpp"
#include "pyenv/local_sources.hpp"

namespace bootstrap::pack {

namespace {

bool inside(const fs::path& path, const fs::path& dir) {
    const std::string rel = path.lexically_normal().lexically_relative(dir.lexically_normal()).generic_string();
    return !rel.empty() && !rel.starts_with("..");
}

std::string carried_dir(const std::string& name) { return "src/" + name; }

Status add_tree(const fs::path& root, const std::string& prefix, const fs::path& venv,
                std::vector<archive::Member>& members, size_t& files) {
    std::error_code ec;
    archive::Member top;
    top.name = prefix;
    top.type = archive::Member::Type::directory;
    top.mode = 0755;
    members.push_back(top);
    fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        const fs::path& path = it->path();
        const std::string name = path.filename().string();
        // History and bytecode: bulk no import needs. The venv itself, when it lives in the
        // project it installs (uv's .venv): it is packed as the venv.
        if (name == ".git" || name == "__pycache__" || path == venv) {
            it.disable_recursion_pending();
            continue;
        }
        const std::string rel = path.lexically_relative(root).generic_string();
        if (auto rule = core::credential_file_rule(rel))
            return fail(ErrorCode::usage,
                        fmt::format("refusing to carry {}: it is {}, and a pack is for copying to other nodes",
                                    path.string(), *rule),
                        "move it out of the source tree, or pack without --carry-editable and make the checkout "
                        "available on each node");
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0)
            return fail(ErrorCode::io, fmt::format("cannot carry {}: {}", path.string(), std::strerror(errno)));
        archive::Member m;
        m.name = prefix + "/" + rel;
        m.mode = st.st_mode & 07777;
        if (S_ISDIR(st.st_mode)) {
            m.type = archive::Member::Type::directory;
        } else if (S_ISREG(st.st_mode)) {
            m.source = path;
            ++files;
        } else if (S_ISLNK(st.st_mode)) {
            fs::path target = fs::read_symlink(path, ec);
            if (ec) return fail(ErrorCode::io, fmt::format("cannot read the link {}: {}", path.string(), ec.message()));
            if (target.is_absolute() || !inside((path.parent_path() / target).lexically_normal(), root))
                return fail(ErrorCode::usage,
                            fmt::format("cannot carry {}: the link {} -> {} leaves the source tree", root.string(),
                                        path.string(), target.string()),
                            "make it a relative link inside the tree, or pack without --carry-editable");
            m.type = archive::Member::Type::symlink;
            m.link_target = target.string();
        } else {
            continue;  // sockets, FIFOs: nothing an import reads
        }
        members.push_back(std::move(m));
    }
    if (ec) return fail(ErrorCode::io, fmt::format("cannot list {}: {}", root.string(), ec.message()));
    return {};
}

}  // namespace

Result<std::vector<CarriedSource>> find_carried_sources(const fs::path& venv, const fs::path& site) {
    BS_TRY(auto found, pyenv::find_local_sources(site));
    std::vector<CarriedSource> out;
    for (const auto& s : found) {
        if (inside(s.path, venv)) continue;  // travels with the venv's own tree
        out.push_back({s.name, s.version, s.path.string(), ""});
    }
    return out;
}

Result<std::vector<archive::Member>> source_members(std::vector<CarriedSource>& sources, const fs::path& venv,
                                                    size_t& files) {
    std::vector<archive::Member> members;
    for (auto& s : sources) {
        std::error_code ec;
        if (!fs::is_directory(s.path, ec))
            return fail(ErrorCode::io, fmt::format("cannot carry {} {}: its editable source {} is not a directory",
                                                   s.name, s.version, s.path));
        s.carried = carried_dir(s.name);
        BS_CHECK(add_tree(s.path, s.carried, venv, members, files));
    }
    std::sort(members.begin(), members.end(),
              [](const archive::Member& a, const archive::Member& b) { return a.name < b.name; });
    return members;
}

std::vector<std::string> missing_sources(const std::vector<CarriedSource>& sources) {
    std::vector<std::string> out;
    for (const auto& s : sources) {
        std::error_code ec;
        if (s.carried.empty() && !fs::is_directory(s.path, ec))
            out.push_back(fmt::format("{} {} at {}", s.name, s.version, s.path));
    }
    return out;
}

Result<size_t> place_sources(const std::vector<CarriedSource>& sources, const fs::path& staging, const fs::path& tree,
                             const fs::path& site, const std::string& packed_venv, const fs::path& dest) {
    BS_TRY(auto installed, pyenv::find_local_sources(site));
    size_t repointed = 0;
    for (const auto& install : installed) {
        fs::path to;
        auto carried = std::find_if(sources.begin(), sources.end(), [&](const CarriedSource& s) {
            return !s.carried.empty() && s.path == install.path.string();
        });
        if (carried != sources.end()) {
            // The pack names the directory; it must be one of ours (src/NAME), never a path out.
            if (carried->carried != carried_dir(carried->name) || carried->name.find('/') != std::string::npos ||
                carried->name.empty() || carried->name.front() == '.')
                return fail(ErrorCode::io, fmt::format("refusing the carried source '{}' of {}: not src/NAME",
                                                       carried->carried, carried->name));
            const fs::path from = staging / carried->carried;
            std::error_code ec;
            if (!fs::is_directory(fs::symlink_status(from, ec)))
                return fail(ErrorCode::io, fmt::format("the pack names {} as carrying {} {}, but holds no such "
                                                       "directory",
                                                       carried->carried, carried->name, carried->version));
            const fs::path here = tree / carried->carried;
            if (fs::exists(fs::symlink_status(here, ec)))
                return fail(ErrorCode::io,
                            fmt::format("cannot place the carried source of {}: the venv already holds {}",
                                        carried->name, carried->carried));
            fs::create_directories(here.parent_path(), ec);
            BS_CHECK(core::rename_no_replace(from, here));
            to = dest / carried->carried;
        } else if (inside(install.path, packed_venv) || install.path == fs::path(packed_venv)) {
            to = dest / install.path.lexically_relative(packed_venv);
        } else {
            continue;  // leaned on where it is (missing_sources checked it)
        }
        BS_TRY(auto n, pyenv::repoint_local_source(site, install, to));
        if (n > 0) ++repointed;
    }
    return repointed;
}

}  // namespace bootstrap::pack
