#include "engine/install_repair.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/interrupt.hpp"
#include "core/strings.hpp"
#include "pyenv/broken_install.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/name.hpp"
#include "state/layout.hpp"

namespace bootstrap::engine {

namespace {

constexpr std::string_view k_header = "bootstrap changing 1\n";

fs::path records_dir(const fs::path& venv) { return state::Layout(venv).changing_records(); }

/// Keep every dist-info's RECORD of `site` in `into` (those of `only`'s names, when given): a
/// hard link (the installer replaces or removes RECORD, never rewrites it in place), else a copy.
Status keep_records(const fs::path& site, const fs::path& into, const std::vector<std::string>& only) {
    BS_CHECK(core::create_directories(into));
    std::error_code ec;
    fs::directory_iterator it(site, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() != ".dist-info") continue;
        if (!only.empty()) {
            const std::string entry = it->path().filename().string();
            if (std::find(only.begin(), only.end(), pyenv::normalize_name(entry.substr(0, entry.find('-')))) ==
                only.end())
                continue;
        }
        const fs::path record = it->path() / "RECORD", kept = into / it->path().filename();
        std::error_code link_ec;
        if (!fs::is_regular_file(fs::symlink_status(record, link_ec))) continue;
        fs::create_hard_link(record, kept, link_ec);
        if (!link_ec) continue;
        auto text = core::read_regular_file(record, pyenv::k_max_dist_info_file);
        if (text) BS_CHECK(core::write_file_atomic(kept, *text));
    }
    if (ec) return fail(ErrorCode::io, fmt::format("cannot read {}: {}", site.string(), ec.message()));
    return {};
}

/// A dist-info in `site` named `name` that is whole (METADATA and RECORD there).
bool whole(const fs::path& site, const fs::path& name) {
    std::error_code ec;
    return fs::is_regular_file(site / name / "METADATA", ec) && fs::is_regular_file(site / name / "RECORD", ec);
}

/// Files kept RECORDs name that an uninstall cut short left behind (see the header).
Result<std::vector<std::string>> remove_left_behind(const fs::path& venv, const std::vector<fs::path>& sites) {
    std::vector<std::string> notes;
    for (size_t i = 0; i < sites.size(); ++i) {
        const fs::path kept = records_dir(venv) / std::to_string(i);
        std::error_code ec;
        if (!fs::is_directory(kept, ec)) continue;
        std::vector<fs::path> records;
        for (fs::directory_iterator it(kept, ec), end; !ec && it != end; it.increment(ec))
            records.push_back(it->path());
        std::sort(records.begin(), records.end());
        for (const auto& record : records) {
            if (whole(sites[i], record.filename())) continue;
            auto text = core::read_regular_file(record, pyenv::k_max_dist_info_file);
            if (!text) continue;
            BS_TRY(size_t removed, pyenv::remove_unclaimed_files(sites[i], *text));
            if (removed > 0)
                notes.push_back(
                    fmt::format("removed {} file(s) {} had installed: its uninstall was cut short after "
                                "its dist-info went, and no installed distribution claims them",
                                removed, record.filename().stem().string()));
        }
    }
    return notes;
}

}  // namespace

fs::path changing_marker_path(const fs::path& venv) { return state::Layout(venv).changing(); }

std::optional<ChangingMarker> read_changing_marker(const fs::path& venv) {
    const fs::path file = changing_marker_path(venv);
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(file, ec))) return std::nullopt;
    ChangingMarker marker;
    auto text = core::read_regular_file(file, 64 << 10);
    if (!text || !text->starts_with(k_header)) return marker;
    for (const auto& line : core::split(std::string_view(*text).substr(k_header.size()), '\n')) {
        const auto space = line.find(' ');
        if (space == std::string::npos) continue;
        const std::string field = line.substr(0, space), value = line.substr(space + 1);
        if (field == "step") marker.step = value;
        else if (field == "run") marker.run_id = value;
        else if (field == "since") marker.since = value;
    }
    return marker;
}

Status mark_changing(const fs::path& venv, const ChangingMarker& marker, const pyenv::InterpreterFacts* facts,
                     const std::vector<std::string>& only) {
    // Step ids and run ids are single tokens; a newline would end the field early, so none is written.
    auto field = [](std::string_view v) {
        std::string s(v);
        std::erase(s, '\n');
        return s;
    };
    std::error_code ec;
    fs::remove_all(records_dir(venv), ec);
    std::string sites;
    if (facts != nullptr) {
        const auto dirs = pyenv::sites_of(*facts);
        for (size_t i = 0; i < dirs.size(); ++i) {
            BS_CHECK(keep_records(dirs[i], records_dir(venv) / std::to_string(i), only));
            sites += fmt::format("site {} {}\n", i, field(dirs[i].string()));
        }
    }
    return core::write_file_atomic(changing_marker_path(venv),
                                   fmt::format("{}step {}\nrun {}\nsince {}\n{}", k_header, field(marker.step),
                                               field(marker.run_id), field(marker.since), sites));
}

Status clear_changing(const fs::path& venv) {
    std::error_code ec;
    fs::remove(changing_marker_path(venv), ec);
    if (ec)
        return fail(ErrorCode::io,
                    fmt::format("cannot remove {}: {}", changing_marker_path(venv).string(), ec.message()));
    fs::remove_all(records_dir(venv), ec);  // only what the marker kept: without it, nothing reads them
    return {};
}

std::string describe(const ChangingMarker& marker) {
    std::string who = marker.step.empty() ? std::string("a rollback") : fmt::format("step `{}`", marker.step);
    if (!marker.run_id.empty()) who += fmt::format(" (run {})", marker.run_id);
    if (!marker.since.empty()) who += fmt::format(", started {},", marker.since);
    return who + " was stopped while it changed the venv";
}

Result<std::vector<std::string>> repair_incomplete_installs(const pyenv::InterpreterFacts& facts,
                                                            const fs::path& venv) {
    BS_TRY(auto notes, remove_left_behind(venv, pyenv::sites_of(facts)));
    BS_TRY(auto incomplete, pyenv::remove_incomplete_installs(facts, venv));
    notes.insert(notes.end(), incomplete.begin(), incomplete.end());
    if (core::interrupt_signal() != 0)
        return fail(ErrorCode::interrupted,
                    "interrupted while checking the installed files against their RECORDs; the next run checks "
                    "again");
    BS_CHECK(clear_changing(venv));
    return notes;
}

}  // namespace bootstrap::engine
