// `pack` and `unpack`: a venv as one reproducible file (pack/pack.hpp).
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/status.hpp"
#include "cli/venv_choice.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "pack/pack.hpp"

namespace bootstrap::cli {

namespace {

struct PackArgs {
    VenvChoice venv;
    std::string output;
    double lock_timeout = 600;
    bool carry_editable = false;
};

struct UnpackArgs {
    std::string pack;
    std::string dest;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// SOURCE_DATE_EPOCH (reproducible-builds.org) when set to a number, else 0.
Result<std::int64_t> pack_mtime() {
    const char* epoch = std::getenv("SOURCE_DATE_EPOCH");
    if (!epoch || !*epoch) return 0;
    auto value = core::parse_int<std::int64_t>(epoch);
    if (!value || *value < 0)
        return fail(ErrorCode::usage, fmt::format("SOURCE_DATE_EPOCH is not a number of seconds: '{}'", epoch));
    return *value;
}

int execute_pack(const PackArgs& args) {
    auto chosen = required_venv_choice(args.venv);
    if (!chosen) return report_error(chosen.error());
    const std::string venv = *chosen;
    pack::PackOptions options;
    auto mtime = pack_mtime();
    if (!mtime) return report_error(mtime.error());
    options.mtime = *mtime;
    options.lock_timeout = args.lock_timeout;
    options.carry_editable = args.carry_editable;
    const auto start = std::chrono::steady_clock::now();
    auto packed = pack::pack_venv(venv, args.output, options);
    if (!packed) return report_error(packed.error());
    fmt::print("packed {} ({} packages, {} files, {}) into {} ({}) in {:.1f} s\nsha256 {}\n", venv, packed->packages,
               packed->files, core::format_bytes(packed->bytes_in), args.output, core::format_bytes(packed->bytes_out),
               seconds_since(start), packed->sha256);
    for (const auto& s : packed->local_sources) {
        if (!s.carried.empty())
            fmt::print("carried the editable install {} {} from {} as {}/ (unpack puts it at DEST/{})\n", s.name,
                       s.version, s.path, s.carried, s.carried);
        else
            fmt::print(stderr,
                       "warning: {} {} is an editable install from {}, which is not in the pack: a node without "
                       "that directory cannot import it (`unpack` and `doctor` fail there); pack with "
                       "--carry-editable to carry it, or make the checkout available at that path on every node\n",
                       core::plain_text(s.name), s.version, core::plain_text(s.path));
    }
    return 0;
}

int execute_unpack(const UnpackArgs& args) {
    const auto start = std::chrono::steady_clock::now();
    auto unpacked = pack::unpack_venv(args.pack, args.dest);
    if (!unpacked) return report_error(unpacked.error());
    fmt::print(
        "unpacked {} into {} ({}, packed from {}; {} bin/ file(s) relocated); {} package(s) and their {} "
        "file(s) match the manifest and RECORDs, in {:.1f} s\n",
        args.pack, unpacked->venv.string(), core::format_bytes(unpacked->bytes), unpacked->packed_from,
        unpacked->relocated, unpacked->packages, unpacked->files, seconds_since(start));
    for (const auto& s : unpacked->local_sources)
        fmt::print("editable install {} {}: {}\n", core::plain_text(s.name), s.version,
                   s.carried.empty() ? fmt::format("uses {} on this host", core::plain_text(s.path))
                                     : fmt::format("source carried into {}", (unpacked->venv / s.carried).string()));
    return 0;
}

}  // namespace

void set_pack_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<PackArgs>();
    auto* cmd = app.add_subcommand("pack", "Write a venv, its manifest and history into one reproducible .tar.zst");
    add_venv_choice(*cmd, args->venv);
    cmd->add_option("-o,--output", args->output, "The pack file (e.g. env.tar.zst)")->required();
    cmd->add_option("--lock-timeout", args->lock_timeout, "Seconds to wait for a run on the same venv to finish")
        ->capture_default_str();
    cmd->add_flag("--carry-editable", args->carry_editable,
                  "Copy each editable install's source tree into the pack (as src/NAME/, without .git and "
                  "__pycache__); `unpack` puts it at DEST/src/NAME and points the install there");
    cmd->footer(
        "Members are sorted, owners are 0 and every mtime is SOURCE_DATE_EPOCH (else 0): the same venv\n"
        "packs to the same bytes. Left out: the venv's lock, run logs and caches in .bootstrap/. Links to\n"
        "the interpreter outside the venv are recorded, not packed; `unpack` checks them.\n"
        "An editable install (pip/uv install -e DIR) imports from DIR, outside the venv: `pack` names\n"
        "each one (a warning) and records it; without --carry-editable `unpack` and `doctor` fail where\n"
        "DIR is missing. A credential file in DIR is refused.\n"
        "Exit codes: 0 ok, 1 failed, 2 usage.");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_pack(*args); });
}

void set_unpack_command(CLI::App& app, Outcome& outcome) {
    auto args = std::make_shared<UnpackArgs>();
    auto* cmd = app.add_subcommand("unpack", "Extract a pack into a new venv directory, relocate it and verify it");
    cmd->add_option("pack", args->pack, "The pack file (from `bootstrap pack`)")->required();
    cmd->add_option("dest", args->dest, "The venv directory to create (must not exist)")->required();
    cmd->footer(
        "Extraction refuses unsafe members (absolute paths, '..', links leaving the tree, devices).\n"
        "The interpreter must exist at the path the packed venv names (pyvenv.cfg's home and the\n"
        "bin/python link); bin/ scripts are rewritten for DEST; every package's version and RECORD\n"
        "digest are checked against the packed manifest, and every installed file against its RECORD\n"
        "hash, before DEST appears; a member listed twice is refused. An editable install's source must\n"
        "be in the pack (`pack --carry-editable`; placed at DEST/src/NAME) or at its packed path here,\n"
        "else unpack fails naming it. On any error nothing is left at\n"
        "DEST. Exit codes: 0 ok, 1 failed, 2 usage (DEST exists, no such pack).");
    cmd->callback([args, &outcome] { outcome.exit_code = execute_unpack(*args); });
}

}  // namespace bootstrap::cli
