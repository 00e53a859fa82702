#include "image/context_inputs.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/guarded_paths.hpp"
#include "core/interrupt.hpp"
#include "core/redact.hpp"
#include "core/sha256.hpp"
#include "net/download.hpp"
#include "steps/kind.hpp"
#include "steps/resolved_step.hpp"

namespace bootstrap::image {

namespace {

/// What the recipe reads from this machine, by a key that names the same input in the plan of
/// the recipe's copy: "step:ID:N" (the step's N-th local input), "argv:ID:N" (an absolute path
/// in its argv) or "vars:NAME".
struct Input {
    /// `program`: argv[0], found on this machine's PATH or named: only a read (the image finds its
    /// own, or the [vars] checkout holding it is carried).
    enum class From { local_input, program, argv, vars };
    From from = From::local_input;
    std::string what;  // "step 'ID' ROLE", "[vars] NAME"
    std::string role;  // "argv[2]", "working directory"
    std::string path;
    bool directory = true;
    bool repository = false;
    const steps::ResolvedStep* step = nullptr;  // the step that reads it (not for vars)
    recipe::SourceLoc loc;                      // where the recipe names it
};

/// Whether the image's run runs `step` (containerfile's --skip/--only leave a step out: what
/// only it reads is not carried).
bool runs_in_image(const engine::Plan& plan, const steps::ResolvedStep& step) {
    return step.index >= plan.selected.size() || plan.selected[step.index];
}

std::map<std::string, Input> local_inputs(const engine::Plan& plan) {
    std::map<std::string, Input> out;
    for (const auto& step : plan.steps) {
        if (!runs_in_image(plan, step)) continue;
        for (size_t n = 0; n < step.local_inputs.size(); ++n) {
            const auto& in = step.local_inputs[n];
            out[fmt::format("step:{}:{}", step.id, n)] = {.from = Input::From::local_input,
                                                          .what = fmt::format("step '{}' {}", step.id, in.what),
                                                          .role = in.what,
                                                          .path = in.path,
                                                          .directory = in.directory,
                                                          .repository = in.repository,
                                                          .step = &step,
                                                          .loc = in.loc};
        }
        // Any argv element that names a path the step may read (whether it exists here is
        // asked of the recipe here, context_sources).
        const recipe::SourceLoc loc = step.source ? step.source->loc : recipe::SourceLoc{};
        for (size_t n = 0; n < step.argv.size(); ++n)
            if (fs::path(step.argv[n]).is_absolute())
                out[fmt::format("argv:{}:{}", step.id, n)] = {.from = n == 0 ? Input::From::program : Input::From::argv,
                                                              .what = fmt::format("step '{}' argv[{}]", step.id, n),
                                                              .role = fmt::format("argv[{}]", n),
                                                              .path = step.argv[n],
                                                              .directory = true,
                                                              .repository = false,
                                                              .step = &step,
                                                              .loc = loc};
    }
    // A [vars] value naming a directory (a checkout the recipe's steps read from or run in):
    // copied whole when a step reads something in it (context_sources), so that what the steps
    // find beside what they name (a script's modules) is there.
    for (const auto& [name, value] : plan.vars)
        if (!value.empty() && fs::path(value).is_absolute())
            out["vars:" + name] = {.from = Input::From::vars,
                                   .what = fmt::format("[vars] {}", name),
                                   .role = {},
                                   .path = value,
                                   .directory = true,
                                   .repository = false,
                                   .step = nullptr,
                                   .loc = {}};
    return out;
}

/// The paths a step mentions without naming them as a whole argument: in the values it sets in
/// its environment (PYTHONPATH = "{vars.megatron}") and the words of its arguments (a shell's
/// "cd {vars.megatron} && python pretrain.py"). Not carried themselves, but a [vars] directory
/// holding one is read by the step.
std::vector<fs::path> mentioned_paths(const engine::Plan& plan) {
    std::vector<fs::path> out;
    auto add = [&out](std::string_view text, std::string_view separators) {
        size_t i = 0;
        while (i < text.size()) {
            const size_t end = std::min(text.find_first_of(separators, i), text.size());
            if (end > i && text[i] == '/') out.push_back(fs::path(text.substr(i, end - i)).lexically_normal());
            i = end + 1;
        }
    };
    for (const auto& step : plan.steps) {
        if (!runs_in_image(plan, step)) continue;
        for (const auto& [name, value] : step.env_set) add(value, ":");
        for (size_t n = 1; n < step.argv.size(); ++n) add(step.argv[n], " \t\n;&|()<>'\"=:`");
    }
    return out;
}

/// A path inside the system's own trees (/usr/bin/python3, /etc/hosts, /dev/null): an argv
/// element naming one reads the image's own, which its base provides.
bool system_path(const fs::path& path) {
    static const std::set<std::string> k_system = {"usr", "etc",  "var", "proc",  "sys",   "dev",    "boot",
                                                   "bin", "sbin", "lib", "lib32", "lib64", "libx32", "run"};
    auto it = path.begin();
    return path.is_absolute() && ++it != path.end() && k_system.count(it->string()) > 0;
}

bool is_under(const fs::path& path, const fs::path& dir) {
    auto rel = path.lexically_normal().lexically_relative(dir.lexically_normal());
    return !rel.empty() && *rel.begin() != ".." && *rel.begin() != ".";
}

/// Copies one input into the context, leaving out what is not source: .git (but for a
/// repository), venvs (a directory holding pyvenv.cfg), __pycache__, CMake build trees
/// (CMakeCache.txt), the top-level build/ and dist/ (as a build step's own copy does), sockets,
/// fifos and devices, and `skip` (the context being written, when it lies inside).
class SourceCopier {
public:
    SourceCopier(std::vector<fs::path> skip, uint64_t& bytes_left, size_t& files_left, fs::path recipe_dir)
        : m_skip(std::move(skip)),
          m_bytes_left(bytes_left),
          m_files_left(files_left),
          m_recipe_dir(std::move(recipe_dir)) {}

