#pragma once
// A packed venv's editable installs (pyenv/local_sources.hpp): what it leans on outside itself.
// `pack` names each one in bootstrap-pack.json's `local_sources` and warns, or with
// `--carry-editable` copies its source tree into the pack as `src/NAME/` (without .git and
// __pycache__; a credential file is refused). `unpack` puts a carried tree at DEST/src/NAME and
// points the install there; one not carried must exist at its packed path, else unpack fails
// naming it.

#include <filesystem>
#include <string>
#include <vector>

#include "archive/archive.hpp"
#include "core/error.hpp"

namespace bootstrap::pack {

namespace fs = std::filesystem;

struct CarriedSource {
    std::string name;  // the distribution, as in METADATA
    std::string version;
    std::string path;     // the source directory where the venv was packed
    std::string carried;  // the pack's directory holding its tree ("src/NAME"), "" when not carried
    friend bool operator==(const CarriedSource&, const CarriedSource&) = default;
};

/// The editable installs of `venv` (site-packages `site`) whose sources lie outside it.
[[nodiscard]] Result<std::vector<CarriedSource>> find_carried_sources(const fs::path& venv, const fs::path& site);

/// Each source's tree as pack members under `src/NAME/` (sorted), setting `carried`; `.git`,
/// `__pycache__` and `venv` (a project's own .venv) are left out, a credential file
/// (core::credential_file_rule) or a link leaving the tree is an error naming it. Returns the
/// members and counts files in `files`.
[[nodiscard]] Result<std::vector<archive::Member>> source_members(std::vector<CarriedSource>& sources,
                                                                  const fs::path& venv, size_t& files);

/// The sources neither carried nor present on this host, as "NAME VERSION at PATH".
[[nodiscard]] std::vector<std::string> missing_sources(const std::vector<CarriedSource>& sources);

/// After extraction into `staging` (whose venv is `tree`, site-packages `site`, to be renamed to
/// `dest`): move each carried tree to `tree`/src/NAME and point its install at `dest`/src/NAME;
/// point an install whose source was inside the packed venv `packed_venv` at the same place
/// in `dest`. Returns how many installs were re-pointed.
[[nodiscard]] Result<size_t> place_sources(const std::vector<CarriedSource>& sources, const fs::path& staging,
                                           const fs::path& tree, const fs::path& site, const std::string& packed_venv,
                                           const fs::path& dest);

}  // namespace bootstrap::pack
