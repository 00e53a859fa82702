#pragma once
// Which installed distribution provides an importable module, read from the dist-infos alone
// (RECORD, then top_level.txt), and whether its version satisfies a specifier.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/specifier.hpp"

namespace bootstrap::pyenv {

/// The installed distributions that provide `module` ("a.b"): those whose RECORD lists its
/// package directory ("a/b/...") or module file ("a/b.py", "a/b.<tag>.so"), else its parent
/// package's ("a"); when no RECORD does (an editable install), those whose top_level.txt names
/// its top-level package. Sorted by normalised name.
/// The other way round: the top-level modules a distribution installs (top_level.txt, then its
/// RECORD's top-level packages, module files and extension modules), in first-seen order.
[[nodiscard]] std::vector<std::string> top_level_modules(const Distribution& dist);

[[nodiscard]] std::vector<const Distribution*> distributions_providing(
    std::string_view module, const std::map<std::string, Distribution>& installed);

/// The one distribution providing `module`, checked against `specifiers` (an installed
/// pre-release counts, as in `pip check`). Errors (step_failed), each naming the module:
/// "torch 2.10.0 does not satisfy >=2.11 (distribution torch)", no distribution provides it,
/// several do, or its version is not PEP 440.
[[nodiscard]] Result<Distribution> check_module_version(std::string_view module, const SpecifierSet& specifiers,
                                                        const std::map<std::string, Distribution>& installed);

}  // namespace bootstrap::pyenv
