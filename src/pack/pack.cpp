#include "pack/pack.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "archive/archive.hpp"
#include "core/fs.hpp"
#include "core/json_fields.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "engine/run_manifests.hpp"
#include "exec/environment.hpp"
#include "manifest/manifest.hpp"
#include "manifest/snapshot.hpp"
#include "pyenv/interpreter.hpp"
#include "pyenv/record_files.hpp"
#include "pyenv/relocate.hpp"
#include "state/layout.hpp"
#include "state/venv_lock.hpp"

namespace bootstrap::pack {

namespace {

constexpr int k_pack_schema = 2;  // the newest this bootstrap reads
// Written when the venv has no editable install outside it: such packs stay as they were.
constexpr int k_pack_schema_plain = 1;
constexpr const char* k_pack_json = "bootstrap-pack.json";
constexpr const char* k_manifest_json = "manifest.json";
constexpr const char* k_tree = "venv";

/// What a pack says about itself (bootstrap-pack.json).
struct PackInfo {
    std::string venv;  // where it was packed from
    std::string python_version;
    std::string python_home;                   // pyvenv.cfg's home
    std::map<std::string, std::string> links;  // venv-relative name -> absolute target
    std::vector<CarriedSource> local_sources;  // schema 2
};

Result<std::vector<archive::Member>> tree_members(const fs::path& venv, PackInfo& info) {
    std::vector<archive::Member> members;
    std::error_code ec;
    fs::recursive_directory_iterator it(venv, fs::directory_options::none, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        const fs::path& path = it->path();
        const std::string rel = path.lexically_relative(venv).generic_string();
        if (state::is_host_local_state(rel)) {  // the lock, run logs, stat-keyed caches, temp files
            it.disable_recursion_pending();
            continue;
        }
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0)
            return fail(ErrorCode::io, fmt::format("cannot pack {}: {}", path.string(), std::strerror(errno)));
        archive::Member m;
        m.name = std::string(k_tree) + "/" + rel;
        m.mode = st.st_mode & 07777;
        if (S_ISDIR(st.st_mode)) {
            m.type = archive::Member::Type::directory;
        } else if (S_ISREG(st.st_mode)) {
            m.source = path;
        } else if (S_ISLNK(st.st_mode)) {
            fs::path target = fs::read_symlink(path, ec);
            if (ec) return fail(ErrorCode::io, fmt::format("cannot read the link {}: {}", path.string(), ec.message()));
            // A relative link that stays inside the venv travels as a link; one that leaves it
            // (bin/python -> /usr/bin/python3.11) names a file of this host: recorded, checked
            // and recreated by unpack.
            fs::path resolved = target.is_absolute() ? target : (path.parent_path() / target).lexically_normal();
            const std::string inside = resolved.lexically_relative(venv).generic_string();
            if (!target.is_absolute() && !inside.empty() && !core::starts_with(inside, "..")) {
                m.type = archive::Member::Type::symlink;
                m.link_target = target.string();
            } else {
                info.links[rel] = resolved.string();
                continue;
            }
        } else {
            return fail(ErrorCode::io, fmt::format("cannot pack {}: it is {} (a venv holds files, directories "
                                                   "and links)",
                                                   path.string(), core::describe_file_type(st.st_mode)));
        }
        members.push_back(std::move(m));
    }
    if (ec) return fail(ErrorCode::io, fmt::format("cannot list {}: {}", venv.string(), ec.message()));
    std::sort(members.begin(), members.end(),
              [](const archive::Member& a, const archive::Member& b) { return a.name < b.name; });
    return members;
}

std::string info_json(const PackInfo& info) {
    nlohmann::json j{{"schema", info.local_sources.empty() ? k_pack_schema_plain : k_pack_schema},
                     {"kind", "bootstrap-pack"},
                     {"venv", info.venv},
                     {"python", {{"version", info.python_version}, {"home", info.python_home}}},
                     {"links", info.links}};
    if (!info.local_sources.empty()) {
        auto& list = j["local_sources"] = nlohmann::json::array();
        for (const auto& s : info.local_sources)
            list.push_back({{"name", s.name}, {"version", s.version}, {"path", s.path}, {"carried", s.carried}});
    }
    return j.dump(2) + "\n";
}

Result<PackInfo> read_info(const fs::path& file) {
    BS_TRY(std::string text, core::read_regular_file(file, 1 << 20));
    return core::read_json(text, file.string(), "pack description", [&](const core::JsonFields& j) -> Result<PackInfo> {
        if (j.str("kind") != "bootstrap-pack") j.invalid("kind", "is not \"bootstrap-pack\"");
        if (j.integer("schema") > k_pack_schema)
            return fail(ErrorCode::io, fmt::format("{}: pack schema {} is newer than this bootstrap understands ({}); "
                                                   "upgrade bootstrap",
                                                   file.string(), j.integer("schema"), k_pack_schema));
        PackInfo info;
        info.venv = j.str("venv");
        if (auto python = j.object("python")) {
            info.python_version = python->str("version");
            info.python_home = python->str("home");
        }
        info.links = j.string_map("links");
        if (const auto* list = j.find("local_sources")) {
            if (!list->is_array()) j.invalid("local_sources", "expected an array");
            for (size_t i = 0; i < list->size(); ++i) {
                const core::JsonFields s((*list)[i], fmt::format("{}[{}]", j.child("local_sources"), i));
                CarriedSource c{s.str("name"), s.str("version"), s.str("path"), s.str("carried")};
                if (c.name.empty() || c.path.empty() || c.path.front() != '/')
                    j.invalid("local_sources", "has an entry without a name or an absolute path");
                info.local_sources.push_back(std::move(c));
            }
        }
        if (info.venv.empty() || info.venv.front() != '/') j.invalid("venv", "is not an absolute path");
        return info;
    });
}

Result<pyenv::InterpreterFacts> python_of(const fs::path& venv, bool update_cache) {
    return pyenv::venv_facts(venv, exec::compose_environment(exec::current_environment(), {}, {}), update_cache);
}

Result<manifest::Manifest> snapshot_of(const fs::path& venv, const pyenv::InterpreterFacts& python,
                                       const std::optional<manifest::Host>& host) {
    manifest::SnapshotRequest request;
    request.venv = venv;
    request.python = python;
    request.env = exec::current_environment();
    request.host = host;
    return manifest::take_snapshot(request);
}

/// A link name from a pack: relative, no "." or ".." components, below a real directory of the
/// tree (never through another link).
Status check_link_name(const fs::path& tree, const std::string& name, const fs::path& pack) {
    auto bad = [&](const char* why) {
        return fail(ErrorCode::io, fmt::format("refusing the link '{}' in {}: {}", name, pack.string(), why));
    };
    if (name.empty() || name.front() == '/') return bad("not a relative path");
    fs::path dir = tree;
    auto parts = core::split(name, '/');
    for (size_t i = 0; i < parts.size(); ++i) {
        if (parts[i].empty() || parts[i] == "." || parts[i] == "..") return bad("a '.', '..' or empty component");
        if (i + 1 == parts.size()) break;
        dir /= parts[i];
        struct stat st {};
        if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return bad("its directory is not in the pack");
    }
    std::error_code ec;
    if (fs::exists(fs::symlink_status(tree / name, ec))) return bad("the pack also holds a file there");
    return {};
}

/// Where a recorded link points on this host: into the unpacked venv when it pointed into the
/// packed one, else the same absolute path.
std::string link_target_here(const std::string& target, const std::string& from, const fs::path& dest) {
    if (target == from) return dest.string();
    if (core::starts_with(target, from + "/")) return dest.string() + target.substr(from.size());
    return target;
}

Status verify_against(const manifest::Manifest& packed, const manifest::Manifest& here, const fs::path& pack) {
    std::vector<std::string> wrong;
    for (const auto& [name, p] : packed.packages) {
        auto it = here.packages.find(name);
        if (it == here.packages.end()) wrong.push_back(fmt::format("{} {} is missing", name, p.version));
        else if (it->second.version != p.version)
            wrong.push_back(fmt::format("{} is {}, the manifest says {}", name, it->second.version, p.version));
        else if (it->second.record_sha256 != p.record_sha256)
            wrong.push_back(fmt::format("{} {}: RECORD differs from the packed one", name, p.version));
    }
    for (const auto& [name, p] : here.packages)
        if (!packed.packages.count(name)) wrong.push_back(fmt::format("{} {} is not in the manifest", name, p.version));
    if (wrong.empty()) return {};
    return fail(ErrorCode::io, fmt::format("the venv unpacked from {} does not match its manifest: {}", pack.string(),
                                           core::join(wrong, "; ")));
}

/// Every installed file of the unpacked `tree` against its RECORD, as doctor's files check
/// reads them: a manifest holds each RECORD's digest, not the files', so a file changed in the
/// pack after `pack` wrote it passes verify_against. Console scripts relocated for `dest` are
/// expected to differ. Returns how many files were hashed.
Result<size_t> verify_files(const fs::path& tree, const pyenv::InterpreterFacts& python, const fs::path& dest,
                            const fs::path& pack) {
    BS_TRY(auto dists, pyenv::scan_venv_packages(python));
    pyenv::RecordFileOptions options;
    options.scripts_venv = dest;
    size_t checked = 0;
    std::vector<std::string> wrong;
    for (const auto& [name, dist] : dists) {
        auto found = pyenv::check_record_files(dist, dist.dist_info().parent_path(), tree, options);
        if (found.interrupted)
            return fail(ErrorCode::interrupted, fmt::format("interrupted while verifying {}", pack.string()));
        checked += found.checked;
        for (const auto& file : found.changed) wrong.push_back(fmt::format("{} {}: {}", name, dist.version, file));
    }
    if (wrong.empty()) return checked;
    return fail(ErrorCode::io,
                fmt::format("the venv unpacked from {} does not match its manifest: {} installed file{} differ{} "
                            "from {} RECORD: {}",
                            pack.string(), wrong.size(), wrong.size() == 1 ? "" : "s", wrong.size() == 1 ? "s" : "",
                            wrong.size() == 1 ? "its" : "their", core::join(wrong, "; ")),
                "the pack changed after `bootstrap pack` wrote it (an edit, a damaged copy; compare its sha256 "
                "with the one `pack` printed), or the packed venv had changed files (`bootstrap doctor --venv "
                "VENV` names them there): pack the venv again, once doctor finds no changed file");
}

}  // namespace