    /// The credential files met (never copied): "PATH (RULE; in WHAT)", PATH relative to the
    /// recipe's directory.
    [[nodiscard]] const std::vector<std::string>& credentials() const { return m_credentials; }

    Status copy(ContextSource& s, const fs::path& to) {
        std::error_code ec;
        std::optional<fs::path> kernel = core::reaches_kernel_tree(s.host_path);
        if (!s.directory && core::kernel_filesystem(s.host_path)) kernel = s.host_path;
        if (kernel)
            return fail(ErrorCode::usage,
                        fmt::format("{}: '{}' reaches {}, a kernel filesystem, which is never copied into a build "
                                    "context",
                                    s.what, s.host_path.string(), kernel->string()),
                        "point the recipe at the checkout it needs, not a directory above it");
        if (!s.directory) {
            BS_CHECK(copy_one(s, s.host_path, to));
            return {};
        }
        fs::create_directories(to, ec);
        if (ec) return fail(ErrorCode::io, fmt::format("cannot create '{}': {}", to.string(), ec.message()));
        return copy_tree(s, s.host_path, to, true);
    }

private:
    Status copy_tree(ContextSource& s, const fs::path& from, const fs::path& to, bool top) {
        std::error_code ec;
        fs::directory_iterator it(from, ec), end;
        if (ec)
            return fail(ErrorCode::io, fmt::format("cannot read '{}' ({}): {}", from.string(), s.what, ec.message()));
        std::vector<fs::directory_entry> entries(it, end);
        std::sort(entries.begin(), entries.end());
        for (const auto& entry : entries) {
            if (core::interrupt_signal() != 0)
                return fail(ErrorCode::interrupted, "interrupted while copying " + s.host_path.string());
            const fs::path& path = entry.path();
            const std::string name = path.filename().string();
            const auto rel = path.lexically_relative(s.host_path).string();
            if (std::any_of(m_skip.begin(), m_skip.end(), [&](const fs::path& p) { return path == p; })) {
                s.left_out.push_back(rel + " (the build context)");
                continue;
            }
            const auto status = entry.symlink_status(ec);
            if (fs::is_directory(status)) {
                std::string why;
                if (name == ".git" && !s.repository) why = ".git";
                else if (name == "__pycache__") continue;  // compiled again where needed
                else if (fs::exists(path / "pyvenv.cfg", ec)) why = "venv";
                else if (fs::exists(path / "CMakeCache.txt", ec)) why = "CMake build tree";
                else if (top && (name == "build" || name == "dist")) why = "build output";
                else if (auto kind = core::kernel_filesystem(path)) why = *kind + " filesystem";
                if (!why.empty()) {
                    s.left_out.push_back(why == ".git" ? rel : fmt::format("{} ({})", rel, why));
                    continue;
                }
                fs::create_directory(to / name, ec);
                if (ec)
                    return fail(ErrorCode::io,
                                fmt::format("cannot create '{}': {}", (to / name).string(), ec.message()));
                BS_CHECK(copy_tree(s, path, to / name, false));
                fs::permissions(to / name, status.permissions() | fs::perms::owner_all, ec);
                fs::last_write_time(to / name, fs::last_write_time(path, ec), ec);  // after its entries
                continue;
            }
            if (!fs::is_regular_file(status) && !fs::is_symlink(status)) {
                s.left_out.push_back(rel + " (not a file)");
                continue;
            }
            BS_CHECK(copy_one(s, path, to / name));
        }
        return {};
    }

