#pragma once
// A venv in an image, checked where it runs: the image's defaults (recipe/image_defaults.hpp)
// applied to what a plan reads, and the state `bootstrap seal` leaves (image/seal.hpp) kept as
// a fixed point: `plan --check` passes and a first `run` writes nothing.
//
// The journal's venv_state is normally a digest of RECORD stat stamps, which no copy of a venv
// (an image layer, an unpack) keeps. A sealed venv records instead a content state: a digest of
// each distribution's name, version and RECORD digest ("content:" + hex), which holds wherever
// the same files are. While `.bootstrap/sealed` is there, bootstrap writes no stat-keyed cache
// into the venv (python.facts, torch.facts, torch-probe.json) and does not refresh stamps: a
// run that finds every step up to date changes nothing. A run that changes the venv removes the
// marker (the venv is then an ordinary one again).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "engine/facts.hpp"
#include "engine/plan.hpp"
#include "pyenv/dist_info.hpp"

namespace bootstrap::engine {

namespace fs = std::filesystem;

/// Apply the image's defaults (recipe::image_defaults(), when the file exists) to `facts.env`:
/// each variable the environment does not set, and a stand-in for each recorded secret it does
/// not set (listed in facts.image_secrets_missing).
[[nodiscard]] Status apply_image_defaults(Facts& facts);

/// A note (and a notice) in `plan` for each step that reads a secret the image does not keep.
void note_image_secrets(const Facts& facts, Plan& plan);

/// Refused (usage), naming the step and the variable, when `step` reads a secret of
/// facts.image_secrets_missing: its stand-in must never reach a step that runs.
[[nodiscard]] Status check_image_secrets(const steps::ResolvedStep& step, const Facts& facts);

inline constexpr std::string_view k_content_state_prefix = "content:";

/// "content:" + sha256 over each distribution's name, version and RECORD digest.
[[nodiscard]] Result<std::string> content_state(const std::map<std::string, pyenv::Distribution>& installed);

[[nodiscard]] bool is_content_state(std::string_view venv_state);

/// `<venv>/.bootstrap/sealed`: its first line "sealed", then `build_time <ISO 8601>` when the
/// seal ran under SOURCE_DATE_EPOCH (the time the image build's records hold).
[[nodiscard]] fs::path sealed_marker(const fs::path& venv);
[[nodiscard]] bool is_sealed(const fs::path& venv);
[[nodiscard]] std::string sealed_marker_text(const std::optional<std::string>& build_time);
/// The build time the marker records; nullopt when none (or no marker).
[[nodiscard]] std::optional<std::string> sealed_build_time(const fs::path& venv);
/// Remove the marker (a run is about to change the venv).
[[nodiscard]] Status unseal(const fs::path& venv);

}  // namespace bootstrap::engine
