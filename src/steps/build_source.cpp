#include "steps/build_source.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "archive/archive.hpp"
#include "core/file_lock.hpp"
#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/json_fields.hpp"
#include "core/redact.hpp"
#include "core/retry.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "net/download.hpp"

namespace bootstrap::steps {

std::string BuildSpec::location_shown() const { return core::redact_text(location); }

namespace {

/// What builds and VCSs write into a tree: not part of its identity, and (build/dist) not
/// copied into a build.
bool skipped_dir(const fs::path& rel, bool for_digest) {
    std::string name = rel.filename().string();
    bool top = !rel.has_parent_path() || rel.parent_path().empty();
    if (top && (name == "build" || name == "dist")) return true;
    if (!for_digest) return false;
    return name == ".git" || name == "__pycache__" || name.ends_with(".egg-info");
}

struct TreeFile {
    std::string rel;
    struct stat st {};
};

/// A source tree never reaches the kernel's filesystems: their files are no source, and reading
/// one (/proc/kmsg) can block forever.
tl::unexpected<Error> kernel_tree(const fs::path& dir, const fs::path& reached, const std::string& kind) {
    return fail(ErrorCode::invalid_recipe,
                fmt::format("source tree {} reaches {}{}, which holds no source: a source directory never includes "
                            "/proc, /sys, /dev or another kernel filesystem",
                            dir.string(), reached.string(), kind.empty() ? "" : " (" + kind + ")"),
                "name the project's own directory");
}

Result<std::vector<TreeFile>> list_tree(const fs::path& dir) {
    if (auto kernel = core::reaches_kernel_tree(dir)) return kernel_tree(dir, *kernel, "");
    std::vector<TreeFile> files;
    std::error_code ec;
    struct stat top {};
    if (::stat(dir.c_str(), &top) != 0) top.st_dev = 0;
    fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
    if (ec) return fail(ErrorCode::io, fmt::format("cannot read source tree {}: {}", dir.string(), ec.message()));
    for (; it != end; it.increment(ec)) {
        if (ec) return fail(ErrorCode::io, fmt::format("cannot read source tree {}: {}", dir.string(), ec.message()));
        if (core::interrupt_signal() != 0)
            return fail(ErrorCode::interrupted, fmt::format("interrupted while reading source tree {}", dir.string()));
        fs::path rel = it->path().lexically_relative(dir);
        TreeFile f{rel.string(), {}};
        if (::lstat(it->path().c_str(), &f.st) != 0) continue;
        if (S_ISDIR(f.st.st_mode)) {
            // Another filesystem mounted inside: never a kernel one.
            if (f.st.st_dev != top.st_dev)
                if (auto kind = core::kernel_filesystem(it->path())) return kernel_tree(dir, it->path(), *kind);
            if (skipped_dir(rel, true)) it.disable_recursion_pending();
            continue;
        }
        if (S_ISREG(f.st.st_mode) || S_ISLNK(f.st.st_mode)) files.push_back(std::move(f));
    }
    std::sort(files.begin(), files.end(), [](const TreeFile& a, const TreeFile& b) { return a.rel < b.rel; });
    return files;
}

std::string git_program(const ResolvedStep& step) {
    auto found = exec::find_program("git", step.child_env);
    return found.empty() ? std::string("git") : found.string();
}

constexpr uint64_t k_low_speed_limit = 1024;  // bytes/s
constexpr double k_git_backoff_base = 0.5;    // seconds before the 2nd fetch; doubles each time

/// The low-speed window: 60 s, unless BOOTSTRAP_LOW_SPEED_TIME (seconds; for tests) says less.
std::chrono::milliseconds low_speed_time(const ResolvedStep& step) {
    auto it = step.child_env.find("BOOTSTRAP_LOW_SPEED_TIME");
    if (it != step.child_env.end()) {
        auto v = core::parse_double(it->second);
        if (v && *v > 0 && *v < 3600) return std::chrono::milliseconds(static_cast<long>(*v * 1000));
    }
    return std::chrono::seconds(60);
}

/// One fetch of a step's source: the step, its context and its deadline.
struct Fetch {
    const ResolvedStep& step;
    StepContext& ctx;
    const Deadline& deadline;

    /// Seconds before the deadline; a day without one.
    double left() const {
        if (!deadline) return 86400;
        return std::chrono::duration<double>(*deadline - std::chrono::steady_clock::now()).count();
    }

