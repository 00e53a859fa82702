#pragma once
// The known-fault knowledge base: error texts met while bringing up Megatron-LM + TE + mHC on
// H200 (README pitfalls P1-P24), each with what it means and what to do, matched line by line
// against a failing step's log or any other log (a training log included).
//
// For the engine, after a step fails:
//
//     auto kb = doctor::knowledge_for(recipe);            // once per run: recipe [[fault]]s
//     auto matches = doctor::match_log(log_text, kb);      //   first, then the built-ins
//     if (!matches.empty()) print(doctor::format_matches(matches, log_path.string()));

#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "recipe/recipe.hpp"

namespace bootstrap::doctor {

/// One known fault. `pattern` is an ECMAScript regex tried on each log line; `near`, when
/// set, must also match one of the k_near_lines lines before it (a generic message such as
/// "IndexError: list index out of range" means something only under a given traceback).
struct KnownFault {
    std::string id;
    std::string pattern;
    std::string near;
    std::string explain;
    std::string fix;
    std::string step;    // the step this fault is typical of ("" = none in particular)
    std::string source;  // "built-in" or the recipe location "file:line:col"
    /// Literals of which every matching line contains one: lines with none skip the regex
    /// (std::regex is slow, and training logs are long). Empty: every line is tried.
    std::vector<std::string> hints;
    // Filled by make_fault: the regexes, compiled once.
    std::shared_ptr<const std::regex> compiled;
    std::shared_ptr<const std::regex> compiled_near;
};

inline constexpr int k_near_lines = 12;

/// Compile a KnownFault. Error: usage, naming the id and the regex problem.
[[nodiscard]] Result<KnownFault> make_fault(KnownFault fault);

/// The built-in entries, compiled on first use.
[[nodiscard]] const std::vector<KnownFault>& builtin_faults();

/// The recipe's [[fault]] entries followed by the built-ins. A recipe entry with a built-in's
/// id replaces it. (The parser has already checked every recipe regex.)
[[nodiscard]] std::vector<KnownFault> knowledge_for(const recipe::Recipe& recipe);

/// One entry that matched: the first line it matched (1-based) and how often it matched.
struct FaultMatch {
    const KnownFault* fault = nullptr;  // points into the vector given to match_log
    int line = 0;
    std::string text;  // that line, trimmed (and cut to 300 characters)
    int count = 0;     // matching lines in the whole log
};

/// Match `log` line by line against `faults`, in order. Each entry is reported once, at its
/// first matching line; a line explained by one entry is not offered to later ones (so a
/// specific entry shadows a generic one). Sorted by line.
[[nodiscard]] std::vector<FaultMatch> match_log(std::string_view log, const std::vector<KnownFault>& faults);

/// Same against the built-ins only.
[[nodiscard]] std::vector<FaultMatch> match_log(std::string_view log);

/// Text for a terminal, to print under a log tail:
///   known fault cublaslt-symbol (LOG:42): RuntimeError: undefined symbol: ...
///     why: ...
///     fix: ...
[[nodiscard]] std::string format_matches(const std::vector<FaultMatch>& matches, const std::string& log_name);

}  // namespace bootstrap::doctor
