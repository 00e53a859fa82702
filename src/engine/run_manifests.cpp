#include "engine/run_manifests.hpp"

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/strings.hpp"
#include "manifest/snapshot.hpp"
#include "pyenv/name.hpp"

namespace bootstrap::engine {

namespace {

/// The value of a flag in an installer argv ("--index-url X"), in order of appearance.
std::vector<std::string> flag_values(const std::vector<std::string>& argv, std::string_view flag) {
    std::vector<std::string> out;
    for (size_t i = 0; i + 1 < argv.size(); ++i)
        if (argv[i] == flag) out.push_back(argv[i + 1]);
    return out;
}

/// PEP 427: the distribution part of a wheel file name is normalised with '_' for runs of
/// [-_.]; compare on PEP 503 names and the version part.
bool wheel_matches(const fs::path& file, const std::string& name, const std::string& version) {
    std::string stem = file.filename().string();
    if (!stem.ends_with(".whl")) return false;
    auto parts = core::split(stem.substr(0, stem.size() - 4), '-');
    if (parts.size() < 5) return false;
    return pyenv::normalize_name(parts[0]) == name && parts[1] == version;
}

std::optional<fs::path> local_wheel_of(const manifest::Package& pkg, const steps::ResolvedStep* step) {
    // Installed from a file path: PEP 610 records a file:// archive URL.
    if (pkg.origin.kind == "local" && core::starts_with(pkg.origin.url, "file://") &&
        pkg.origin.url.ends_with(".whl")) {
        fs::path p = pkg.origin.url.substr(7);
        if (fs::exists(p)) return p;
    }
    // Installed from a --find-links directory: look for its wheel there.
    if (step != nullptr)
        for (const auto& dir : flag_values(step->argv, "--find-links")) {
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
    BS_TRY(auto m, manifest::take_snapshot(request));
    m.run = manifest::RunInfo{run_id, phase, core::utc_iso8601(), ok};
    m.device = plan.device_facts;  // empty when no step used {device.*} (nothing was probed)
    return m;
}

std::vector<std::string> annotate_origins(manifest::Manifest& after, const manifest::Manifest* previous,
                                          const Journal& journal, const Plan& plan,
                                          manifest::ArtifactStore& store) {
    std::vector<std::string> warnings;
    std::map<std::string, const steps::ResolvedStep*> owner;
    for (const auto& step : plan.steps) {
        auto it = journal.steps.find(step.id);
        if (it == journal.steps.end()) continue;
        for (const auto& [name, rec] : it->second.dists) owner[name] = &step;
    }
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
        const steps::ResolvedStep* step = own == owner.end() ? nullptr : own->second;
        if (step != nullptr) {
            pkg.origin.step = step->id;
            if (pkg.origin.kind == "index" || pkg.origin.kind == "unknown") {
                // uv lets extra indexes take precedence; both lists are kept in argv order.
                auto urls = flag_values(step->argv, "--index-url");
                auto extra = flag_values(step->argv, "--extra-index-url");
                urls.insert(urls.end(), extra.begin(), extra.end());
                if (!urls.empty()) pkg.origin.index_urls = urls;
            }
        }
        if (!pkg.origin.artifact_sha256.empty() && store.find(pkg.origin.artifact_sha256)) continue;
        if (auto wheel = local_wheel_of(pkg, step)) {
            auto digest = store.add(*wheel);
            if (digest)
                pkg.origin.artifact_sha256 = *digest;
            else
                warnings.push_back(fmt::format("cannot keep {} in the artifact store: {}", wheel->string(),
                                               digest.error().message));
        }
    }
    return warnings;
}

}  // namespace bootstrap::engine
