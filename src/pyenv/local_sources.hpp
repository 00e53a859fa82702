#pragma once
// Installs that lean on a directory outside the venv: editable installs (PEP 660, `pip/uv
// install -e DIR`). What they import is not in site-packages but in DIR, named by files the
// build backend wrote there: a `.pth` line (`/src/proj/src`), or setuptools' `__editable__`
// finder (`MAPPING = {'megatron': '/src/Megatron-LM/megatron'}` behind an `import` line in a
// `.pth`); PEP 610's direct_url.json names DIR as `file://` URL with `dir_info.editable`.
// A copy of the venv (`pack`/`unpack`, an image) works only where DIR is; `pack` carries it or
// warns, `unpack` and doctor call a missing one an error.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::pyenv {

namespace fs = std::filesystem;

struct LocalSource {
    std::string name;             // as in METADATA
    std::string normalized_name;  // PEP 503
    std::string version;
    fs::path path;  // the source directory (direct_url.json's URL, else the first directory a .pth names)
    /// site-packages-relative files of the distribution's RECORD that name `path`: its `.pth`
    /// files, `__editable__*` finders and its dist-info's direct_url.json.
    std::vector<std::string> files;
};

/// The local path a `file://` URL names (percent-decoded; `file://localhost/p` too), else nullopt.
[[nodiscard]] std::optional<fs::path> file_url_to_path(std::string_view url);

/// `file://` + the path, percent-encoding what is not unreserved or '/'.
[[nodiscard]] std::string path_to_file_url(const fs::path& path);

/// The editable installs of `site_packages`, sorted by name: each distribution whose
/// direct_url.json says `dir_info.editable` with a `file://` URL, or (none written, as by an
/// older installer) whose RECORD lists a `.pth` file naming an absolute directory outside
/// `site_packages`. A distribution whose dist-info cannot be read is left out.
[[nodiscard]] Result<std::vector<LocalSource>> find_local_sources(const fs::path& site_packages);

/// Point `source`'s install at `to`: every whole-path occurrence of source.path in its files
/// becomes `to` (direct_url.json gets `to`'s URL), and RECORD's rows for the changed files get
/// their new hash and size, each file written atomically. Returns how many files changed.
[[nodiscard]] Result<size_t> repoint_local_source(const fs::path& site_packages, const LocalSource& source,
                                                  const fs::path& to);

}  // namespace bootstrap::pyenv
