// `bootstrap inspect FILE`: the CUDA code (SASS/PTX per sm) a shared library carries.
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/json_output.hpp"
#include "cli/status.hpp"
#include "core/strings.hpp"
#include "device/arch.hpp"
#include "inspect/fatbin.hpp"

namespace bootstrap::cli {

namespace {

constexpr int k_exit_no_usable_code = 3;  // inspect --arch: the library lacks code for the arch

struct InspectArgs {
    std::string file;
    std::string arch;
    bool json = false;
};

int execute_inspect(const InspectArgs& args) {
    auto contents = inspect::read_cuda_contents(args.file);
    if (!contents) return report_error(contents.error(), args.json);
    std::optional<Status> check;
    if (!args.arch.empty()) check = inspect::check_cuda_arch(contents->entries, args.arch, args.file);
    if (check && !*check && (*check).error().code == ErrorCode::usage) return report_error((*check).error(), args.json);

    if (args.json) {
        nlohmann::json entries = nlohmann::json::array();
        for (const auto& e : contents->entries)
            entries.push_back({{"kind", inspect::to_string(e.kind)},
                               {"sm", e.sm},
                               {"target", e.target()},
                               {"variant", e.variant ? std::string(1, e.variant) : ""},
                               {"compressed", e.compressed()},
                               {"compression", inspect::to_string(e.compression)},
                               {"size", e.size},
                               {"offset", e.offset}});
        nlohmann::json doc{{"file", args.file},
                           {"has_fatbin", contents->has_fatbin},
                           {"summary", inspect::summarize(contents->entries)},
                           {"entries", entries}};
        if (check)
            doc["check"] = {{"arch", args.arch},
                            {"ok", static_cast<bool>(*check)},
                            {"message", *check ? "" : (*check).error().message}};
        fmt::print("{}\n", doc.dump(2));
    } else {
        if (!contents->has_fatbin) {
            fmt::print("{}: no CUDA code (no .nv_fatbin section)\n", args.file);
        } else {
            fmt::print("{}: {} fatbin entr{} ({})\n", args.file, contents->entries.size(),
                       contents->entries.size() == 1 ? "y" : "ies", inspect::summarize(contents->entries));
            for (const auto& e : contents->entries)
                fmt::print(
                    "  {:<12} {:<4} {:<13} {:>10} bytes  at {:#x}\n", e.target(), inspect::to_string(e.kind),
                    e.compressed() ? std::string(inspect::to_string(e.compression)) : std::string("uncompressed"),
                    e.size, e.offset);
        }
        if (check && *check) fmt::print("ok: {} has code usable on {}\n", args.file, args.arch);
    }
    if (check && !*check) {
        if (!args.json) {
            TerminalStatus status;
            status.error((*check).error());
        }
        return k_exit_no_usable_code;
    }
    return 0;
}

}  // namespace

void set_inspect_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<InspectArgs>();
    auto* cmd = app.add_subcommand("inspect", "List the CUDA code (SASS/PTX per sm) a shared library carries");
    cmd->add_option("file", args->file, "Shared library (.so) or executable")->required();
    cmd->add_option("--arch", args->arch, "Exit 3 unless the file has SASS or PTX usable on this compute capability");
    cmd->add_flag("--json", args->json, "Print the listing as JSON");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_inspect(*args); });
}

}  // namespace bootstrap::cli