Result<PackResult> pack_venv(const fs::path& venv_in, const fs::path& out, const PackOptions& options) {
    const fs::path venv = fs::absolute(venv_in).lexically_normal();
    BS_TRY(auto cfg, pyenv::read_pyvenv_cfg(venv));
    BS_TRY(auto lock, state::VenvLock::acquire(venv, options.lock_timeout));
    BS_TRY(auto python, python_of(venv, true));
    BS_TRY(auto m, snapshot_of(venv, python, std::nullopt));
    (void)engine::annotate_from_records(m, venv);

    PackInfo info;
    info.venv = venv.string();
    info.python_version = m.python.version;
    if (auto home = cfg.find("home"); home != cfg.end()) info.python_home = home->second;
    BS_TRY(auto tree, tree_members(venv, info));
    BS_TRY(info.local_sources, find_carried_sources(venv, python.purelib));
    size_t carried_files = 0;
    std::vector<archive::Member> carried;
    if (options.carry_editable) {
        BS_TRY(carried, source_members(info.local_sources, venv, carried_files));
    }

    std::vector<archive::Member> members;
    members.reserve(tree.size() + carried.size() + 2);
    archive::Member head;
    head.name = k_pack_json;
    head.data = info_json(info);
    members.push_back(head);
    archive::Member manifest_member;
    manifest_member.name = k_manifest_json;
    manifest_member.data = manifest::to_json(m);
    members.push_back(manifest_member);
    PackResult result;
    for (auto& c : carried) members.push_back(std::move(c));  // "src/..." sorts before "venv/..."
    for (auto& t : tree) {
        if (t.type == archive::Member::Type::file) ++result.files;
        members.push_back(std::move(t));
    }
    archive::WriteOptions write;
    write.mtime = options.mtime;
    // A pack killed midway (SIGKILL, an OOM kill) left `OUT.tmp-<pid>-*`: gone once its pid is.
    const std::string out_name = out.filename().string();
    (void)core::remove_dead_leftovers(fs::absolute(out).parent_path(), [&](std::string_view name) {
        return name.starts_with(out_name + ".tmp-") ? core::temp_name_pid(name) : 0;
    });
    BS_TRY(auto written, archive::write_tar_zst(out, members, write));
    result.packages = m.packages.size();
    result.local_sources = info.local_sources;
    result.carried_files = carried_files;
    result.bytes_in = written.bytes_in;
    result.bytes_out = written.bytes_out;
    BS_TRY(result.sha256, core::sha256_file(out));
    return result;
}

