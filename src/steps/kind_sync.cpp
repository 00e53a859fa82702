// Step kind `sync`: `uv sync` of a project (pyproject.toml / uv.lock) into the venv.

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/redact.hpp"
#include "steps/kind.hpp"

namespace bootstrap::steps {

namespace {

struct SyncFields : recipe::KindFields {
    recipe::Text project;            // directory holding pyproject.toml / uv.lock
    std::vector<recipe::Text> args;  // extra arguments to `uv sync`
};

std::shared_ptr<const recipe::KindFields> parse(recipe::StepReader& rd) {
    auto f = std::make_shared<SyncFields>();
    if (auto project = rd.text("project")) f->project = std::move(*project);
    rd.require("project");
    f->args = rd.texts("args");
    return f;
}

}  // namespace

// uv writes each package's source on one line, `source = { registry = "https://pypi.org/simple"
// }`: the URLs are read from that text (an unreadable lock names none; `uv sync` itself reports
// what is wrong with it).
std::vector<std::string> lock_registries(const fs::path& lock) {
    auto text = core::read_file(lock);
    if (!text) return {};
    std::map<std::string, size_t> count;
    std::vector<std::string> order;
    constexpr std::string_view k_key = "registry = \"";
    for (size_t at = text->find(k_key); at != std::string::npos; at = text->find(k_key, at)) {
        at += k_key.size();
        const size_t end = text->find('"', at);
        if (end == std::string::npos) break;
        std::string url = text->substr(at, end - at);
        if (url.find("://") != std::string::npos && count[url]++ == 0) order.push_back(url);
        at = end;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](const std::string& a, const std::string& b) { return count[a] > count[b]; });
    for (auto& url : order) url = core::redact_url(url);
    return order;
}

namespace {

Status expand(const recipe::Step& s, ResolvedStep& out, PlanContext& ctx, Expansion& ex) {
    const auto& f = *s.fields_as<SyncFields>();
    out.spec = SyncSpec{};
    auto path = ctx.base_env->find("PATH");
    auto uv = pyenv::find_uv(path == ctx.base_env->end() ? "" : path->second);
    if (!uv && ctx.dry_run) uv = fs::path("uv");  // `plan` shows it by name
    if (!uv) return tl::unexpected(uv.error());
    BS_TRY(auto project, ctx.text(f.project, out));
    BS_TRY(auto args, ctx.texts(f.args, out));
    if (ctx.locked_run && std::find(args.begin(), args.end(), "--locked") == args.end())
        args.push_back("--locked");  // uv.lock is the sync step's own lockfile
    BS_CHECK(check_local_input(s, f.project, ctx.local_path(project), "project", true, out, ctx));
    std::get<SyncSpec>(out.spec).lock = fs::path(ctx.local_path(project)) / "uv.lock";
    ex.command = pyenv::uv_sync(*uv, ctx.local_path(project), ctx.venv, args, ctx.net);
    ex.key_command = pyenv::uv_sync(*uv, ctx.local_path(project), ctx.venv, args, ctx.key_net);
    const bool inexact = std::find(args.begin(), args.end(), "--inexact") != args.end();
    const bool after_install =
        std::any_of(ctx.earlier->begin(), ctx.earlier->end(), [](const ResolvedStep& st) { return st.install(); });
    if (after_install && !inexact)
        ctx.add_note(
            fmt::format("step '{}': `uv sync` is exact and removes packages installed "
                        "by earlier install steps; add \"--inexact\" to its args "
                        "(README pitfall P7)",
                        s.id));
    return {};
}

void key_inputs(const ResolvedStep&, core::KeyBuilder&, const ToolName&) {}

Result<Outcome> execute_step(const ResolvedStep& step, StepContext& ctx) {
    // A missing project is said as such (uv would look for a pyproject.toml in the parents).
    const fs::path project = std::get<SyncSpec>(step.spec).lock.parent_path();
    std::error_code ec;
    if (!fs::is_directory(project, ec))
        return fail(ErrorCode::not_found, fmt::format("step '{}' (sync): the project directory {} does not exist",
                                                      step.id, project.string()));
    BS_CHECK(run_child(step, ctx, step.argv));
    return Outcome::ran;
}

/// Read when asked (after the step ran, its uv.lock exists).
std::vector<std::string> index_urls(const ResolvedStep& step) {
    return lock_registries(std::get<SyncSpec>(step.spec).lock);
}

}  // namespace

extern const Kind k_sync_kind;
const Kind k_sync_kind{
    .name = "sync",
    .parse = parse,
    .spec = k_spec_index<SyncSpec>,
    .expand = expand,
    .key_inputs = key_inputs,
    .execute = execute_step,
    .index_urls = index_urls,
    .runs_installer = true,
    .shows_downloads = true,
    .network_attempts = true,
    .needs_venv = true,
};

}  // namespace bootstrap::steps
