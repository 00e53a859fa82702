#pragma once
// An image's defaults (`/etc/bootstrap/env`, written by `bootstrap containerfile`): what the
// image's build ran with, so that `plan`, `run` and `doctor` in the container plan the recipe as
// the build did. The file is bootstrap's alone (no shell sources it) and holds, one per line:
//
//   # comment
//   recipe <sha256>          the recipe these defaults are for (the image's recipe.toml)
//   NAME='value'             a variable the recipe reads ({env.NAME}) as the build resolved it
//   secret NAME STEP...      a secret the build was given (a build secret): never its value;
//                            the steps named read it, and are reported as needing it
//   venv /opt/venv           the venv the build made (plan options, for the image's recipe only)
//   arch 9.0 | no-device     the arch the build planned for
//   skip STEP... | only STEP...
//
// A value is single-quoted with `'` written as `'\''` (as /bin/sh reads it); it holds no line
// break. A variable is a default: the container's own environment wins (apply_image_env).

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::recipe {

/// A secret the image build read from a build secret, and the steps that read it.
struct ImageSecret {
    std::string name;
    std::vector<std::string> steps;
    bool operator==(const ImageSecret&) const = default;
};

struct ImageDefaults {
    std::string recipe_digest;  // sha256 hex of the image's recipe ("": any recipe)
    std::vector<std::pair<std::string, std::string>> env;
    std::vector<ImageSecret> secrets;
    std::optional<std::string> venv;
    std::optional<std::string> arch;  // "9.0"
    bool no_device = false;
    std::vector<std::string> skip;
    std::vector<std::string> only;
    bool operator==(const ImageDefaults&) const = default;
};

/// The image's defaults file: $BOOTSTRAP_IMAGE_ENV when set (tests, an image that keeps it
/// elsewhere), else /etc/bootstrap/env.
[[nodiscard]] std::filesystem::path image_defaults_path();

/// The file's text (see above). Values with a line break are the caller's to refuse.
[[nodiscard]] std::string image_defaults_text(const ImageDefaults& defaults);

/// Parse the file's text; an unknown line or a malformed value is an error naming `file`:line.
[[nodiscard]] Result<ImageDefaults> parse_image_defaults(std::string_view text, std::string_view file);

/// The image's defaults when its file exists (image_defaults_path()); nullopt outside an image.
/// Read once per process.
[[nodiscard]] Result<std::optional<ImageDefaults>> image_defaults();

/// Sets in `env` each of the defaults' variables that `env` does not have (the container's
/// environment overrides the image's defaults). Returns the names set.
std::vector<std::string> apply_image_env(const ImageDefaults& defaults, std::map<std::string, std::string>& env);

/// The recorded secrets that `env` does not set: for each, the steps that need it.
[[nodiscard]] std::vector<ImageSecret> missing_image_secrets(const ImageDefaults& defaults,
                                                             const std::map<std::string, std::string>& env);

}  // namespace bootstrap::recipe