Result<UnpackResult> unpack_venv(const fs::path& pack, const fs::path& dest_in) {
    const fs::path dest = fs::absolute(dest_in).lexically_normal();
    std::error_code ec;
    if (!dest.has_filename() || dest == dest.root_path())
        return fail(ErrorCode::usage, fmt::format("cannot unpack into {}: name a new directory", dest_in.string()));
    if (fs::exists(fs::symlink_status(dest, ec)))
        return fail(ErrorCode::usage, fmt::format("cannot unpack into {}: it already exists", dest.string()));
    if (!fs::is_regular_file(pack, ec)) return fail(ErrorCode::usage, fmt::format("no such pack: {}", pack.string()));
    // An unpack killed midway left `.DEST.unpack-<pid>` (and its extraction's temporaries).
    const std::string prefix = fmt::format(".{}.unpack-", dest.filename().string());
    (void)core::remove_dead_leftovers(dest.parent_path(),
                                      [&](std::string_view name) { return core::pid_after(name, prefix); });
    const fs::path staging = dest.parent_path() / fmt::format("{}{}", prefix, ::getpid());
    struct Cleanup {
        fs::path dir;
        ~Cleanup() {
            std::error_code ignored;
            fs::remove_all(dir, ignored);
        }
    } cleanup{staging};

    archive::ExtractOptions extract;
    extract.strip_top = false;
    extract.max_ratio = 1000;  // a venv compresses well; the size cap still holds
    extract.max_bytes = 256ull << 30;
    extract.refuse_duplicates = true;  // `pack` writes each path once: a second copy hides the first
    BS_TRY(auto extracted, archive::extract(pack, staging, extract));
    BS_TRY(auto info, read_info(staging / k_pack_json));
    BS_TRY(auto packed, manifest::load_manifest(staging / k_manifest_json));
    const fs::path tree = staging / k_tree;
    if (!fs::is_regular_file(tree / "pyvenv.cfg", ec))
        return fail(ErrorCode::io, fmt::format("{} holds no venv (no {}/pyvenv.cfg)", pack.string(), k_tree));

    // The interpreter is not in the pack: it must be where the venv expects it.
    std::vector<std::string> missing;
    if (!info.python_home.empty() && !fs::is_directory(info.python_home, ec))
        missing.push_back(fmt::format("pyvenv.cfg's home {}", info.python_home));
    for (const auto& [name, target] : info.links) {
        BS_CHECK(check_link_name(tree, name, pack));
        const std::string here = link_target_here(target, info.venv, dest);
        if (here == target && !fs::exists(target, ec)) missing.push_back(fmt::format("{} (bin link {})", target, name));
    }
    if (!missing.empty())
        return fail(
            ErrorCode::io,
            fmt::format("cannot unpack {}: its venv needs Python {} at {}, and this host does not have {}",
                        pack.string(), info.python_version.empty() ? "?" : info.python_version,
                        info.python_home.empty() ? "its packed path" : info.python_home, core::join(missing, ", ")),
            fmt::format("install Python {} at the same path (the same base image as the packing host), "
                        "or build the venv on this host: bootstrap run RECIPE",
                        info.python_version));
    if (auto gone = missing_sources(info.local_sources); !gone.empty())
        return fail(ErrorCode::io,
                    fmt::format("cannot unpack {}: its venv has {} whose source is neither in the pack nor on "
                                "this host: {}",
                                pack.string(), gone.size() == 1 ? "an editable install" : "editable installs",
                                core::join(gone, ", ")),
                    "make the checkout available at that path on this node, or pack the venv again with "
                    "`bootstrap pack --carry-editable` to carry the source in the pack");
    for (const auto& [name, target] : info.links) {
        fs::create_symlink(link_target_here(target, info.venv, dest), tree / name, ec);
        if (ec)
            return fail(ErrorCode::io,
                        fmt::format("cannot create the link {}: {}", (tree / name).string(), ec.message()));
    }

    UnpackResult result;
    result.venv = dest;
    result.packed_from = info.venv;
    result.bytes = extracted.bytes;
    BS_TRY(auto relocated, pyenv::relocate_venv(tree, info.venv, dest));
    result.relocated = relocated.rewritten.size();

    // Versions and RECORD digests, read back from the unpacked tree (relocation rewrites
    // scripts, never a RECORD). Host facts are the packed ones: nothing host-specific is probed.
    BS_TRY(auto python, python_of(tree, false));
    BS_TRY(auto here, snapshot_of(tree, python, packed.host));
    BS_CHECK(verify_against(packed, here, pack));
    BS_TRY(result.files, verify_files(tree, python, dest, pack));
    result.packages = here.packages.size();
    // Editable installs are pointed at their new place only now: verification read the
    // files and RECORDs as packed.
    result.local_sources = info.local_sources;
    BS_TRY(result.repointed, place_sources(info.local_sources, staging, tree, python.purelib, info.venv, dest));
    // What the snapshot just cached of this tree is host-local state, as a pack leaves it out.
    BS_TRY(auto dropped, state::drop_host_local_state(tree));
    (void)dropped;

    BS_CHECK(core::rename_no_replace(tree, dest));
    return result;
}

}  // namespace bootstrap::pack