    Status copy_one(ContextSource& s, const fs::path& from, const fs::path& to) {
        if (auto rule = core::credential_file_rule(from)) {
            m_credentials.push_back(
                fmt::format("{} ({}; in {})", from.lexically_relative(m_recipe_dir).string(), *rule, s.what));
            return {};
        }
        std::error_code ec;
        const auto status = fs::symlink_status(from, ec);
        if (fs::is_symlink(status)) {
            const auto target = fs::read_symlink(from, ec);
            if (!ec) fs::create_symlink(target, to, ec);
        } else {
            const auto size = fs::file_size(from, ec);
            if (!ec && (size > m_bytes_left || m_files_left == 0))
                return fail(ErrorCode::usage,
                            fmt::format("{}: '{}' is too big for a build context (more than {} GiB or {} files "
                                        "in all)",
                                        s.what, s.host_path.string(), k_max_context_bytes >> 30, k_max_context_files),
                            "point the recipe at the checkout it needs, not a directory above it");
            if (!ec) {
                m_bytes_left -= size;
                s.bytes += size;
                fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
            }
            // The source's mtime, not the copy's: COPY keeps it, so the same sources give the
            // same layer.
            if (!ec) fs::last_write_time(to, fs::last_write_time(from, ec), ec);
        }
        if (ec)
            return fail(ErrorCode::io, fmt::format("cannot copy '{}' ({}) into the build context: {}", from.string(),
                                                   s.what, ec.message()));
        --m_files_left;
        ++s.files;
        return {};
    }

