#include "steps/build_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <map>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/env_policy.hpp"
#include "core/fd.hpp"
#include "core/fs.hpp"
#include "core/key.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"

namespace bootstrap::steps {

namespace {

constexpr const char* k_build_key_scheme = "bootstrap-build-v2";

std::string host_name() {
    char buf[256] = {};
    return ::gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string("?");
}

/// `entry.txt`: "name = value" lines.
std::map<std::string, std::string> read_entry(const fs::path& file) {
    std::map<std::string, std::string> out;
    auto text = core::read_file(file);
    if (!text) return out;
    for (const auto& line : core::split(*text, '\n')) {
        auto eq = line.find(" = ");
        if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 3);
    }
    return out;
}

/// In a setgid cache directory, a directory we create is the group's to replace too.
void share_dir_with_group(const fs::path& dir) {
    core::Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd) core::share_with_group(fd.get(), dir.parent_path());
}

/// Copy the regular files of `from` into the new directory `to` (what gets checked and
/// installed is then out of other users' reach).
Status copy_files(const fs::path& from, const fs::path& to) {
    std::error_code ec;
    fs::remove_all(to, ec);
    BS_CHECK(core::create_directories(to));
    for (const auto& e : fs::directory_iterator(from, ec)) {
        if (!e.is_regular_file(ec) || e.is_symlink(ec)) continue;
        fs::copy_file(e.path(), to / e.path().filename(), ec);
        if (ec)
            return fail(ErrorCode::io,
                        fmt::format("cannot copy {} to {}: {}", e.path().string(), to.string(), ec.message()));
    }
    if (ec) return fail(ErrorCode::io, fmt::format("cannot list {}: {}", from.string(), ec.message()));
    return {};
}

/// The entry described by `dir`'s entry.txt, with its wheel in `files` (the entry itself or a
/// private copy), when complete and the wheel has the recorded sha256.
std::optional<BuildCache::Entry> read_complete_entry(const fs::path& dir, const fs::path& files) {
    auto fields = read_entry(files / "entry.txt");
    if (fields.count("wheel") == 0 || fields.count("sha256") == 0) return std::nullopt;
    const fs::path name = fs::path(fields["wheel"]).filename();
    if (name.empty() || name.string() != fields["wheel"]) return std::nullopt;
    BuildCache::Entry e;
    e.dir = dir;
    e.wheel = files / name;
    e.sha256 = fields["sha256"];
    e.built_at = fields["built_at"];
    e.host = fields["host"];
    e.build_seconds = core::parse_double(fields["seconds"]).value_or(0);
    e.rekeyed_from = fields["rekeyed_from"];
    auto digest = core::sha256_file(e.wheel);
    if (!digest || *digest != e.sha256) return std::nullopt;  // damaged: build again
    return e;
}

}  // namespace

namespace {

/// What a compiled wheel is bound to: torch, the ABI packages, nvcc, the compiler, the arches.
void add_toolchain(core::KeyBuilder& key, const BuildInputs& in) {
    key.add("torch", in.torch);
    key.add("abi_packages", in.abi_packages);
    key.add("nvcc", in.nvcc);
    key.add("compiler", in.compiler);
    key.add("libstdc++", in.libstdcxx);
    key.add("arch_list", in.arch_list);
}

/// How the wheel is built: the environment, the frontend and its options.
void add_how_built(core::KeyBuilder& key, const BuildInputs& in) {
    key.add("env", in.env);
    key.add("frontend", in.frontend);
    key.add("no_build_isolation", in.no_build_isolation ? "true" : "false");
    key.add("config_settings", in.config_settings);
}

BuildKey key_of(const char* scheme, const BuildInputs& in, const std::string& source) {
    core::KeyBuilder key(scheme);
    key.add("source", source);
    key.add("subdirectory", in.subdirectory);
    key.add("python", in.python);
    key.add("ext_suffix", in.ext_suffix);
    key.add("platform", in.platform);
    add_toolchain(key, in);
    add_how_built(key, in);
    return {key.digest(), key.explain(), in};
}

}  // namespace

namespace {

/// `source_from` shown under the source line, never hashed: the same content from anywhere is
/// one key.
void show_source_from(BuildKey& key) {
    const auto& in = key.inputs;
    if (in.source_from.empty()) return;
    const std::string line = "source: " + in.source + "\n";
    if (const auto at = key.explain.find(line); at != std::string::npos)
        key.explain.insert(at + line.size(), fmt::format("# source from: {} (not part of the key)\n", in.source_from));
}

}  // namespace

BuildKey make_build_key(const BuildInputs& in) {
    BuildKey key = key_of(k_build_key_scheme, in, in.source);
    show_source_from(key);
    return key;
}

BuildKey make_source_build_key(const BuildInputs& in, bool pure) {
    core::KeyBuilder key(k_source_build_key_scheme);
    key.add("source", in.source);
    key.add("build_requires", in.build_requires);
    key.add("python", in.python);
    key.add("platform", in.platform);
    add_how_built(key, in);
    key.add("wheel", pure ? "pure (none-any)" : "compiled");
    if (!pure) {
        key.add("ext_suffix", in.ext_suffix);
        add_toolchain(key, in);
    }
    BuildKey out{key.digest(), key.explain(), in};
    show_source_from(out);
    return out;
}

BuildKey make_build_key_v1(const BuildInputs& in, const std::string& v1_source) {
    BuildKey key = key_of(k_build_key_scheme_v1, in, v1_source);
    key.inputs.source = v1_source;
    return key;
}

