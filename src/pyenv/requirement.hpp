#pragma once
// PEP 508 requirement strings: "name[extra1,extra2] (>=1.0,<2) ; marker" and "name @ url".

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "pyenv/marker.hpp"
#include "pyenv/specifier.hpp"

namespace bootstrap::pyenv {

struct Requirement {
    std::string name;                 // as written
    std::string normalized_name;      // PEP 503
    std::vector<std::string> extras;  // normalised
    SpecifierSet specifier;
    std::string url;  // for "name @ url", else ""
    std::optional<Marker> marker;

    /// Parse; the error message quotes the text and says what is wrong at which column.
    [[nodiscard]] static Result<Requirement> parse(std::string_view text);
    [[nodiscard]] std::string str() const;
};

}  // namespace bootstrap::pyenv
