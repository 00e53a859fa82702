#include "engine/run_manifests.hpp"

#include <set>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/fs.hpp"
#include "core/strings.hpp"
#include "manifest/snapshot.hpp"
#include "pyenv/name.hpp"
#include "pyenv/wheel_name.hpp"
#include "steps/kind.hpp"

namespace bootstrap::engine {

namespace {

/// A wheel file of this release (PEP 427 name, PEP 503 project name, PEP 440 version).
bool wheel_matches(const fs::path& file, const std::string& name, const std::string& version) {
    auto w = pyenv::parse_wheel_name(file.filename().string());
    return w && pyenv::is_release_of(*w, name, version);
}

std::optional<fs::path> local_wheel_of(const manifest::Package& pkg, const steps::ResolvedStep* step) {
    // Installed from a file path: PEP 610 records a file:// archive URL.
    const auto file = core::after_prefix(pkg.origin.url, "file://");
    if (pkg.origin.kind == manifest::OriginKind::local && file && pkg.origin.url.ends_with(".whl")) {
        fs::path p(*file);
        std::error_code ec;
        if (fs::exists(p, ec)) return p;
    }
    // Installed from a --find-links directory: look for its wheel there.
    const auto* request = step != nullptr ? steps::index_request_of(*step) : nullptr;
    if (request != nullptr)
        for (const auto& dir : request->find_links) {
            std::error_code ec;
            for (const auto& entry : fs::directory_iterator(dir, ec))
                if (wheel_matches(entry.path(), pkg.name, pkg.version)) return entry.path();
        }
    return std::nullopt;
}

}  // namespace

Result<manifest::Manifest> snapshot_for_run(const Plan& plan, const Facts& facts, const std::string& run_id,
                                            const std::string& phase, bool ok) {
    manifest::SnapshotRequest request;
    request.venv = plan.venv;
    request.python = *facts.python;
    request.env = facts.env;
    request.label = phase;
    request.recipe_name = plan.recipe->name;
    request.recipe_digest = plan.recipe->source_digest;
    request.host = facts.host;
    BS_TRY(auto m, manifest::take_snapshot(request));
    m.run = manifest::RunInfo{run_id, phase, core::utc_iso8601(), ok};
    m.device = plan.device_facts;  // empty when no step used {device.*} (nothing was probed)
    return m;
}

namespace {

std::vector<std::string> annotate(manifest::Manifest& after, const manifest::Manifest* previous,
                                  const state::Journal& journal, const Plan* plan, manifest::ArtifactStore* store) {
    std::vector<std::string> warnings;
    // Who installed each distribution, and the indexes it used then (the journal's record;
    // the plan's step only for its find-links directories).
    struct Owner {
        std::string step_id;
        const state::JournalEntry* entry = nullptr;
        const steps::ResolvedStep* step = nullptr;
    };
    std::map<std::string, Owner> owner;
    for (const auto& [id, entry] : journal.steps)
        for (const auto& [name, rec] : entry.dists) owner[name] = Owner{id, &entry, nullptr};
    if (plan != nullptr)
        for (const auto& step : plan->steps)
            for (auto& [name, o] : owner)
                if (o.step_id == step.id) o.step = &step;
    for (auto& [name, pkg] : after.packages) {
        if (previous != nullptr) {
            auto prev = previous->packages.find(name);
            if (prev != previous->packages.end() && prev->second.version == pkg.version &&
                prev->second.record_sha256 == pkg.record_sha256 && pkg.origin.step.empty()) {
                pkg.origin.step = prev->second.origin.step;
                pkg.origin.index_urls = prev->second.origin.index_urls;
                pkg.origin.artifact_sha256 = prev->second.origin.artifact_sha256;
            }
        }
        auto own = owner.find(name);
        const steps::ResolvedStep* step = own == owner.end() ? nullptr : own->second.step;
        if (own != owner.end()) {
            pkg.origin.step = own->second.step_id;
            // The default index first, then the extras (pyenv/index_config.hpp), as recorded
            // when the step ran; a journal from before that record falls back to the plan's.
            auto urls = own->second.entry->index_urls;
            if (urls.empty() && step != nullptr) urls = step->index_urls();
            if ((pkg.origin.kind == manifest::OriginKind::index || pkg.origin.kind == manifest::OriginKind::unknown) &&
                !urls.empty())
                pkg.origin.index_urls = urls;
        }
        // A locked run installed each package from the indexes the lock names for it.
        if (plan != nullptr &&
            (pkg.origin.kind == manifest::OriginKind::index || pkg.origin.kind == manifest::OriginKind::unknown))
            if (auto locked = plan->locked_indexes.find(name); locked != plan->locked_indexes.end())
                pkg.origin.index_urls = locked->second;
        if (store == nullptr) continue;
        if (!pkg.origin.artifact_sha256.empty() && store->find(pkg.origin.artifact_sha256)) continue;
        if (auto wheel = local_wheel_of(pkg, step)) {
            auto digest = store->add(*wheel);
            if (digest) pkg.origin.artifact_sha256 = *digest;
            else
                warnings.push_back(
                    fmt::format("cannot keep {} in the artifact store: {}", wheel->string(), digest.error().message));
        }
    }
    return warnings;
}

}  // namespace

std::vector<std::string> annotate_origins(manifest::Manifest& after, const manifest::Manifest* previous,
                                          const state::Journal& journal, const Plan& plan,
                                          manifest::ArtifactStore& store) {
    return annotate(after, previous, journal, &plan, &store);
}

namespace {

/// Whether the newest history entry (`text`) can tell annotate() anything the journal does not:
/// the journal sets the step and the indexes of every package its steps installed from an index
/// (when it recorded them), so that entry matters only for a package the journal does not own
/// that way, or for a stored wheel (artifact_sha256) it names. Reading the entry whole costs
/// more than the snapshot of a 3,000-package venv, and in a venv bootstrap manages it usually
/// adds nothing. A `\u` escape anywhere could spell a key: then it is read.
bool newest_entry_matters(const manifest::Manifest& m, const state::Journal& journal, std::string_view text) {
    if (text.find("\"artifact_sha256\"") != std::string_view::npos || text.find("\\u") != std::string_view::npos)
        return true;
    std::set<std::string_view> owned;  // installed by a step that recorded its indexes
    for (const auto& [id, entry] : journal.steps)
        if (!entry.index_urls.empty())
            for (const auto& [name, rec] : entry.dists) owned.insert(name);
    // A name two steps own counts only when neither lacks the record (annotate() takes the later).
    for (const auto& [id, entry] : journal.steps)
        if (entry.index_urls.empty())
            for (const auto& [name, rec] : entry.dists) owned.erase(name);
    for (const auto& [name, pkg] : m.packages) {
        const bool from_index =
            pkg.origin.kind == manifest::OriginKind::index || pkg.origin.kind == manifest::OriginKind::unknown;
        if (!from_index || !owned.count(name)) return true;
    }
    return false;
}

}  // namespace

std::vector<std::string> annotate_from_records(manifest::Manifest& m, const fs::path& venv) {
    return annotate_from_records(m, venv, state::Journal::load(venv));
}

std::vector<std::string> annotate_from_records(manifest::Manifest& m, const fs::path& venv,
                                               Result<state::Journal> loaded) {
    std::vector<std::string> warnings;
    state::Journal journal;
    if (loaded) journal = std::move(*loaded);
    else warnings.push_back(loaded.error().message);
    std::optional<manifest::Manifest> newest;
    if (auto entries = manifest::list_history(venv); entries && !entries->empty()) {
        const fs::path& file = entries->back().file;
        auto text = core::read_regular_file(file, core::k_max_user_input);
        if (!text) {
            warnings.push_back(text.error().message);
        } else if (newest_entry_matters(m, journal, *text)) {
            if (auto loaded = manifest::from_json(*text, file.string())) newest = std::move(*loaded);
            else warnings.push_back(loaded.error().message);
        }
    }
    auto more = annotate(m, newest ? &*newest : nullptr, journal, nullptr, nullptr);
    warnings.insert(warnings.end(), more.begin(), more.end());
    return warnings;
}

}  // namespace bootstrap::engine
