// Venv integrity (README pitfall P4): pyvenv.cfg's home exists, and bin/ shebangs and activate*
// scripts name this venv, not the one it was copied from. `relocate` rewrites them.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/strings.hpp"
#include "doctor/checks.hpp"
#include "doctor/checks_util.hpp"
#include "pyenv/interpreter.hpp"

namespace bootstrap::doctor {

namespace {

using detail::make_finding;
using recipe::Severity;

constexpr size_t k_max_script_bytes = 1 << 20;

/// The file's text when it is a small text file (no NUL in it), else nullopt.
std::optional<std::string> read_text(const fs::path &file) {
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(file, ec)) ||
        fs::file_size(file, ec) > k_max_script_bytes)
        return std::nullopt;
    auto text = core::read_file(file);
    if (!text || text->find('\0') != std::string::npos)
        return std::nullopt;
    return *text;
}

bool is_path_end(char c) {
    return c == '/' || c == '\'' || c == '"' || c == '\n' || c == ' ' || c == '\t' || c == ':';
}

/// Occurrences of `prefix` in `text` as a whole path (followed by a path end or the text end).
std::vector<size_t> prefix_positions(const std::string &text, const std::string &prefix) {
    std::vector<size_t> out;
    for (size_t pos = text.find(prefix); pos != std::string::npos;
         pos = text.find(prefix, pos + 1)) {
        size_t end = pos + prefix.size();
        if (end == text.size() || is_path_end(text[end]))
            out.push_back(pos);
    }
    return out;
}

std::string first_line(const std::string &text) {
    return text.substr(0, text.find('\n'));
}

fs::path canonical_or_same(const fs::path &p) {
    std::error_code ec;
    auto c = fs::weakly_canonical(p, ec);
    return ec ? p : c;
}

/// Write `text` to `file` through a temp file in the same directory that gets `mode` before
/// the rename, so the file is never seen half-written or with another mode.
Status write_with_mode(const fs::path &file, const std::string &text, mode_t mode) {
    fs::path tmp =
        file.parent_path() / fmt::format(".{}.tmp-{}", file.filename().string(), ::getpid());
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f << text;
        f.close();
        if (!f) {
            std::error_code ec;
            fs::remove(tmp, ec);
            return fail(ErrorCode::io, fmt::format("cannot write {}", tmp.string()));
        }
    }
    std::error_code ec;
    if (::chmod(tmp.c_str(), mode) != 0) {
        fs::remove(tmp, ec);
        return fail(ErrorCode::io, fmt::format("cannot set the mode of {}", tmp.string()));
    }
    fs::rename(tmp, file, ec);
    if (ec) {
        fs::remove(tmp, ec);
        return fail(ErrorCode::io,
                    fmt::format("cannot replace {}: {}", file.string(), ec.message()));
    }
    return {};
}

} // namespace

fs::path find_site_packages(const fs::path &venv) {
    std::error_code ec;
    std::vector<fs::path> found;
    for (const auto &e : fs::directory_iterator(venv / "lib", ec))
        if (core::starts_with(e.path().filename().string(), "python") &&
            fs::is_directory(e.path() / "site-packages", ec))
            found.push_back(e.path() / "site-packages");
    std::sort(found.begin(), found.end());
    return found.empty() ? fs::path{} : found.front();
}

