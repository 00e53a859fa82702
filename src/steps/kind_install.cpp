// Step kind `install`: packages from indexes, find-links or paths, through the venv's installer;
// or, with `pylock`, exactly the pins of a PEP 751 pylock.toml (steps/pylock_data.hpp).
// Skipped without running the installer when the venv already satisfies its requirements.

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/lockfile_limit.hpp"
#include "core/redact.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "pyenv/index_config.hpp"
#include "pyenv/name.hpp"
#include "pyenv/requirement_line.hpp"
#include "state/layout.hpp"
#include "steps/kind.hpp"
#include "steps/pylock_data.hpp"
#include "steps/source_build.hpp"

namespace bootstrap::steps {

namespace {

/// The install kind's own keys (`packages` and `allow_conflicts` are cross-kind: recipe::Step).
struct InstallFields : recipe::KindFields {
    /// A pylock.toml instead of `packages` (exactly one of them): named `pylock`, not
    /// `requirements_file`, because it is a PEP 751 lock, pinned and hashed, not pip's
    /// requirements format (which such a key would promise).
    std::optional<recipe::Text> pylock;
    std::optional<recipe::Text> index_url;
    std::vector<recipe::Text> extra_index_urls;
    std::vector<recipe::Text> find_links;
    bool upgrade = false;
    bool reinstall = false;
    bool no_deps = false;
    bool pre = false;
    /// Packages whose build imports what the venv holds (uv's no-build-isolation-package):
    /// built against the venv, keyed by its torch, CUDA and compiler (steps/source_build.hpp).
    std::vector<recipe::Text> no_build_isolation_package;
};

/// `packages` (requirements, resolved with their dependencies), or `pylock` (a pylock.toml
/// relative to the recipe's directory: every package it locks with a version is pinned and its
/// wheels' sha256 checked, `--no-deps`; `upgrade` has no meaning there). Both index keys and
/// find_links apply to either.
std::shared_ptr<const recipe::KindFields> parse(recipe::StepReader& rd) {
    auto f = std::make_shared<InstallFields>();
    rd.step().packages = rd.nonempty_texts("packages");
    f->pylock = rd.text("pylock");
    if (!f->pylock) rd.require("packages");
    else if (rd.get("packages") != nullptr)
        rd.report(f->pylock->loc, fmt::format("{} takes 'packages' or 'pylock', not both (a pylock step installs "
                                              "exactly the lock's pins)",
                                              rd.label()));
    else if (f->pylock->value.empty()) rd.report(f->pylock->loc, "'pylock' must name a pylock.toml file");
    f->index_url = rd.text("index_url");
    f->extra_index_urls = rd.texts("extra_index_urls", true);
    f->find_links = rd.texts("find_links", true);
    f->upgrade = rd.flag("upgrade");
    f->reinstall = rd.flag("reinstall");
    f->no_deps = rd.flag("no_deps");
    f->pre = rd.flag("pre");
    f->no_build_isolation_package = rd.texts("no_build_isolation_package", true);
    for (const auto& name : f->no_build_isolation_package)
        if (!pyenv::is_valid_name(name.value))
            rd.report(name.loc,
                      fmt::format("'no_build_isolation_package' holds '{}', which is not a package name", name.value));
    if (f->pylock && f->upgrade)
        rd.report(rd.get("upgrade")->loc,
                  "'upgrade' does not apply with 'pylock': the step installs the lock's exact "
                  "versions");
    rd.step().allow_conflicts = rd.strings("allow_conflicts").value_or(std::vector<std::string>{});
    return f;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> earlier_overrides(const std::vector<pyenv::Requirement>& own,
                                                                   bool no_deps, const PlanContext& ctx) {
    std::vector<std::pair<std::string, std::string>> out;
    if (ctx.earlier == nullptr || ctx.locked_run || no_deps) return out;
    for (const auto& earlier : *ctx.earlier) {
        const auto* install = earlier.install();
        if (install == nullptr || (!install->upgrade && earlier.source->allow_conflicts.empty())) continue;
        for (const auto& req : install->requirements) {
            const auto& name = req.normalized_name;
            const bool mine = std::any_of(own.begin(), own.end(),
                                          [&](const pyenv::Requirement& r) { return r.normalized_name == name; });
            const bool seen = std::any_of(out.begin(), out.end(), [&](const auto& o) { return o.second == name; });
            if (!mine && !seen) out.emplace_back(earlier.id, name);
        }
    }
    return out;
}

namespace {

/// InstallSpec::later_overrides of recipe step `s`: the requirements of the install steps after
/// it that have `upgrade = true` or `allow_conflicts`, less the names `own` asks for itself (two
/// steps pinning one name are engine::pin_conflicts' to judge). A requirement that holds a
/// placeholder is left out: it is known only when that step is planned. None for a step that
/// reinstalls (uv would fetch the kept version again, from this step's indexes).
std::vector<LaterOverride> later_overrides(const recipe::Step& s, const std::vector<pyenv::Requirement>& own,
                                           bool no_deps, const PlanContext& ctx) {
    std::vector<LaterOverride> out;
    if (ctx.recipe == nullptr || ctx.locked_run || no_deps || ctx.installer == nullptr || ctx.installer->name() != "uv")
        return out;
    // --reinstall fetches every package of the resolution again, from this step's indexes.
    if (s.fields_as<InstallFields>()->reinstall) return out;
    const auto& all = ctx.recipe->steps;
    auto self = std::find_if(all.begin(), all.end(), [&](const recipe::Step& t) { return &t == &s; });
    if (self == all.end()) return out;
    for (auto later = std::next(self); later != all.end(); ++later) {
        if (later->kind != "install" || later->fields == nullptr) continue;
        const auto* f = later->fields_as<InstallFields>();
        if (f == nullptr || (!f->upgrade && later->allow_conflicts.empty())) continue;
        for (const auto& text : later->packages) {
            if (text.value.find('{') != std::string::npos) continue;
            auto req = pyenv::Requirement::parse(text.value);
            if (!req || !req->url.empty()) continue;
            const auto& name = req->normalized_name;
            const bool mine = std::any_of(own.begin(), own.end(),
                                          [&](const pyenv::Requirement& r) { return r.normalized_name == name; });
            const bool seen = std::any_of(out.begin(), out.end(), [&](const auto& o) { return o.name == name; });
            if (!mine && !seen) out.push_back(LaterOverride{later->id, name, req->str()});
        }
    }
    return out;
}

/// A problem of the step's pylock, as its reader says it (FILE:LINE:COL), prefixed by the step.
Error pylock_error(const recipe::Step& s, const Error& e) {
    return Error{ErrorCode::invalid_recipe, fmt::format("step '{}': {}", s.id, e.message), e.detail};
}

/// `pylock`: read when the plan is made, as `packages` are known then (the skip rule, pin
/// checks, ownership and lock closures use the requirements): its pins become the step's
/// requirements, each with its marker (the installer and the skip rule judge it against the
/// venv's interpreter, so the plan needs no venv), and the hashed requirements file its command
/// installs. A lock not there yet (an earlier run step may write it, or an image's copy) leaves
/// the step incomplete until it is; the lock's requires-python and environments are checked
/// once the venv exists.
Status expand_pylock(const recipe::Step& s, const recipe::Text& field, ResolvedStep& out, PlanContext& ctx,
                     InstallSpec& spec) {
    BS_TRY(auto raw, ctx.text(field, out));
    const std::string path = ctx.local_path(raw);
    BS_CHECK(check_local_input(s, field, path, "pylock", false, out, ctx));
    spec.pylock = PylockInstall{path, {}, 0, state::Layout(ctx.venv).pylock_requirements(s.id), {}};
    std::error_code ec;
    if (!out.complete || !fs::is_regular_file(path, ec)) {
        out.complete = false;
        return {};
    }
    auto text = core::read_lockfile_text(path);
    if (!text) return tl::unexpected(pylock_error(s, text.error()));
    auto lock = read_pylock(*text, path);
    if (!lock) return tl::unexpected(pylock_error(s, lock.error()));
    if (ctx.python != nullptr)
        if (auto fits = check_pylock_interpreter(*lock, *ctx.python); !fits)
            return tl::unexpected(pylock_error(s, fits.error()));
    auto pins = pylock_pins(*lock);
    if (!pins) return tl::unexpected(pylock_error(s, pins.error()));
    for (const auto& wheel : pins->files) add_local_input(out, wheel, false, "pylock wheel", field.loc);
    spec.requirements = std::move(pins->requirements);
    spec.pylock->sha256 = core::sha256_hex(*text);
    spec.pylock->packages = lock->packages.size();
    spec.pylock->text = std::move(pins->text);
    return {};
}

Status expand(const recipe::Step& s, ResolvedStep& out, PlanContext& ctx, Expansion& ex) {
    const auto& f = *s.fields_as<InstallFields>();
    InstallSpec spec;
    pyenv::InstallRequest& req = spec.request;
    if (f.pylock) {
        BS_CHECK(expand_pylock(s, *f.pylock, out, ctx, spec));
    } else {
        BS_TRY(req.requirements, ctx.texts(s.packages, out));
    }
    for (size_t i = 0; i < req.requirements.size(); ++i) {
        auto parsed = pyenv::Requirement::parse(req.requirements[i]);
        if (!parsed)
            return fail(ErrorCode::invalid_recipe,
                        fmt::format("{}: {}", s.packages[i].loc.str(), parsed.error().message));
        spec.requirements.push_back(std::move(*parsed));
    }
    if (f.index_url) {
        BS_TRY(auto url, ctx.text(*f.index_url, out));
        req.index_url = url;
    }
    BS_TRY(req.extra_index_urls, ctx.texts(f.extra_index_urls, out));
    BS_TRY(auto links, ctx.texts(f.find_links, out));
    for (size_t i = 0; i < links.size(); ++i) {
        req.find_links.push_back(ctx.local_path(links[i]));
        add_local_input(out, req.find_links.back(), true, "find-links directory", f.find_links[i].loc);
    }
    req.upgrade = spec.upgrade = f.upgrade;
    req.reinstall = spec.reinstall = f.reinstall;
    req.pre = spec.pre = f.pre;
    req.no_deps = f.no_deps || f.pylock.has_value();  // a lock's pins are its whole closure
    for (const auto& name : f.no_build_isolation_package)
        req.no_build_isolation_packages.push_back(pyenv::normalize_name(name.value));
    if (!f.no_build_isolation_package.empty() && ctx.installer != nullptr && ctx.installer->name() != "uv")
        return fail(ErrorCode::invalid_recipe,
                    fmt::format("{}: step '{}': 'no_build_isolation_package' needs the uv installer (pip builds "
                                "every package in isolation or none: a `build` step with no_build_isolation "
                                "builds one against the venv)",
                                f.no_build_isolation_package.front().loc.str(), s.id));
    if (ctx.installer != nullptr && ctx.installer->name() == "uv") {
        SourceBuildSpec sb;
        sb.home = ctx.home;
        if (ctx.env != nullptr)
            if (auto it = ctx.env->find("BOOTSTRAP_TRUSTED_KEYS"); it != ctx.env->end()) sb.trust_env.insert(*it);
        sb.installer = ctx.installer;
        sb.net = ctx.net;
        sb.download_attempts = ctx.recipe->network.retries + 1;
        sb.max_download = ctx.recipe->network.max_download;
        sb.against_venv = req.no_build_isolation_packages;
        spec.source_builds = std::move(sb);
    }
    std::vector<std::string> own_urls = req.extra_index_urls;
    if (req.index_url) own_urls.push_back(*req.index_url);
    BS_TRY(auto locked, ctx.locked(s, own_urls));
    if (locked) {
        // The step installs its whole locked closure (pinned, hashed, no dependency
        // resolution), one command per list of indexes its packages came from.
        spec.requirements = std::move(locked->requirements);
        spec.locked_run = true;
        spec.pylock.reset();
        req.requirements.clear();
        req.find_links.clear();
        req.no_deps = true;
        req.upgrade = req.reinstall = false;
        spec.upgrade = spec.reinstall = false;
        for (auto& batch : locked->batches) {
            pyenv::InstallRequest one = req;
            one.index_url = batch.index_url;
            one.extra_index_urls = batch.extra_index_urls;
            one.no_index = batch.no_index;
            auto command = ctx.installer->install(ctx.venv, one, ctx.net);
            auto key_command = ctx.installer->install(ctx.venv, one, ctx.key_net);
            // uv and pip spell these the same: every pin comes from the file, with its hash.
            for (auto* c : {&command, &key_command})
                c->argv.insert(c->argv.end(), {"-r", batch.file.string(), "--require-hashes"});
            if (spec.locked.empty()) {
                ex.command = command;
                ex.key_command = key_command;
            }
            batch.argv = std::move(command.argv);
            spec.locked.push_back(std::move(batch));
        }
        if (spec.locked.empty()) {
            ex.command = ctx.installer->install(ctx.venv, req, ctx.net);
            ex.key_command = ctx.installer->install(ctx.venv, req, ctx.key_net);
            out.note = "--locked: the lockfile gives this step no package to install";
        }
        out.spec = std::move(spec);
        return {};
    }
    spec.overrides = earlier_overrides(spec.requirements, spec.request.no_deps, ctx);
    spec.later_overrides = later_overrides(s, spec.requirements, spec.request.no_deps, ctx);
    // A name both an earlier and a later step override: the earlier one's installed version.
    std::erase_if(spec.later_overrides, [&](const LaterOverride& o) {
        return std::any_of(spec.overrides.begin(), spec.overrides.end(),
                           [&](const auto& e) { return e.second == o.name; });
    });
    if (!spec.overrides.empty() || !spec.later_overrides.empty())
        req.overrides_file = state::Layout(ctx.venv).overrides(s.id);
    ex.command = ctx.installer->install(ctx.venv, req, ctx.net);
    ex.key_command = ctx.installer->install(ctx.venv, req, ctx.key_net);
    if (spec.pylock)  // uv and pip spell these the same: every pin from the file, with its hash
        for (auto* c : {&ex.command, &ex.key_command})
            c->argv.insert(c->argv.end(), {"-r", spec.pylock->file.string(), "--require-hashes"});
    out.spec = std::move(spec);
    return {};
}

/// Once the child's environment is known: the indexes the installer will ask (redacted).
void environment_known(ResolvedStep& step, const PlanContext& ctx) {
    auto& spec = std::get<InstallSpec>(step.spec);
    for (auto& url : pyenv::effective_indexes(ctx.installer->name(), spec.request, step.child_env, ctx.venv).all())
        spec.index_urls.push_back(core::redact_url(url));
}

void key_inputs(const ResolvedStep& step, core::KeyBuilder& key, const ToolName&) {
    const auto& spec = std::get<InstallSpec>(step.spec);
    // The lock's content: a changed lock re-runs the step (unless the venv holds its pins).
    if (spec.pylock) key.add("pylock", spec.pylock->path + " sha256 " + spec.pylock->sha256);
    for (const auto& c : spec.locked) key.add("locked", c.indexes_shown + "\n" + c.text);
    // Which earlier steps' packages this resolution keeps, not their versions: those are venv
    // facts, written to the file when the step runs; the end-of-run check holds every step to
    // its requirements, so a version an override step changes later needs no re-run here.
    if (!spec.overrides.empty()) {
        std::vector<std::string> kept;
        for (const auto& [id, name] : spec.overrides) kept.push_back(id + ": " + name);
        key.add("overrides", kept);
    }
    if (!spec.later_overrides.empty()) {
        std::vector<std::string> kept;
        for (const auto& o : spec.later_overrides) kept.push_back(o.step + ": " + o.requirement);
        key.add("later overrides", kept);
    }
}

/// A locked batch's installer failure that is a failed hash check names where the lock pins
/// each package it names (all of the batch's when it names none).
Error locked_hash_failure(Error err, const LockedBatch& batch) {
    const std::string text = core::to_lower(err.message + "\n" + err.detail);
    if (text.find("hash") == std::string::npos || batch.locked_at.empty()) return err;
    std::vector<std::string> named, all;
    for (const auto& [name, at] : batch.locked_at) {
        all.push_back(name + " at " + at);
        std::string underscored = name;
        std::replace(underscored.begin(), underscored.end(), '-', '_');
        if (text.find(name) != std::string::npos || text.find(underscored) != std::string::npos)
            named.push_back(all.back());
    }
    err.message += fmt::format("; the lock pins {}", core::join(named.empty() ? all : named, "; "));
    return err;
}

/// A locked requirements file less the packages built through the build cache: given the
/// sdist's hash, uv would take the index's sdist and build it again (each line is
/// `name==version --hash=...`, written by pyenv::hashed_requirement_line).
std::string without_built(const std::string& text, const std::vector<SourceBuilt>& built) {
    std::string out;
    for (const auto& line : core::split(text, '\n')) {
        if (line.empty() || std::any_of(built.begin(), built.end(), [&](const SourceBuilt& b) {
                return core::starts_with(line, b.name + "==" + b.version + " ");
            }))
            continue;
        out += line + "\n";
    }
    return out;
}

/// The wheels build_locked_sdists put in `wheels`, installed from there alone (`--no-index`),
/// each pinned by its own sha256, without dependencies (the lock gives every package its line).
Status install_built(const ResolvedStep& step, StepContext& ctx, const SourceBuildSpec& sb,
                     const std::vector<SourceBuilt>& built, const fs::path& wheels, const fs::path& file) {
    std::string text;
    for (const auto& b : built) {
        BS_TRY(auto line,
               pyenv::hashed_requirement_line(pyenv::HashedRequirement{b.name, b.version, "", "", {b.wheel_sha256}}));
        text += line + "\n";
    }
    BS_CHECK(core::write_file_atomic(file, text));
    pyenv::InstallRequest request;
    request.no_index = true;
    request.no_deps = true;
    request.find_links = {wheels.string()};
    auto argv = sb.installer->install(ctx.venv, request, sb.net).argv;
    argv.insert(argv.end(), {"-r", file.string(), "--require-hashes"});
    return run_child(step, ctx, argv);
}

/// What the step built from sdists: recorded for `lock`, and said in the run's report.
Status finish_source_builds(StepContext& ctx, const std::vector<SourceBuilt>& built) {
    if (built.empty()) return {};
    std::vector<std::string> notes;
    for (const auto& b : built) notes.push_back(b.note);
    ctx.note = core::join(notes, "; ");
    return record_source_builds(ctx.venv, built);
}

Result<Outcome> execute_step(const ResolvedStep& step, StepContext& ctx) {
    const auto& spec = std::get<InstallSpec>(step.spec);
    if (spec.locked_run) {
        if (spec.locked.empty()) {
            ctx.note = step.note;  // the lock gives it nothing to install
            return Outcome::kept;
        }
        std::vector<SourceBuilt> all;
        for (size_t i = 0; i < spec.locked.size(); ++i) {
            const auto& c = spec.locked[i];
            std::string text = c.text;
            std::vector<SourceBuilt> built;
            const fs::path work = state::Layout(ctx.venv).source_builds_of(step.id) / std::to_string(i);
            if (spec.source_builds && !c.sdists.empty()) {
                pyenv::InstallRequest sources;
                sources.index_url = c.index_url;
                sources.extra_index_urls = c.extra_index_urls;
                BS_TRY(built, build_locked_sdists(step, ctx, *spec.source_builds, sources, c.sdists, work));
                text = without_built(text, built);
            }
            if (!text.empty()) {
                BS_CHECK(core::write_file_atomic(c.file, text));
                auto ran = run_child(step, ctx, c.argv);
                if (!ran) return tl::unexpected(locked_hash_failure(std::move(ran.error()), c));
            }
            if (!built.empty()) {
                fs::path file = c.file;
                file.replace_extension(".built.txt");
                BS_CHECK(install_built(step, ctx, *spec.source_builds, built, work / "wheels", file));
            }
            all.insert(all.end(), built.begin(), built.end());
        }
        BS_CHECK(finish_source_builds(ctx, all));
        return Outcome::ran;
    }
    if (spec.pylock) {
        if (spec.pylock->sha256.empty())  // not there when the plan was made, nor since
            return fail(ErrorCode::not_found,
                        fmt::format("step '{}': the pylock {} does not exist", step.id, spec.pylock->path));
        BS_CHECK(core::write_file_atomic(spec.pylock->file, spec.pylock->text));
    }
    // A pylock's pins come with their hashes (uv builds its sdists); with pip, pip builds.
    if (spec.pylock || !spec.source_builds || spec.source_builds->installer->name() != "uv") {
        BS_CHECK(run_child(step, ctx, step.argv));
        return Outcome::ran;
    }
    // First without building anything (`--no-build`): a resolution of wheels only, the common
    // case, costs nothing more. When it fails, uv's resolution says whether an sdist was the
    // reason: those are built (or found) in the build cache and the installer gets their wheels;
    // otherwise the installer runs as it would have (a git reference uv builds itself, or the
    // same failure again, with its own words).
    auto argv = step.argv;
    argv.emplace_back("--no-build");
    auto wheels_only = run_child(step, ctx, argv);
    if (wheels_only) return Outcome::ran;
    // Only a resolution's verdict can be about an sdist: trouble with the network (or a cut
    // short child) is the run's to retry, attempt by attempt.
    if (wheels_only.error().code == ErrorCode::interrupted || wheels_only.error().code == ErrorCode::timeout ||
        ctx.failure.kind != FailureKind::permanent)
        return tl::unexpected(wheels_only.error());
    ctx.failure = {};  // what follows classifies its own failure
    const fs::path work = state::Layout(ctx.venv).source_builds_of(step.id);
    BS_TRY(auto built, build_step_sdists(step, ctx, spec, work));
    BS_CHECK(run_child(step, ctx, install_argv_with(step, built, work)));
    BS_CHECK(finish_source_builds(ctx, built));
    return Outcome::ran;
}

/// Upgrade and reinstall steps always ask the installer.
std::optional<Satisfiable> satisfiable(const ResolvedStep& step) {
    const auto& spec = std::get<InstallSpec>(step.spec);
    if (spec.upgrade || spec.reinstall) return std::nullopt;
    return Satisfiable{spec.requirements, spec.pre};
}

Owned owned(const ResolvedStep& step) {
    const auto& spec = std::get<InstallSpec>(step.spec);
    const bool allows = step.source != nullptr && !step.source->allow_conflicts.empty();
    return Owned{&spec.requirements, spec.pre, spec.upgrade || allows, spec.upgrade};
}

Overrides overrides(const ResolvedStep& step) {
    const auto& spec = std::get<InstallSpec>(step.spec);
    return Overrides{&spec.request.overrides_file, &spec.overrides, &spec.later_overrides, nullptr, true};
}

const pyenv::InstallRequest* index_request(const ResolvedStep& step) {
    return &std::get<InstallSpec>(step.spec).request;
}

std::vector<std::string> index_urls(const ResolvedStep& step) { return std::get<InstallSpec>(step.spec).index_urls; }

void describe(const ResolvedStep& step, const DescribeAsk& /*ask*/, Description& out) {
    const auto& spec = std::get<InstallSpec>(step.spec);
    if (!spec.index_urls.empty()) out.before_argv.push_back("indexes: " + core::join(spec.index_urls, ", "));
    if (spec.pylock)
        out.before_argv.push_back(spec.pylock->sha256.empty()
                                      ? "pylock: " + spec.pylock->path + " (not there yet)"
                                      : fmt::format("pylock: {} ({} package(s), sha256 {})", spec.pylock->path,
                                                    spec.pylock->packages, spec.pylock->sha256.substr(0, 12)));
    for (size_t b = 1; b < spec.locked.size(); ++b)  // --locked: one command per list of indexes
        out.after_argv.push_back("then: " + core::redact_text(core::format_argv(spec.locked[b].argv)));
}

void describe_json(const ResolvedStep& step, nlohmann::json& out) {
    const auto& spec = std::get<InstallSpec>(step.spec);
    if (!spec.index_urls.empty()) out["index_urls"] = spec.index_urls;
    if (spec.pylock) out["pylock"] = {{"path", spec.pylock->path}, {"sha256", spec.pylock->sha256}};
}

}  // namespace

extern const Kind k_install_kind;
const Kind k_install_kind{
    .name = "install",
    .parse = parse,
    .spec = k_spec_index<InstallSpec>,
    .expand = expand,
    .environment_known = environment_known,
    .key_inputs = key_inputs,
    .execute = execute_step,
    .satisfiable = satisfiable,
    .owned = owned,
    .overrides = overrides,
    .index_request = index_request,
    .index_urls = index_urls,
    .describe = describe,
    .describe_json = describe_json,
    .runs_installer = true,
    .shows_downloads = true,
    .network_attempts = true,
    .needs_venv = true,
};

}  // namespace bootstrap::steps
