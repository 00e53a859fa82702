#include "engine/image_state.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "recipe/image_defaults.hpp"
#include "state/layout.hpp"

namespace bootstrap::engine {

namespace {

constexpr std::uint64_t k_max_marker_bytes = 4096;

const recipe::ImageSecret* secret_of(const steps::ResolvedStep& step, const Facts& facts) {
    for (const auto& s : facts.image_secrets_missing)
        if (std::find(s.steps.begin(), s.steps.end(), step.id) != s.steps.end()) return &s;
    return nullptr;
}

std::string needs_text(std::string_view step, std::string_view name) {
    return fmt::format(
        "step '{}' needs {}, a secret this image does not keep (its build was given it as a build secret): set {} "
        "in the container's environment before a run that runs the step",
        step, name, name);
}

}  // namespace

Status apply_image_defaults(Facts& facts) {
    BS_TRY(auto defaults, recipe::image_defaults());
    if (!defaults) return {};
    recipe::apply_image_env(*defaults, facts.env);
    facts.image_secrets_missing = recipe::missing_image_secrets(*defaults, facts.env);
    // A secret's value is in no key: a stand-in lets the recipe plan as it did in the build.
    for (const auto& s : facts.image_secrets_missing)
        facts.env.emplace(s.name, fmt::format("<{}: not kept in the image>", s.name));
    return {};
}

void note_image_secrets(const Facts& facts, Plan& plan) {
    for (const auto& step : plan.steps)
        if (const auto* s = secret_of(step, facts)) {
            plan.notes.push_back(needs_text(step.id, s->name));
            plan.notices.push_back(needs_text(step.id, s->name));
        }
}

Status check_image_secrets(const steps::ResolvedStep& step, const Facts& facts) {
    if (const auto* s = secret_of(step, facts)) return fail(ErrorCode::usage, needs_text(step.id, s->name));
    return {};
}

Result<std::string> content_state(const std::map<std::string, pyenv::Distribution>& installed) {
    std::string material;
    for (const auto& [name, dist] : installed) {
        BS_TRY(auto digest, pyenv::record_digest(dist));
        fmt::format_to(std::back_inserter(material), "{} {} {}\n", name, dist.version, digest);
    }
    return std::string(k_content_state_prefix) + core::sha256_hex(material);
}

bool is_content_state(std::string_view venv_state) { return core::starts_with(venv_state, k_content_state_prefix); }

fs::path sealed_marker(const fs::path& venv) { return state::Layout(venv).dir() / "sealed"; }

bool is_sealed(const fs::path& venv) {
    std::error_code ec;
    return !venv.empty() && fs::is_regular_file(sealed_marker(venv), ec);
}

std::string sealed_marker_text(const std::optional<std::string>& build_time) {
    std::string out =
        "sealed\n"
        "# `bootstrap seal` left this venv at its recipe's fixed point: the journal's venv states are content\n"
        "# digests, and no run writes a stat-keyed cache here until one changes the venv.\n";
    if (build_time) out += "build_time " + *build_time + "\n";
    return out;
}

std::optional<std::string> sealed_build_time(const fs::path& venv) {
    if (!is_sealed(venv)) return std::nullopt;
    auto text = core::read_regular_file(sealed_marker(venv), k_max_marker_bytes);
    if (!text) return std::nullopt;
    for (const auto& line : core::split(*text, '\n'))
        if (core::starts_with(line, "build_time ")) return std::string(core::trim(line.substr(11)));
    return std::nullopt;
}

Status unseal(const fs::path& venv) {
    std::error_code ec;
    const auto marker = sealed_marker(venv);
    if (!fs::remove(marker, ec) && ec && ec != std::errc::no_such_file_or_directory)
        return fail(ErrorCode::io, fmt::format("cannot remove {}: {}", marker.string(), ec.message()));
    return {};
}

}  // namespace bootstrap::engine