    /// "step 'x': WHAT did not finish within the step's timeout of N s[, WHY]".
    tl::unexpected<Error> out_of_time(const std::string& what, std::string detail = {},
                                      const std::string& why = {}) const {
        return fail(ErrorCode::timeout,
                    fmt::format("step '{}': {} did not finish within the step's timeout of {:g} s{}", step.id, what,
                                step.timeout, why.empty() ? "" : ", " + why),
                    std::move(detail));
    }
};

exec::ProcessSpec git_spec(const Fetch& f, std::vector<std::string> args) {
    // Transports that run commands are off whatever the URL says (the recipe's URL is also
    // validated, and always follows `--`).
    args.insert(args.begin(), {git_program(f.step), "-c", "protocol.ext.allow=never", "-c", "protocol.fd.allow=never"});
    auto spec = child_spec(f.step, f.ctx, std::move(args));
    spec.env["GIT_TERMINAL_PROMPT"] = "0";  // never wait for a password on a terminal
    spec.cwd = "/";
    spec.capture = true;
    if (f.deadline)  // what is left of the step's time, not all of it again
        spec.timeout = std::chrono::milliseconds(static_cast<long>(std::max(f.left(), 0.001) * 1000));
    return spec;
}

/// Run git; only an interrupt, or running out of the step's time, is an error here (callers
/// judge the exit status).
Result<exec::ProcessResult> run_git(const Fetch& f, const exec::ProcessSpec& spec, const std::string& what) {
    if (f.left() <= 0) return f.out_of_time(what);
    log_line(f.ctx, "$ " + core::redact_text(core::format_argv(spec.argv)));
    BS_TRY(auto result, f.ctx.run(spec));
    if (result.interrupted) return tl::unexpected(child_failure(f.step, spec, result, f.ctx.log_path));
    if (result.timed_out && f.deadline && f.left() <= 0.5)
        return f.out_of_time(what, child_failure(f.step, spec, result, f.ctx.log_path).detail);
    return result;
}

Result<exec::ProcessResult> run_git(const Fetch& f, std::vector<std::string> args, const std::string& what) {
    return run_git(f, git_spec(f, std::move(args)), what);
}

/// Run git; a non-zero exit is an error saying `what` went wrong.
Status git_ok(const Fetch& f, std::vector<std::string> args, const std::string& what) {
    auto spec = git_spec(f, std::move(args));
    BS_TRY(auto result, run_git(f, spec, what));
    if (result.ok()) return {};
    auto err = child_failure(f.step, spec, result, f.ctx.log_path);
    err.message = fmt::format("step '{}': {}: {}", f.step.id, what, result.describe());
    return tl::unexpected(err);
}

/// `git fetch` of one commit, shallow first; a server that refuses fetching a commit by id
/// (uploadpack.allowReachableSHA1InWant off) gets a full fetch. Network failures are retried,
/// a transfer below 1 KiB/s over the low-speed window is one; the step's time bounds it all.
Status git_fetch_commit(const Fetch& f, const fs::path& repo) {
    const auto& b = *f.step.build();
    const std::string what = fmt::format("the git fetch of {} from {}", b.rev, b.location_shown());
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(low_speed_time(f.step)).count();
    const std::vector<std::string> slow{"-c", fmt::format("http.lowSpeedLimit={}", k_low_speed_limit), "-c",
                                        fmt::format("http.lowSpeedTime={}", std::max<long>(1, seconds))};
    auto fetch = [&](std::vector<std::string> args) {
        args.insert(args.begin(), slow.begin(), slow.end());
        args.insert(args.begin(), {"-C", repo.string()});
        return run_git(f, std::move(args), what);
    };
    std::string last;
    for (int attempt = 1; attempt <= b.download_attempts; ++attempt) {
        BS_TRY(auto shallow, fetch({"fetch", "--quiet", "--depth", "1", "--no-tags", "--", b.location, b.rev}));
        if (shallow.ok()) return {};
        BS_TRY(auto full,
               fetch({"fetch", "--quiet", "--no-tags", "--", b.location, "+refs/heads/*:refs/remotes/origin/*"}));
        if (full.ok()) return {};
        last = core::last_lines(full.output, 3);
        if (attempt < b.download_attempts) {
            double wait = core::retry_delay(k_git_backoff_base, attempt).seconds;
            if (wait >= f.left()) return f.out_of_time(what, last);
            log_line(f.ctx, fmt::format("git fetch failed (attempt {}/{}); retrying", attempt, b.download_attempts));
            if (!core::sleep_interruptible(wait))
                return fail(ErrorCode::interrupted, fmt::format("step '{}' interrupted", f.step.id));
        }
    }
    return fail(ErrorCode::network,
                fmt::format("step '{}': cannot fetch commit {} from {} ({} attempts)", f.step.id, b.rev,
                            b.location_shown(), b.download_attempts),
                last + (f.ctx.log_path.empty() ? "" : "\nlog: " + f.ctx.log_path.string()));
}

/// Wait for `lock_file` (another build may be fetching the same source), no longer than the
/// step's time allows.
Result<core::FileLock> lock_source(const Fetch& f, const fs::path& lock_file, const std::string& what) {
    double limit = f.deadline ? f.left() : 3600.0;
    if (limit <= 0) return f.out_of_time("waiting for " + what);
    auto lock = core::FileLock::acquire(lock_file, limit, what, [&](long pid) {
        log_line(f.ctx, fmt::format("another bootstrap (pid {}) is fetching {}; waiting for it", pid, what));
    });
    if (!lock && lock.error().code == ErrorCode::lock_timeout && f.deadline && f.left() <= 0)
        return f.out_of_time("waiting for " + what, lock.error().message);
    return lock;
}

Result<FetchedSource> fetch_git(const Fetch& f) {
    const auto& b = *f.step.build();
    fs::path root = b.home / "sources" / "git";
    fs::path final_dir = root / fmt::format("{}-{}", core::sha256_hex(b.location).substr(0, 16), b.rev.substr(0, 16));
    if (fs::exists(final_dir / ".git")) return FetchedSource{final_dir, false, ""};
    BS_CHECK(core::create_directories(root));
    BS_TRY(auto lock, lock_source(f, b.home / "sources" / "locks" / (final_dir.filename().string() + ".lock"),
                                  "the checkout of " + b.location_shown() + " at " + b.rev.substr(0, 12)));
    if (fs::exists(final_dir / ".git")) return FetchedSource{final_dir, false, ""};  // the one we waited for
    const std::string tmp_prefix = fmt::format(".tmp-{}-", final_dir.filename().string());
    for (const auto& left :
         core::remove_dead_leftovers(root, [&](std::string_view name) { return core::pid_after(name, tmp_prefix); }))
        log_line(f.ctx, "removed " + left.string() + ", left by a fetch that died");
    fs::path tmp = root / fmt::format("{}{}", tmp_prefix, ::getpid());
    std::error_code ec;
    fs::remove_all(tmp, ec);
    auto cleanup = [&] { fs::remove_all(tmp, ec); };
    auto fetched = [&]() -> Status {
        BS_CHECK(git_ok(f, {"init", "--quiet", "--", tmp.string()}, "git init failed"));
        BS_CHECK(git_fetch_commit(f, tmp));
        BS_CHECK(
            git_ok(f, {"-C", tmp.string(), "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", b.rev},
                   fmt::format("commit {} is not in {}", b.rev, b.location_shown())));
        BS_TRY(auto head, run_git(f, {"-C", tmp.string(), "rev-parse", "HEAD"}, "git rev-parse"));
        std::string got(core::trim(head.output));
        if (got != b.rev)
            return fail(ErrorCode::step_failed, fmt::format("step '{}': {} checked out {} instead of commit {}",
                                                            f.step.id, b.location_shown(), got, b.rev));
        if (b.submodules)
            BS_CHECK(git_ok(f, {"-C", tmp.string(), "submodule", "update", "--init", "--recursive", "--depth", "1"},
                            "cannot fetch the submodules"));
        return {};
    }();
    if (!fetched) {
        cleanup();
        return tl::unexpected(fetched.error());
    }
    fs::rename(tmp, final_dir, ec);
    if (ec) {
        cleanup();  // another run published the same checkout first: use that one
        if (!fs::exists(final_dir / ".git"))
            return fail(ErrorCode::io, fmt::format("cannot publish {}: {}", final_dir.string(), ec.message()));
    }
    return FetchedSource{final_dir, false, fmt::format("fetched {} at {}", b.location_shown(), b.rev.substr(0, 12))};
}

}  // namespace

net::DownloadRequest archive_request(const ResolvedStep& step) {
    const auto& b = *step.build();
    std::string name = b.location.substr(b.location.find_last_of('/') + 1);
    if (auto q = name.find_first_of("?#"); q != std::string::npos) name.resize(q);
    if (name.empty()) name = "source";
    net::DownloadRequest request;
    request.url = b.location;
    request.dest = b.home / "sources" / "downloads" / b.sha256 / name;
    request.sha256 = b.sha256;
    request.read_timeout = std::chrono::seconds(b.net.timeout);
    request.retries = b.download_attempts - 1;
    request.max_bytes = b.max_download;
    request.low_speed_limit = k_low_speed_limit;
    request.low_speed_time = low_speed_time(step);
    return request;
}

namespace {

Result<FetchedSource> fetch_archive(const Fetch& f) {
    const auto& step = f.step;
    net::DownloadRequest request = archive_request(step);
    const std::string name = request.dest.filename().string();
    request.deadline = f.deadline;
    request.on_retry = [&](const net::DownloadRetry& e) {
        log_line(f.ctx, fmt::format("download attempt {} failed ({}); retrying in {:.1f} s{}", e.attempt, e.problem,
                                    e.wait_seconds, e.note.empty() ? "" : " (" + e.note + ")"));
    };
    log_line(f.ctx, fmt::format("download {} -> {}", request.url, request.dest.string()));
    // Builds of other keys may need the same archive at the same time: one downloads, the
    // others wait and find it there.
    BS_TRY(auto lock, lock_source(f, request.dest.string() + ".lock", "the download of " + request.url));
    auto got = net::download(request);
    if (!got) {
        Error err = got.error();
        if (err.code == ErrorCode::timeout) {
            // net's "download of URL ran out of time after 2 attempts: why (what is kept)".
            std::string head = "download of " + request.url + " ran out of time ";
            std::string why = core::starts_with(err.message, head) ? err.message.substr(head.size()) : err.message;
            return f.out_of_time("the download of " + request.url, err.detail, why);
        }
        err.message = fmt::format("step '{}': {}", step.id, err.message);
        if (core::starts_with(got.error().message, "download of " + request.url + " refused: "))
            err.message +=
                fmt::format(" ([network] max_download is {})", core::format_size(step.build()->max_download));
        return tl::unexpected(err);
    }
    if (got->discarded > 0)
        log_line(f.ctx, fmt::format("discarded {} of a stale partial download", core::format_size(got->discarded)));
    std::string note;
    if (!got->already_there)
        note = fmt::format("downloaded {} ({} bytes{})", name, got->bytes,
                           got->resumed_from > 0 ? fmt::format(", resumed at {}", got->resumed_from) : "");
    log_line(f.ctx, note.empty() ? "download: already there, sha256 ok" : note);
    return FetchedSource{got->path, true, note};
}

Status copy_tree(const fs::path& from, const fs::path& to) {
    std::error_code ec;
    fs::create_directories(to, ec);
    if (ec) return fail(ErrorCode::io, fmt::format("cannot create {}: {}", to.string(), ec.message()));
    for (const auto& entry : fs::directory_iterator(from, ec)) {
        fs::path rel = entry.path().lexically_relative(from);
        if (entry.is_directory(ec) && !entry.is_symlink() && skipped_dir(rel, false)) continue;
        fs::copy(entry.path(), to / rel.filename(), fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
        if (ec)
            return fail(ErrorCode::io,
                        fmt::format("cannot copy {} into {}: {}", entry.path().string(), to.string(), ec.message()));
        if (core::interrupt_signal() != 0) return fail(ErrorCode::interrupted, "interrupted while copying the source");
    }
    if (ec) return fail(ErrorCode::io, fmt::format("cannot read {}: {}", from.string(), ec.message()));
    return {};
}

// `<cache_dir>/<sha256 of the directory's path>.json`: {"version": 1, "stamp": "<digest of
// every file's stat>", "digest": "<tree digest>"}. Another version or stamp, or an unreadable
// file, is a miss (the tree is hashed again and the file rewritten).
constexpr int k_tree_cache_version = 1;

std::optional<std::string> read_tree_cache(const fs::path& file, const std::string& stamp) {
    auto text = core::read_file(file);
    if (!text) return std::nullopt;
    auto digest = core::read_json(
        *text,
        [&](const core::JsonFields& j) -> Result<std::string> {
            if (j.integer("version") != k_tree_cache_version || j.str("stamp") != stamp ||
                !core::is_sha256_hex(j.str("digest")))
                return fail(ErrorCode::not_found, "stale");
            return j.str("digest");
        },
        [](const std::string& why) -> Result<std::string> { return fail(ErrorCode::io, why); });
    if (!digest) return std::nullopt;
    return *digest;
}

}  // namespace

bool subdirectory_inside(std::string_view subdirectory) {
    const fs::path sub = fs::path(subdirectory).lexically_normal();
    return !sub.is_absolute() && (sub.empty() || *sub.begin() != "..");
}

Result<std::string> tree_digest(const fs::path& dir, const fs::path& cache_dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return std::string("missing");
    BS_TRY(auto files, list_tree(dir));
    core::Sha256 stamps;
    for (const auto& f : files)
        stamps.update(fmt::format("{}\n{} {} {} {} {}\n", f.rel, f.st.st_size, f.st.st_mtim.tv_sec,
                                  f.st.st_mtim.tv_nsec, f.st.st_ino, f.st.st_mode));
    std::string stamp = stamps.hex();
    fs::path cache_file = cache_dir / (core::sha256_hex(fs::absolute(dir).lexically_normal().string()) + ".json");
    if (auto cached = read_tree_cache(cache_file, stamp)) return *cached;
    core::Sha256 tree;
    for (const auto& f : files) {
        if (core::interrupt_signal() != 0)
            return fail(ErrorCode::interrupted, "interrupted while hashing " + dir.string());
        fs::path p = dir / f.rel;
        std::string content;
        if (S_ISLNK(f.st.st_mode)) {
            content = "-> " + fs::read_symlink(p, ec).string();
        } else {
            BS_TRY(content, core::sha256_file(p));
        }
        tree.update(fmt::format("{}\n{}\n{}\n", f.rel, (f.st.st_mode & S_IXUSR) ? "x" : "-", content));
    }
    std::string digest = tree.hex();
    // Only a speed-up: a cache that cannot be written just means hashing again next time.
    nlohmann::json entry{{"version", k_tree_cache_version}, {"stamp", stamp}, {"digest", digest}};
    (void)core::write_file_atomic(cache_file, entry.dump(1) + "\n");
    return digest;
}

Result<FetchedSource> fetch_source(const ResolvedStep& step, StepContext& ctx, const Deadline& deadline) {
    const auto& b = *step.build();
    Fetch f{step, ctx, deadline};
    switch (b.source_kind) {
        case BuildSource::Kind::path:
            if (!fs::is_directory(b.location))
                return fail(ErrorCode::not_found,
                            fmt::format("step '{}': the source directory {} does not exist", step.id, b.location));
            return FetchedSource{b.location, false, ""};
        case BuildSource::Kind::git: return fetch_git(f);
        case BuildSource::Kind::url: return fetch_archive(f);
    }
    return fail(ErrorCode::internal, "unknown source kind");
}

Result<fs::path> stage_source(const ResolvedStep& step, const FetchedSource& source, const fs::path& dest) {
    const auto& b = *step.build();
    if (source.is_archive) {
        auto extracted = archive::extract(source.location, dest);
        if (!extracted) {
            Error err = extracted.error();
            err.message = fmt::format("step '{}': {}", step.id, err.message);
            return tl::unexpected(err);
        }
    } else {
        BS_CHECK(copy_tree(source.location, dest));
    }
    fs::path project = dest;
    if (!b.subdirectory.empty()) {
        fs::path sub = fs::path(b.subdirectory).lexically_normal();
        if (!subdirectory_inside(b.subdirectory))
            return fail(ErrorCode::invalid_recipe,
                        fmt::format("step '{}': source.subdirectory '{}' must stay inside the source tree", step.id,
                                    b.subdirectory));
        project = dest / sub;
    }
    if (!fs::exists(project / "pyproject.toml") && !fs::exists(project / "setup.py"))
        return fail(ErrorCode::step_failed,
                    fmt::format("step '{}': {} has neither pyproject.toml nor setup.py{}", step.id,
                                b.source_kind == BuildSource::Kind::path
                                    ? (fs::path(b.location) / b.subdirectory).string()
                                    : b.location_shown() + (b.subdirectory.empty() ? "" : " (" + b.subdirectory + ")"),
                                b.subdirectory.empty() ? " (set source.subdirectory if the project is deeper)" : ""));
    return project;
}

}  // namespace bootstrap::steps
