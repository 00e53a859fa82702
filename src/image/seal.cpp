#include "image/seal.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/fs.hpp"
#include "core/strings.hpp"
#include "engine/image_state.hpp"
#include "engine/skip_rule.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/record.hpp"
#include "state/journal.hpp"
#include "state/layout.hpp"
#include "state/venv_lock.hpp"

namespace bootstrap::image {

namespace {

constexpr const char* k_uv_cache_json = "uv_cache.json";

/// The venv's site-packages directories (lib/pythonX.Y/site-packages, and lib64's when it is
/// not the same directory), without asking the interpreter.
std::vector<fs::path> site_packages_dirs(const fs::path& venv) {
    std::vector<fs::path> out;
    std::set<fs::path> seen;
    std::error_code ec;
    for (const char* lib : {"lib", "lib64"}) {
        for (const auto& entry : fs::directory_iterator(venv / lib, ec)) {
            const fs::path site = entry.path() / "site-packages";
            if (!core::starts_with(entry.path().filename().string(), "python") || !fs::is_directory(site, ec)) continue;
            auto real = fs::canonical(site, ec);
            if (!ec && seen.insert(real).second) out.push_back(site);
        }
        ec.clear();
    }
    return out;
}

/// Remove uv's uv_cache.json from every dist-info that has one: its RECORD row first (so an
/// interrupt never leaves a row without its file), then the file.
Status drop_uv_cache_files(const fs::path& venv, SealReport& report) {
    std::error_code ec;
    for (const auto& site : site_packages_dirs(venv)) {
        std::vector<fs::path> dist_infos;
        fs::directory_iterator it(site, ec), end;
        for (; !ec && it != end; it.increment(ec)) {
            std::error_code missing;  // most dist-infos have none
            if (it->path().extension() == ".dist-info" && fs::is_regular_file(it->path() / k_uv_cache_json, missing))
                dist_infos.push_back(it->path());
        }
        if (ec) return fail(ErrorCode::io, fmt::format("cannot read {}: {}", site.string(), ec.message()));
        std::sort(dist_infos.begin(), dist_infos.end());
        for (const auto& dist_info : dist_infos) {
            const std::string row = (dist_info.filename() / k_uv_cache_json).generic_string();
            if (fs::is_regular_file(dist_info / "RECORD", ec)) BS_CHECK(pyenv::disown_paths(dist_info, {row}));
            ec.clear();
            const fs::path file = dist_info / k_uv_cache_json;
            if (!fs::remove(file, ec) && ec)
                return fail(ErrorCode::io, fmt::format("cannot remove {}: {}", file.string(), ec.message()));
            report.removed.push_back(file.lexically_relative(venv).generic_string());
        }
    }
    return {};
}

/// The venv's installed distributions, read from its site-packages without asking the
/// interpreter (as scan_venv_packages would list them).
Result<std::map<std::string, pyenv::Distribution>> installed_of(const fs::path& venv) {
    std::map<std::string, pyenv::Distribution> out;
    for (const auto& site : site_packages_dirs(venv)) {
        BS_TRY(auto dists, pyenv::scan_site_packages(site));
        out.merge(dists);
    }
    return out;
}

/// The journal keeps what each step did and owns; what this filesystem and this run's clock
/// said (RECORD stat stamps, seconds, the log that is gone) is reset, and the venv_state each
/// passed step's verify clauses saw (a digest of stamps) becomes the same venv's content state
/// (engine/image_state.hpp), so that the sealed venv stays at its fixed point wherever it is
/// copied to. A state that was not the venv's as it is now (a step verified against another
/// venv) is cleared: that step verifies again.
/// `stat_state`: the venv's installed_state before the seal changed any RECORD.
Status reset_journal(const fs::path& venv, const std::string& stat_state, SealReport& report) {
    std::error_code ec;
    if (!fs::exists(state::Journal::path_for(venv), ec)) return {};
    BS_TRY(auto journal, state::Journal::load(venv));
    BS_TRY(const auto installed, installed_of(venv));
    BS_TRY(const auto content, engine::content_state(installed));
    for (auto& [id, entry] : journal.steps) {
        entry.seconds = 0;
        entry.log.clear();
        entry.venv_state = entry.venv_state == stat_state || entry.venv_state == content ? content : std::string();
        for (auto& [name, dist] : entry.dists) dist.stamp = {};
        ++report.journal_steps;
    }
    return journal.save(venv);
}

}  // namespace

Result<SealReport> seal_venv(const fs::path& venv, double lock_timeout) {
    std::error_code ec;
    const state::Layout layout(venv);
    if (!layout.exists())
        return fail(ErrorCode::not_found,
                    fmt::format("cannot seal {}: it has no .bootstrap/ (no bootstrap run made it)", venv.string()));
    SealReport report;
    const fs::path lock_file = layout.lock();
    const auto lock_size = fs::file_size(lock_file, ec);  // acquiring makes one, naming this process
    const bool had_lock = !ec && lock_size > 0;
    {
        BS_TRY(auto lock, state::VenvLock::acquire(venv, lock_timeout));
        BS_TRY(const auto before, installed_of(venv));  // before uv_cache.json rows leave RECORDs
        BS_CHECK(drop_uv_cache_files(venv, report));
        BS_CHECK(reset_journal(venv, engine::installed_state(before), report));
        BS_TRY(auto dropped, state::drop_host_local_state(venv));
        report.removed.insert(report.removed.end(), dropped.begin(), dropped.end());
        // Dated as the records are (SOURCE_DATE_EPOCH: the image build's time), for `history`
        // and `doctor` to show as "during the image build".
        BS_TRY(auto epoch, core::source_date_epoch());
        std::optional<std::string> build_time;
        if (epoch) build_time = core::format_utc(*epoch, "%Y-%m-%dT%H:%M:%SZ");
        BS_CHECK(core::write_file_atomic(engine::sealed_marker(venv), engine::sealed_marker_text(build_time)));
        // The lock file is emptied while it is held (it named this process): nothing may run
        // in a venv being sealed anyway (the last command of an image build). It stays, empty,
        // so that a later run that finds every step up to date can confirm so under a shared
        // lock without creating a file (engine/image_state.hpp).
        BS_CHECK(core::write_file_atomic(lock_file, ""));
        if (had_lock) report.removed.push_back(lock_file.lexically_relative(venv).generic_string() + " (emptied)");
    }
    return report;
}

}  // namespace bootstrap::image