    std::vector<fs::path> m_skip;
    uint64_t& m_bytes_left;
    size_t& m_files_left;
    fs::path m_recipe_dir;
    std::vector<std::string> m_credentials;
};

/// `/`, a system directory or the home directory, read whole by a step: refused, naming the
/// [vars] value that is it (else the step) and the way that works.
tl::unexpected<Error> refuse_whole(const engine::Plan& plan, const Input& in, const fs::path& path,
                                   const std::string& why) {
    std::string message;
    if (plan.recipe)
        for (const auto& [name, text] : plan.recipe->vars) {
            auto it = plan.vars.find(name);
            if (it == plan.vars.end() || it->second.empty() || fs::path(it->second).lexically_normal() != path)
                continue;
            message = fmt::format("{}: [vars] {} = \"{}\" is {}, which {} reads whole ({})", text.loc.str(), name,
                                  it->second, why, in.step ? fmt::format("step '{}'", in.step->id) : "a step", in.role);
            break;
        }
    if (message.empty()) message = fmt::format("{}: {} '{}' is {}", in.loc.str(), in.what, path.string(), why);
    return fail(ErrorCode::usage,
                message + ": a build context never carries it whole (it would copy all it holds into the image)",
                "name the directory the step reads (a checkout, or a directory of its own such as " +
                    (path / "run").string() +
                    "), not one above it; a directory a step only writes to need not be carried: the step "
                    "creates it in the image");
}

}  // namespace

/// The inputs of `here` (the recipe) paired with where the copy `there` (the context's recipe)
/// will look for them, nested ones folded into the directory that holds them (a repository
/// inside a tree is copied on its own, with its .git). Only what the steps read is carried:
/// their local inputs, the existing paths their argv names (not the system's own, nor the
/// venv's), and a [vars] directory in which one of these (or a path in a step's environment)
/// lies; `/`, a system directory or the home directory among them is refused.
Result<std::vector<ContextSource>> context_sources(const engine::Plan& here, const engine::Plan& there,
                                                   const fs::path& copied_etc, const fs::path& image_etc) {
    const auto host = local_inputs(here);
    const auto image = local_inputs(there);
    const char* home_env = std::getenv("HOME");
    const fs::path home = home_env ? fs::path(home_env) : fs::path();
    std::vector<fs::path> reads = mentioned_paths(here);  // what steps read: a [vars] directory holding one is carried
    std::vector<std::pair<std::string, const Input*>> carried;
    for (const auto& [key, in] : host) {
        if (in.from == Input::From::vars) continue;
        std::error_code ec;
        const auto status = fs::status(in.path, ec);
        if (!fs::exists(status)) continue;  // an optional step's, or one an earlier run step makes (or a word)
        const fs::path path = fs::path(in.path).lexically_normal();
        if (fs::is_directory(status) && in.from != Input::From::program)
            if (auto why = core::whole_directory_refusal(path, home)) return refuse_whole(here, in, path, *why);
        const bool named = in.from == Input::From::argv || in.from == Input::From::program;
        if (named && (system_path(path) || is_under(path, here.venv))) continue;
        reads.push_back(path);
        if (in.from != Input::From::program) carried.emplace_back(key, &in);
    }
    for (const auto& [key, in] : host) {
        if (in.from != Input::From::vars) continue;
        std::error_code ec;
        if (!fs::is_directory(in.path, ec)) continue;
        const fs::path dir = fs::path(in.path).lexically_normal();
        const bool read = std::any_of(reads.begin(), reads.end(),
                                      [&dir = dir](const fs::path& r) { return r == dir || is_under(r, dir); });
        // A [vars] directory that is `/`, a system directory or home: only what the steps read
        // in it is carried (each on its own, refused above when it is one of them itself).
        if (read && !core::whole_directory_refusal(dir, home)) carried.emplace_back(key, &in);
    }
    std::vector<ContextSource> all;
    std::stable_sort(carried.begin(), carried.end(), [](const auto& a, const auto& b) {
        auto rank = [](Input::From f) { return f == Input::From::local_input ? 0 : f == Input::From::vars ? 1 : 2; };
        return rank(a.second->from) < rank(b.second->from);
    });
    for (const auto& [key, in_ptr] : carried) {
        const Input& in = *in_ptr;
        std::error_code ec;
        ContextSource s;
        s.what = in.what;
        s.host_path = fs::path(in.path).lexically_normal();
        s.directory = in.from == Input::From::argv ? fs::is_directory(s.host_path, ec) : in.directory;
        s.repository = in.repository;
        auto it = image.find(key);
        fs::path there_path = it == image.end() ? s.host_path : fs::path(it->second.path).lexically_normal();
        s.image_path = is_under(there_path, copied_etc)
                           ? (image_etc / there_path.lexically_relative(copied_etc.lexically_normal())).string()
                           : there_path.string();
        all.push_back(std::move(s));
    }
    // By path; of the inputs at one path, a step's own (its project, its source) names the copy,
    // then a [vars] directory, then an argv element (`carried` is in that order).
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.host_path < b.host_path; });
    std::vector<ContextSource> out;
    for (auto& s : all) {
        bool covered = false;
        for (auto& o : out) {
            if (!o.directory) continue;
            const bool same = s.host_path == o.host_path;
            if (!same && !is_under(s.host_path, o.host_path)) continue;
            const auto rel = same ? fs::path() : s.host_path.lexically_relative(o.host_path);
            const bool same_place =
                (same ? fs::path(o.image_path) : fs::path(o.image_path) / rel) == fs::path(s.image_path);
            if (same_place && (!s.repository || o.repository || same)) {
                o.repository = o.repository || s.repository;  // the same directory, read as a repository too
                covered = true;
                break;
            }
        }
        if (covered) continue;
        s.context_path = fmt::format("sources/{}", out.size());
        if (!s.directory) s.context_path += "/" + s.host_path.filename().string();
        out.push_back(std::move(s));
    }
    return out;
}

