#pragma once
// Training configurations as flat lists of flags, each with the file:line it was written on.
// Three layouts are read (yaml-cpp stays inside doctor/):
//   args    a plain args file or a shell script: `--flag value` tokens, `--flag=value`,
//           comments, quotes, `\` continuations; `NAME=value` at the start of a command and
//           `export NAME=value` are recorded as environment assignments;
//   flat    a YAML mapping `--flag: value` or `flag: value` (a YAML list of "--flag value"
//           strings is read like an args file);
//   nested  Megatron's `--yaml-cfg` layout (megatron/training/yaml_arguments.py): sections
//           such as `language_model:` and `model_parallel:` hold plain argument names, merged
//           into one namespace, so a nested key flattens to its own name: `num_layers` ->
//           `--num-layers`.
// YAML values: null means "not given"; `true` is a switch; `false` on `name` stands for
// `--no-name` (Megatron's store_false flags, e.g. gradient_accumulation_fusion: false is
// --no-gradient-accumulation-fusion); a list gives several values.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace bootstrap::doctor {

/// Where something was written: the file, its 1-based line and that line's text (trimmed).
struct Evidence {
    std::string file;
    int line = 0;
    std::string text;
    /// "file:line: text" ("file" alone when line is 0).
    [[nodiscard]] std::string str() const;
};

/// One flag of a configuration, in the spelling written (YAML keys get '--' and '_' -> '-').
struct Flag {
    std::string name;                 // "--cuda-graph-scope"
    std::vector<std::string> values;  // empty for a switch
    Evidence where;
};

/// `NAME=value` set by a shell script before the training command.
struct EnvAssignment {
    std::string name;
    std::string value;
    Evidence where;
};

enum class ConfigFormat { args, yaml_flat, yaml_nested };
[[nodiscard]] const char* to_string(ConfigFormat format);

struct TrainingConfig {
    std::string file;
    ConfigFormat format = ConfigFormat::args;
    std::vector<Flag> flags;         // in file order; a repeated flag appears repeatedly
    std::vector<EnvAssignment> env;  // args layout only
};

/// Read a configuration file. `.yaml`/`.yml` are YAML (a YAML document that is only a scalar,
/// such as a list of `--flag` lines, is read as args); every other file is args. Errors:
/// not_found/io naming the path (unreadable), usage (YAML syntax error, with file:line).
[[nodiscard]] Result<TrainingConfig> read_config(const std::filesystem::path& file);

/// Same, from text; `name` is used in evidence and messages and its extension picks the layout.
[[nodiscard]] Result<TrainingConfig> parse_config(std::string_view text, const std::string& name);

/// The args layout only (never fails: anything that is not a flag is ignored).
[[nodiscard]] TrainingConfig parse_args(std::string_view text, const std::string& name);

/// The YAML layouts only. Errors: usage, for a syntax error or a root that is not a mapping.
[[nodiscard]] Result<TrainingConfig> parse_yaml(std::string_view text, const std::string& name);

/// "--Name_x" -> "--name-x": the form flags are compared in ('_' and '-' are one to Megatron's
/// YAML layout; argparse spells every flag with '-').
[[nodiscard]] std::string normalize_flag(std::string_view name);

}  // namespace bootstrap::doctor