std::string content_source(std::string_view v1_source) {
    if (!v1_source.starts_with("git ")) return std::string(v1_source);
    const auto at = v1_source.rfind('@');  // a commit and " +submodules" hold none
    if (at == std::string_view::npos) return std::string(v1_source);
    return "git " + std::string(v1_source.substr(at + 1));
}

bool is_parallelism_variable(const std::string& name) {
    return core::env_has_use(name, core::EnvUse::build_parallelism);
}

std::optional<BuildCache::Entry> BuildCache::find(const std::string& key) const {
    return read_complete_entry(m_root / key, m_root / key);
}

Result<std::optional<BuildCache::Entry>> BuildCache::find_trusted(
    const std::string& key, const fs::path& private_dir,
    const std::function<Result<const core::TrustedKeys*>()>& trusted_keys,
    std::optional<core::EntryTrust>* passed_over) const {
    const fs::path dir = m_root / key;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return std::optional<Entry>();
    if (!core::entry_other_writer(dir)) return find(key);
    // Checked and installed from a copy: what another user changes afterwards is not installed.
    BS_CHECK(copy_files(dir, private_dir));
    BS_TRY(auto trust, core::check_entry(dir, key, trusted_keys, private_dir));
    if (!trust.usable()) {
        *passed_over = std::move(trust);
        return std::optional<Entry>();
    }
    return read_complete_entry(dir, private_dir);
}

bool BuildCache::writable() const {
    std::error_code ec;
    const bool existed = fs::is_directory(m_root, ec);
    if (!core::create_directories(m_root)) return false;
    if (!existed) share_dir_with_group(m_root);
    return ::access(m_root.c_str(), W_OK | X_OK) == 0;
}

Result<core::FileLock> BuildCache::lock(const std::string& key, double timeout_s,
                                        const std::function<void(long)>& on_wait) const {
    return core::FileLock::acquire(m_root / (key + ".lock"), timeout_s,
                                   fmt::format("build cache entry {}", key.substr(0, 16)), on_wait);
}

fs::path BuildCache::source_copy(const std::string& key) const {
    return m_root / fmt::format(".src-{}-{}", key, ::getpid());
}

std::vector<fs::path> BuildCache::remove_leftovers(const std::string& key) const {
    const std::string prefixes[] = {".tmp-" + key + "-", ".src-" + key + "-", "..src-" + key + "-"};
    return core::remove_dead_leftovers(m_root, [&](std::string_view name) {
        for (const auto& prefix : prefixes)
            if (long pid = core::pid_after(name, prefix)) return pid;
        return 0L;
    });
}

Result<fs::path> BuildCache::staging(const std::string& key) const {
    fs::path dir = m_root / fmt::format(".tmp-{}-{}", key, ::getpid());
    std::error_code ec;
    fs::remove_all(dir, ec);
    BS_CHECK(core::create_directories(dir));
    share_dir_with_group(dir);
    return dir;
}

Result<BuildCache::Entry> BuildCache::publish(const std::string& key, const fs::path& staging_dir,
                                              const std::string& inputs, double build_seconds,
                                              const core::SigningKey* signer, const Entry* origin) const {
    std::error_code ec;
    auto discard = [&](Error err) -> Result<Entry> {
        fs::remove_all(staging_dir, ec);
        return tl::unexpected(std::move(err));
    };
    std::vector<fs::path> wheels;
    for (const auto& entry : fs::directory_iterator(staging_dir, ec))
        if (entry.path().extension() == ".whl") wheels.push_back(entry.path());
    if (wheels.size() != 1)
        return discard(Error{ErrorCode::step_failed,
                             fmt::format("the build produced {} wheels instead of one", wheels.size()), ""});
    auto digest = core::sha256_file(wheels[0]);
    if (!digest) return discard(digest.error());
    Entry e;
    e.sha256 = *digest;
    e.build_seconds = build_seconds;
    e.built_at = origin != nullptr ? origin->built_at : core::utc_iso8601();
    e.host = origin != nullptr ? origin->host : host_name();
    std::string entry_text = fmt::format("wheel = {}\nsha256 = {}\nseconds = {:.1f}\nbuilt_at = {}\nhost = {}\n",
                                         wheels[0].filename().string(), e.sha256, build_seconds, e.built_at, e.host);
    if (origin != nullptr && !origin->rekeyed_from.empty()) {
        e.rekeyed_from = origin->rekeyed_from;
        entry_text += fmt::format("rekeyed_from = {}\n", e.rekeyed_from);
    }
    if (auto w = core::write_file_atomic(staging_dir / "inputs.txt", inputs); !w) return discard(w.error());
    if (auto w = core::write_file_atomic(staging_dir / "entry.txt", entry_text); !w) return discard(w.error());
    if (signer != nullptr)
        if (auto signed_ = core::sign_entry(staging_dir, key, *signer); !signed_) return discard(signed_.error());
    fs::path final_dir = m_root / key;
    // A damaged entry, or one find_trusted passed over; we hold the key's lock.
    fs::remove_all(final_dir, ec);
    if (fs::exists(fs::symlink_status(final_dir, ec))) {
        // Another user's entry this user may not remove (umask 022): installed from staging.
        e.dir = staging_dir;
        e.wheel = staging_dir / wheels[0].filename();
        e.published = false;
        return e;
    }
    fs::rename(staging_dir, final_dir, ec);
    if (ec)
        return discard(Error{
            ErrorCode::io,
            fmt::format("cannot publish build {} to {}: {}", staging_dir.string(), final_dir.string(), ec.message()),
            ""});
    e.dir = final_dir;
    e.wheel = final_dir / wheels[0].filename();
    return e;
}

}  // namespace bootstrap::steps
