#include "steps/venv_swap.hpp"
#include <unistd.h>

#include <fmt/format.h>

#include "core/guarded_paths.hpp"
#include "state/layout.hpp"

namespace bootstrap::steps {

namespace {

fs::path aside_dir(const fs::path& venv) { return state::Layout(venv).recreate_aside(); }

/// Everything in `venv` but bootstrap's own state.
std::vector<fs::path> venv_entries(const fs::path& venv) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(venv, ec))
        if (entry.path().filename() != state::k_state_dir) out.push_back(entry.path());
    return out;
}

Status remove_tree(const fs::path& p, const char* why) {
    std::error_code ec;
    fs::remove_all(p, ec);
    if (ec) return fail(ErrorCode::io, fmt::format("cannot remove {} ({}): {}", p.string(), why, ec.message()));
    return {};
}

Status move(const fs::path& from, const fs::path& to) {
    std::error_code ec;
    fs::rename(from, to, ec);
    if (ec)
        return fail(ErrorCode::io, fmt::format("cannot move {} to {}: {}", from.string(), to.string(), ec.message()));
    return {};
}

/// Drop the aside entries: renamed first, so a crash while removing leaves nothing that looks
/// like a pending recreation.
Status discard_aside(const fs::path& venv) {
    const fs::path trash = state::Layout(venv).recreate_trash(::getpid());
    BS_CHECK(move(aside_dir(venv), trash));
    return remove_tree(trash, "the replaced venv");
}

}  // namespace

Status check_replaceable(const fs::path& venv, const fs::path& home, const fs::path& recipe_dir, const fs::path& cwd) {
    const fs::path target = core::resolved_path(venv);
    auto refuse = [&](const std::string& why) -> Status {
        return fail(ErrorCode::usage,
                    fmt::format("refusing to replace the contents of {}{}: it is {}", venv.string(),
                                target == venv.lexically_normal() ? "" : " (" + target.string() + ")", why),
                    "a venv path names a directory of its own (e.g. ~/.venvs/NAME); bootstrap never deletes "
                    "a directory that holds others' files");
    };
    // `/`, the system's directories and the home directory: the rule `containerfile` copies by too.
    if (auto why = core::whole_directory_refusal(venv, home)) return refuse(*why);
    const std::pair<const fs::path*, const char*> guarded[] = {{&recipe_dir, "the recipe's directory"},
                                                               {&cwd, "the current directory"}};
    for (const auto& [dir, what] : guarded) {
        if (dir->empty()) continue;
        const fs::path d = core::resolved_path(*dir);
        if (target == d) return refuse(what);
        if (core::is_same_or_ancestor(target, d))
            return refuse(fmt::format("an ancestor of {} ({})", what, d.string()));
    }
    return {};
}

bool recreate_pending(const fs::path& venv) {
    std::error_code ec;
    return fs::is_directory(aside_dir(venv), ec);
}

Result<bool> restore_unfinished_recreate(const fs::path& venv) {
    const fs::path aside = aside_dir(venv);
    std::error_code ec;
    if (!fs::is_directory(aside, ec)) return false;
    for (const auto& p : venv_entries(venv)) BS_CHECK(remove_tree(p, "a venv whose recreation did not finish"));
    for (const auto& entry : fs::directory_iterator(aside, ec))
        BS_CHECK(move(entry.path(), venv / entry.path().filename()));
    BS_CHECK(remove_tree(aside, "the emptied aside directory"));
    // Leftovers of an interrupted discard.
    for (const auto& entry : fs::directory_iterator(state::Layout(venv).dir(), ec))
        if (entry.path().filename().string().starts_with(state::Layout::k_recreate_trash_prefix))
            fs::remove_all(entry.path(), ec);
    return true;
}

Status recreate_venv(const fs::path& venv, const std::function<Status()>& create) {
    BS_TRY(bool restored, restore_unfinished_recreate(venv));
    (void)restored;
    const fs::path aside = aside_dir(venv);
    std::error_code ec;
    fs::create_directories(aside, ec);
    if (ec) return fail(ErrorCode::io, fmt::format("cannot create {}: {}", aside.string(), ec.message()));
    for (const auto& p : venv_entries(venv)) BS_CHECK(move(p, aside / p.filename()));
    auto created = create();
    if (!created) {
        auto restored_old = restore_unfinished_recreate(venv);
        if (!restored_old) {
            auto err = created.error();
            err.detail += fmt::format(
                "\nthe old venv could not be put back: {} (it is kept in {}; the next run "
                "tries again)",
                restored_old.error().message, aside.string());
            return tl::unexpected(err);
        }
        return created;
    }
    return discard_aside(venv);
}

}  // namespace bootstrap::steps
