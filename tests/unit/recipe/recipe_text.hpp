#pragma once
// Shared by the recipe tests: a valid recipe head and the problem list of an invalid recipe.

#include <string>

#include <catch2/catch.hpp>

#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

namespace bootstrap::recipe::testing {

// Lines 1-5; the recipe text under test starts on line 6.
inline const std::string k_head = "schema = 1\nname = \"t\"\n[venv]\npath = \"/tmp/v\"\npython = \"3.12\"\n";

/// The full problem list of an invalid recipe ("<valid>" when it parses); the first line must be
/// Error::message.
inline std::string problems(const std::string& text) {
    auto r = steps::parse_recipe(text, "r.toml");
    if (r) return "<valid>";
    CHECK(r.error().code == ErrorCode::invalid_recipe);
    CHECK(r.error().detail.substr(0, r.error().message.size()) == r.error().message);
    CHECK(r.error().message.find('\n') == std::string::npos);
    return r.error().detail;
}

}  // namespace bootstrap::recipe::testing
