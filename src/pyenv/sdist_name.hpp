#pragma once
// Source distribution file names: `{name}-{version}.tar.gz` (PEP 625) and the spellings older
// sdists on an index still have (`Django-1.0.tar.gz`, `docopt-0.6.2.tar.gz`, `x-1.0.zip`).

#include <string_view>

namespace bootstrap::pyenv {

/// Whether `file_name` ends as an sdist does (`.tar.gz` or `.zip`).
[[nodiscard]] bool is_sdist_file_name(std::string_view file_name);

/// Whether `file_name` is an sdist of that release: some '-' splits its stem into a name with the
/// same PEP 503 normal form and a version equal under PEP 440 (one that does not parse must be
/// spelled the same).
[[nodiscard]] bool is_sdist_of(std::string_view file_name, std::string_view name, std::string_view version);

}  // namespace bootstrap::pyenv
