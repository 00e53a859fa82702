#pragma once
// Directories bootstrap never takes as a whole (to replace a venv's contents, `run --recreate`,
// or to copy into an image's build context, `containerfile`), and files that are credentials
// wherever they lie (a build context never carries one).

#include <filesystem>
#include <optional>
#include <string>

namespace bootstrap::core {

namespace fs = std::filesystem;

/// `p` with symlinks resolved as far as it exists, normalised.
[[nodiscard]] fs::path resolved_path(const fs::path& p);

/// `a` is `b` or one of its ancestors (both normalised; a trailing separator is ignored).
[[nodiscard]] bool is_same_or_ancestor(const fs::path& a, const fs::path& b);

/// Why `dir` is never taken as a whole: "the root of the file system", "a system directory"
/// (/etc, /usr, /var, /root, /proc, /sys, /dev, /boot), "the home directory" or "an ancestor of
/// the home directory (H)"; nullopt for any other. `home` may be empty (unknown). Compared after
/// resolving symlinks.
[[nodiscard]] std::optional<std::string> whole_directory_refusal(const fs::path& dir, const fs::path& home);

/// The rule by which the file `path` holds credentials ("an SSH private key (.ssh/id_*)",
/// ".netrc", ".pypirc", ".aws/credentials", ".docker/config.json", ".git-credentials", "a keyring
/// (share/keyrings/, python_keyring/, *.keyring)", "a GnuPG private key (.gnupg/)"), judged by its name and its directories' names
/// alone; nullopt when none matches.
[[nodiscard]] std::optional<std::string> credential_file_rule(const fs::path& path);

}  // namespace bootstrap::core