Status copy_file(const fs::path& from, const fs::path& to, std::string_view what) {
    std::error_code ec;
    fs::create_directories(to.parent_path(), ec);
    if (!ec) fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
    if (ec)
        return fail(ErrorCode::io,
                    fmt::format("cannot copy {} '{}' into the build context: {}", what, from.string(), ec.message()));
    return {};
}

/// Each `url` source's archive, into the context (a copy of this machine's cached one, fetched
/// into that cache first when it is not there).
Result<std::vector<ContextDownload>> context_downloads(const engine::Plan& here, const fs::path& stage) {
    std::vector<ContextDownload> out;
    for (const auto& step : here.steps) {
        if (!runs_in_image(here, step)) continue;
        // (The step itself is not complete without the image's venv; its URL and sha256 are.)
        auto archive = steps::archive_of(step);
        if (!archive) continue;
        net::DownloadRequest request = std::move(*archive);
        auto got = net::download(request);
        if (!got)
            return fail(got.error().code,
                        fmt::format("step '{}': cannot fetch its source for the build context: {}", step.id,
                                    got.error().message),
                        "the image's build would need it too; fetch it where this machine can, or name a local copy");
        ContextDownload d;
        d.step_id = step.id;
        d.url = core::redact_text(request.url);
        d.sha256 = request.sha256;
        d.context_path = fmt::format("bootstrap/downloads/{}/{}", request.sha256, request.dest.filename().string());
        d.bytes = got->bytes;
        d.fetched = !got->already_there;
        BS_CHECK(copy_file(got->path, stage / d.context_path, "the source archive"));
        out.push_back(std::move(d));
    }
    return out;
}

Status copy_context_sources(std::vector<ContextSource>& sources, const fs::path& stage, const fs::path& context,
                            const fs::path& recipe_dir) {
    uint64_t bytes_left = k_max_context_bytes;
    size_t files_left = k_max_context_files;
    SourceCopier copier({stage, context}, bytes_left, files_left, recipe_dir);
    for (auto& source : sources) {
        const fs::path to = stage / source.context_path;
        BS_CHECK(core::create_directories(to.parent_path()));
        BS_CHECK(copier.copy(source, to));
    }
    // All of them named at once: the image's layers would keep each (and the context is often
    // sent to a remote builder).
    const auto& found = copier.credentials();
    if (!found.empty()) {
        std::string list;
        for (const auto& f : found) list += "\n  " + f;
        return fail(ErrorCode::usage,
                    fmt::format("{} credential file{} would be copied into the build context (and the image):{}",
                                found.size(), found.size() == 1 ? "" : "s", list),
                    "move them out of the directories the recipe reads, or point the recipe at a directory that "
                    "holds only what its steps read (a build context has no exclusion list: it carries all of a "
                    "directory but .git, venvs, __pycache__ and build trees)");
    }
    return {};
}

}  // namespace bootstrap::image
