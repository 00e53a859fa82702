#pragma once
// Which package indexes an install command asks, worked out the way the installer itself does,
// so that the origin of every installed package can be recorded (for rollback and lock) even
// when a recipe names no index.
//
// uv:  the request's --index-url / --extra-index-url; else UV_DEFAULT_INDEX, UV_INDEX_URL,
//      UV_INDEX, UV_EXTRA_INDEX_URL; else uv.toml (UV_CONFIG_FILE, else the user's
//      $XDG_CONFIG_HOME/uv/uv.toml or ~/.config/uv/uv.toml, then /etc/uv/uv.toml; none with
//      UV_NO_CONFIG): `index-url`, `extra-index-url`, `[[index]]` (`default = true` replaces
//      the default), and the same keys under `[pip]`; else PyPI.
// pip: the request's flags; else PIP_INDEX_URL / PIP_EXTRA_INDEX_URL; else pip.conf
//      (PIP_CONFIG_FILE, else /etc/pip.conf, ~/.config/pip/pip.conf, ~/.pip/pip.conf, the
//      venv's pip.conf; later files win), `[install]` over `[global]`; else PyPI.

#include <filesystem>
#include <string>
#include <vector>

#include "exec/environment.hpp"
#include "pyenv/installer.hpp"

namespace bootstrap::pyenv {

inline constexpr const char* k_pypi_simple = "https://pypi.org/simple";

struct IndexSet {
    std::string default_index;  // "" with --no-index
    std::vector<std::string> extra_indexes;
    std::string from;  // where the default came from: "recipe", "UV_DEFAULT_INDEX", ...
    /// default first, then extras (the order manifests record).
    [[nodiscard]] std::vector<std::string> all() const;
};

/// The indexes `installer` ("uv" / "pip") asks for `request`, run with `env` for `venv`.
[[nodiscard]] IndexSet effective_indexes(const std::string& installer, const InstallRequest& request,
                                         const exec::EnvMap& env, const std::filesystem::path& venv);

/// Index URLs with their credentials as the caller can supply them now: the recipe's steps'
/// URLs, and every index the environment and the installers' config name (uv's and pip's).
[[nodiscard]] std::vector<std::string> known_index_urls(const exec::EnvMap& env, const std::filesystem::path& venv,
                                                        std::vector<std::string> also = {});

/// A recorded (redacted) index URL made usable again: the known URL that is the same but for
/// its credentials; else the URL without userinfo (the installer may still find credentials
/// in netrc or a keyring). A URL without redacted credentials is returned as it is.
[[nodiscard]] std::string with_credentials(const std::string& recorded, const std::vector<std::string>& known);

}  // namespace bootstrap::pyenv
