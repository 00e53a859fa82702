// Venv integrity (README pitfall P4): pyvenv.cfg's home exists, and bin/ shebangs and activate*
// scripts name this venv, not the one it was copied from. `relocate` rewrites them.

#include <algorithm>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/strings.hpp"
#include "doctor/checks.hpp"
#include "doctor/checks_util.hpp"
#include "pyenv/interpreter.hpp"
#include "pyenv/relocate.hpp"

namespace bootstrap::doctor {

namespace {

using detail::make_finding;
using recipe::Severity;

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

fs::path canonical_or_same(const fs::path& p) {
    std::error_code ec;
    auto c = fs::weakly_canonical(p, ec);
    return ec ? p : c;
}

}  // namespace

fs::path find_site_packages(const fs::path& venv) {
    std::error_code ec;
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(venv / "lib", ec))
        if (core::starts_with(e.path().filename().string(), "python") &&
            fs::is_directory(e.path() / "site-packages", ec))
            found.push_back(e.path() / "site-packages");
    std::sort(found.begin(), found.end());
    return found.empty() ? fs::path{} : found.front();
}

std::vector<Finding> check_venv_integrity(const DoctorOptions& options, CheckSummary* summary) {
    std::vector<Finding> out;
    const fs::path& venv = options.venv;
    auto cfg = pyenv::read_pyvenv_cfg(venv);
    if (!cfg) {
        out.push_back(make_finding("venv", Severity::error,
                                   fmt::format("{} is not a venv: {}", venv.string(), cfg.error().message),
                                   {(venv / "pyvenv.cfg").string()}, "create it: " + detail::run_command(options, "")));
        detail::summarize(summary, "venv", "not a venv (no pyvenv.cfg)");
        return out;
    }
    // Filled in as the checks pass: the base interpreter, then bin/'s paths.
    detail::summarize(summary, "venv", "pyvenv.cfg's base interpreter and bin/'s paths ok");
    std::error_code ec;
    if (auto home = cfg->find("home"); home == cfg->end() || !fs::is_directory(home->second, ec))
        out.push_back(make_finding("venv", Severity::error,
                                   fmt::format("pyvenv.cfg's home {} does not exist: the base interpreter is gone",
                                               home == cfg->end() ? "(missing)" : home->second),
                                   {(venv / "pyvenv.cfg").string()},
                                   "recreate the venv on this machine: " + detail::run_command(options, "--recreate")));
    if (!out.empty()) detail::summarize(summary, "venv", "the base interpreter is gone");
    if (const size_t gone = check_editable_sources(options, out); gone > 0)
        detail::summarize(summary, "venv",
                          fmt::format("{}{} missing", out.size() > gone ? "the base interpreter is gone, " : "",
                                      detail::count_of(gone, "editable source", "editable sources")));

    auto origin = pyenv::detect_venv_origin(venv);
    fs::path here = canonical_or_same(venv);
    if (!origin || canonical_or_same(*origin) == here) return out;
    std::vector<std::string> stale;
    for (const auto& e : fs::directory_iterator(venv / "bin", ec)) {
        auto text = pyenv::read_script_text(e.path());
        if (!text || pyenv::prefix_positions(*text, origin->string()).empty()) continue;
        std::string name = e.path().filename().string();
        stale.push_back(core::starts_with(*text, "#!") ? fmt::format("bin/{}: {}", name, first_line(*text))
                                                       : fmt::format("bin/{}", name));
    }
    std::sort(stale.begin(), stale.end());
    detail::summarize(
        summary, "venv",
        fmt::format("{}{} in bin/ name {} (copied or moved)", out.empty() ? "" : "the base interpreter is gone, ",
                    detail::count_of(stale.size(), "file", "files"), origin->string()));
    out.push_back(
        make_finding("venv", Severity::error,
                     fmt::format("{} file(s) in bin/ point to {}, not to this venv {} (copied or moved)", stale.size(),
                                 origin->string(), here.string()),
                     stale,
                     fmt::format("bootstrap relocate --venv {} (or recreate it: {})", core::shell_quote(venv.string()),
                                 detail::run_command(options, "--recreate")),
                     "console scripts run the interpreter named in their shebang, and `activate` sets "
                     "VIRTUAL_ENV to the old path (README pitfall P4)"));
    return out;
}

}  // namespace bootstrap::doctor