Result<fs::path> detect_venv_origin(const fs::path &venv) {
    static const std::regex line(R"(^\s*(?:export\s+)?VIRTUAL_ENV=['"]?([^'"\n]+)['"]?\s*$)");
    auto text = core::read_file(venv / "bin" / "activate");
    if (!text)
        return fail(ErrorCode::not_found, fmt::format("cannot tell where {} was made: {}",
                                                      venv.string(), text.error().message));
    for (const auto &l : core::split(*text, '\n')) {
        std::smatch m;
        // std::regex recurses per character; no path is longer than PATH_MAX (4096).
        if (l.size() <= 4096 && std::regex_match(l, m, line) && m[1].str().front() == '/')
            return fs::path(m[1].str());
    }
    return fail(ErrorCode::not_found,
                fmt::format("cannot tell where {} was made: no VIRTUAL_ENV= line in {}",
                            venv.string(), (venv / "bin" / "activate").string()));
}

std::vector<Finding> check_venv_integrity(const DoctorOptions &options, CheckSummary *summary) {
    std::vector<Finding> out;
    const fs::path &venv = options.venv;
    auto cfg = pyenv::read_pyvenv_cfg(venv);
    if (!cfg) {
        out.push_back(
            make_finding("venv", Severity::error,
                         fmt::format("{} is not a venv: {}", venv.string(), cfg.error().message),
                         {(venv / "pyvenv.cfg").string()}, "create it: bootstrap run RECIPE"));
        detail::summarize(summary, "venv", "not a venv (no pyvenv.cfg)");
        return out;
    }
    // Filled in as the checks pass: the base interpreter, then bin/'s paths.
    detail::summarize(summary, "venv", "pyvenv.cfg's base interpreter and bin/'s paths ok");
    std::error_code ec;
    if (auto home = cfg->find("home"); home == cfg->end() || !fs::is_directory(home->second, ec))
        out.push_back(make_finding(
            "venv", Severity::error,
            fmt::format("pyvenv.cfg's home {} does not exist: the base interpreter is gone",
                        home == cfg->end() ? "(missing)" : home->second),
            {(venv / "pyvenv.cfg").string()},
            "recreate the venv on this machine: bootstrap run RECIPE --recreate"));
    if (!out.empty())
        detail::summarize(summary, "venv", "the base interpreter is gone");

    auto origin = detect_venv_origin(venv);
    fs::path here = canonical_or_same(venv);
    if (!origin || canonical_or_same(*origin) == here)
        return out;
    std::vector<std::string> stale;
    for (const auto &e : fs::directory_iterator(venv / "bin", ec)) {
        auto text = read_text(e.path());
        if (!text || prefix_positions(*text, origin->string()).empty())
            continue;
        std::string name = e.path().filename().string();
        stale.push_back(core::starts_with(*text, "#!")
                            ? fmt::format("bin/{}: {}", name, first_line(*text))
                            : fmt::format("bin/{}", name));
    }
    std::sort(stale.begin(), stale.end());
    detail::summarize(summary, "venv",
                      fmt::format("{}{} in bin/ name {} (copied or moved)",
                                  out.empty() ? "" : "the base interpreter is gone, ",
                                  detail::count_of(stale.size(), "file", "files"),
                                  origin->string()));
    out.push_back(make_finding(
        "venv", Severity::error,
        fmt::format("{} file(s) in bin/ point to {}, not to this venv {} (copied or moved)",
                    stale.size(), origin->string(), here.string()),
        stale,
        fmt::format("bootstrap relocate --venv {} (or recreate it: bootstrap run RECIPE "
                    "--recreate)",
                    venv.string()),
        "console scripts run the interpreter named in their shebang, and `activate` sets "
        "VIRTUAL_ENV to the old path (README pitfall P4)"));
    return out;
}

Result<RelocateReport> relocate_venv(const fs::path &venv, fs::path old_prefix) {
    RelocateReport report;
    if (old_prefix.empty()) {
        BS_TRY(old_prefix, detect_venv_origin(venv));
    }
    report.old_prefix = old_prefix;
    std::string from = old_prefix.lexically_normal().string();
    while (from.size() > 1 && from.back() == '/')
        from.pop_back();
    std::string to = canonical_or_same(fs::absolute(venv)).string();
    if (from == to)
        return report;
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto &e : fs::directory_iterator(venv / "bin", ec))
        files.push_back(e.path());
    if (ec)
        return fail(ErrorCode::io,
                    fmt::format("cannot list {}: {}", (venv / "bin").string(), ec.message()));
    std::sort(files.begin(), files.end());
    for (const auto &file : files) {
        auto text = read_text(file);
        if (!text)
            continue;
        auto positions = prefix_positions(*text, from);
        if (positions.empty())
            continue;
        std::string rewritten;
        size_t last = 0;
        for (size_t pos : positions) {
            rewritten.append(*text, last, pos - last);
            rewritten += to;
            last = pos + from.size();
        }
        rewritten.append(*text, last, std::string::npos);
        struct stat st {};
        if (::stat(file.c_str(), &st) != 0)
            return fail(ErrorCode::io, fmt::format("cannot stat {}", file.string()));
        BS_CHECK(write_with_mode(file, rewritten, st.st_mode & 07777));
        report.rewritten.push_back(file);
    }
    return report;
}

} // namespace bootstrap::doctor
