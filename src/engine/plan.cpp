#include "engine/plan.hpp"

#include <sched.h>

#include <functional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/env_policy.hpp"
#include "core/fs.hpp"
#include "core/key.hpp"
#include "core/redact.hpp"
#include "core/strings.hpp"
#include "engine/expander.hpp"
#include "engine/fixed_point.hpp"
#include "engine/image_state.hpp"
#include "engine/locked_plan.hpp"
#include "manifest/artifacts.hpp"
#include "pyenv/index_config.hpp"
#include "pyenv/tool_version.hpp"
#include "recipe/placeholders.hpp"
#include "steps/kind.hpp"
#include "steps/verify_clause.hpp"

namespace bootstrap::engine {

namespace {

// v2: transport settings ([network] timeout/retries) left the key.
// v3: keys no longer chain through the previous step's key: a step's key holds its own inputs
// and the facts it reads (an edit to one step re-runs that step, not every later one).
// v4: inherited variables count only where they decide the result (per kind, core/env_policy.hpp,
// plus `[env] key`); tools count by their version, not their file's stat. A journal written
// under v3 is recognised by the step's v3 key (legacy_key) and re-keyed without running.
constexpr const char* k_step_key_scheme = "bootstrap-step-v4";
constexpr const char* k_legacy_key_scheme = "bootstrap-step-v3";

// Transport settings ([network] timeout/retries) change how an installer fetches, not what it
// installs: they stay out of the key, so a changed timeout re-runs nothing. A step's command is
// built a second time with these values, which no recipe can set (timeout >= 1, retries >= 0);
// what differs between the two is transport (see without_transport).
constexpr pyenv::NetworkOptions k_key_transport{-1, -1};
constexpr const char* k_transport_shown = "<[network]>";

/// `cmd` without its transport settings: `probe` is the same command built with
/// k_key_transport; an argv word that differs is shown as k_transport_shown, an environment
/// variable that differs is dropped.
pyenv::Command without_transport(const pyenv::Command& cmd, const pyenv::Command& probe) {
    pyenv::Command out = cmd;
    if (probe.argv.size() == cmd.argv.size())
        for (size_t i = 0; i < cmd.argv.size(); ++i)
            if (cmd.argv[i] != probe.argv[i]) out.argv[i] = k_transport_shown;
    for (const auto& [k, v] : cmd.env_set) {
        auto it = probe.env_set.find(k);
        if (it == probe.env_set.end() || it->second != v) out.env_set.erase(k);
    }
    return out;
}

// bootstrap-step-v3 left these out of a key and counted every other variable a child could see.
bool v3_volatile(const std::string& name) { return core::env_has_use(name, core::EnvUse::volatile_); }

/// Does the inherited variable `name` decide the result of a step of `kind`? The recipe's
/// `[env] key` names, the installer's settings that change what it installs (for kinds that run
/// it), and what a native build reads (for kinds that compile). Nothing else a shell or a
/// scheduler sets is an input.
bool counts_in_key(const std::string& name, const steps::Kind& kind, const std::string& installer,
                   const recipe::Recipe& recipe) {
    if (recipe.env_key.count(name)) return true;
    if (kind.runs_installer &&
        core::env_has_use(name, installer == "pip" ? core::EnvUse::pip_input : core::EnvUse::uv_input))
        return true;
    return kind.build_env && core::env_has_use(name, core::EnvUse::build_input);
}

std::string home_expanded(const std::string& path, const exec::EnvMap& env) {
    auto home = env.find("HOME");
    return core::expand_home(path, home == env.end() ? "" : home->second);
}

/// Names a venv's bin/ provides: a run step saying `python` or `pip` means the venv's, even
/// before the venv step has made it.
bool venv_provides(const std::string& program, const std::string& python_request) {
    return program == "python" || program == "python3" || program == "pip" || program == "pip3" ||
           program == "python" + python_request;
}

/// Masks, from now on, the values of the secret-named variables (core::is_secret_name, the
/// recipe's `[env] secret` included) the plan has read ({env.NAME}) and those `set` gives:
/// wherever an argv or a value is shown, logged or hashed into a key they are "***"
/// (core::add_secret_values), while the child still gets them.
void mask_secret_values(const recipe::Recipe& recipe, const Expander& ex, const exec::EnvMap& set) {
    std::vector<std::string> values;
    for (const auto& [name, read] : ex.env_read())
        if (read.value && core::is_secret_name(name, recipe.env_secret)) values.push_back(*read.value);
    for (const auto& [name, value] : set)
        if (core::is_secret_name(name, recipe.env_secret)) values.push_back(value);
    core::add_secret_values(values);
}

int host_cpus() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

/// The plan as a kind's expansion sees it (steps/kind.hpp).
class StepBuilder final : public steps::PlanContext {
public:
    StepBuilder(const recipe::Recipe& r, const PlanOptions& o, const Facts& f, Plan& p, Expander& e)
        : m_recipe(r), m_options(o), m_facts(f), m_plan(p), m_ex(e) {
        recipe = &r;
        venv = p.venv;
        venv_python = p.venv_python;
        installer = p.installer;
        net = p.net;
        key_net = k_key_transport;
        base_env = &p.base_env;
        env = &f.env;
        python = f.python ? &*f.python : nullptr;
        home = manifest::bootstrap_home(f.env);
        dry_run = o.dry_run;
        recreate = o.recreate;
        locked_run = o.locked.has_value();
        check_local_inputs = o.check_local_inputs;
        this_machine = o.this_machine;
        earlier = &p.steps;
    }

    Result<std::string> text(const recipe::Text& t, steps::ResolvedStep& out) override {
        BS_TRY(auto e, m_ex.expand(t));
        if (!e.complete) out.complete = false;
        return e.value;
    }

    /// Relative local paths (find_links, project, cwd, creates) are taken from the recipe's dir.
    std::string local_path(const std::string& raw) const override {
        const std::string value = home_expanded(raw, m_facts.env);
        if (value.empty() || value.find("://") != std::string::npos || fs::path(value).is_absolute() ||
            value.front() == '<')
            return value;
        return (m_recipe.file.parent_path() / value).lexically_normal().string();
    }

    /// --locked: what the step installs (engine/locked_plan.hpp).
    Result<std::optional<steps::LockedInstall>> locked(const recipe::Step& s,
                                                       const std::vector<std::string>& own_urls) override {
        if (m_locked == nullptr) return std::optional<steps::LockedInstall>();
        std::vector<std::string> known = known_index_urls();
        known.insert(known.end(), own_urls.begin(), own_urls.end());
        BS_TRY(auto install,
               m_locked->install(s.id, venv, home, known, python, [this](std::string n) { add_notice(std::move(n)); }));
        return std::optional(std::move(install));
    }

    void set_locked(LockedPlan* locked) { m_locked = locked; }
    void set_tools(pyenv::ToolVersions* tools) { m_tools = tools; }

    /// Index URLs with credentials as the environment, the installers' config and the steps
    /// planned so far give them (once).
    const std::vector<std::string>& known_index_urls() {
        if (!m_known_urls) {
            m_known_urls = pyenv::known_index_urls(m_facts.env, venv, steps::configured_index_urls(m_plan.steps));
        }
        return *m_known_urls;
    }

    std::vector<std::string> locked_pins() const override {
        std::vector<std::string> pins;
        if (m_options.locked)
            for (const auto& [name, p] : m_options.locked->packages)
                // A local wheel (a build's own) is installed by path: a pin would send the
                // installer to an index for it.
                if (p.origin.artifact_sha256.empty()) pins.push_back(name + "==" + p.version);
        return pins;
    }

    void add_note(std::string note) override { m_plan.notes.push_back(std::move(note)); }
    /// A note `run` shows too.
    void add_notice(std::string note) {
        m_plan.notices.push_back(note);
        m_plan.notes.push_back(std::move(note));
    }

    Result<steps::ResolvedStep> build(const recipe::Step& s, size_t index) {
        // A step the run does not act on asks no device (its device values stay unknown).
        struct Defer {
            Expander& ex;
            ~Defer() {
                ex.set_device_deferred(false);
                ex.set_step({});
            }
        } defer{m_ex};
        m_ex.set_step(s.id);  // the {env.*} its values read are its own (EnvRead::steps)
        const bool answered_without_probing = m_options.arch || m_options.no_device;
        m_ex.set_device_deferred(!m_plan.selected[index] || (!m_options.probe_devices && !answered_without_probing));
        const steps::Kind& kind = steps::kind_of(s.kind);  // make_plan checked every step's
        const int device_uses_before = m_ex.device_uses();
        steps::ResolvedStep out;
        out.source = &s;
        out.id = s.id;
        out.kind = s.kind;
        out.index = index;
        out.optional = s.optional;
        out.cwd = "/";  // neutral: no project discovery, no relative-path surprises
        out.attempts = s.attempts.value_or(kind.network_attempts ? m_recipe.network.attempts : 1);
        out.timeout = s.timeout.value_or(0);

        steps::Expansion expansion;
        BS_CHECK(kind.expand(s, out, *this, expansion));
        const pyenv::Command& cmd = expansion.command;
        const pyenv::Command key_cmd = cmd.argv.empty() ? cmd : without_transport(cmd, expansion.key_command);
        if (!cmd.argv.empty()) out.argv = cmd.argv;

        // Environment: recipe-level [env] is already in base_env; now the installer's own
        // variables, then the step's env/env_unset (the step wins).
        for (const auto& [k, v] : m_recipe.env_set) {
            BS_TRY(auto value, text(v, out));
            out.env_set[k] = value;
        }
        exec::EnvMap key_env_set = out.env_set;  // the same, with the key's transport values
        for (const auto& [k, v] : cmd.env_set) out.env_set[k] = v;
        for (const auto& [k, v] : key_cmd.env_set) key_env_set[k] = v;
        for (const auto& [k, v] : s.env) {
            BS_TRY(auto value, text(v, out));
            out.env_set[k] = value;
            key_env_set[k] = value;
        }
        out.env_unset = m_recipe.env_unset;
        out.env_unset.insert(out.env_unset.end(), s.env_unset.begin(), s.env_unset.end());
        for (const auto& u : cmd.env_unset) out.env_unset.push_back(u);
        std::erase_if(out.env_unset, [&](const std::string& n) { return out.env_set.count(n) > 0; });
        std::sort(out.env_unset.begin(), out.env_unset.end());
        out.env_unset.erase(std::unique(out.env_unset.begin(), out.env_unset.end()), out.env_unset.end());
        out.child_env = exec::compose_environment(m_facts.env, out.env_set, out.env_unset);
        for (const auto& name : m_recipe.env_key)  // named as inputs: the step sees them too
            if (auto it = m_facts.env.find(name); it != m_facts.env.end() && !out.child_env.count(name) &&
                                                  !std::count(out.env_unset.begin(), out.env_unset.end(), name))
                out.child_env[name] = it->second;
        auto* other_argv = kind.other_argv ? kind.other_argv(out) : nullptr;
        if (kind.venv_environment) use_venv_environment(out, other_argv);
        resolve_program(out.argv, out.child_env);
        if (other_argv) resolve_program(*other_argv, out.child_env);
        if (kind.environment_known) kind.environment_known(out, *this);
        std::vector<std::string> key_argv = cmd.argv.empty() ? out.argv : key_cmd.argv;
        if (!key_argv.empty() && !out.argv.empty()) key_argv[0] = out.argv[0];

        for (const auto& clause : s.verify) {
            BS_TRY(auto v, verify_clause(clause, out));
            out.verify.push_back(std::move(v));
        }
        if (kind.arches_used && m_ex.device_uses() > device_uses_before && m_ex.device_choice_made())
            kind.arches_used(out, *m_ex.device_choice_made());
        mask_secret_values(m_recipe, m_ex, out.env_set);
        compute_key(out, kind, key_argv, key_env_set);
        return out;
    }

private:
    /// Run steps and checks work inside the venv, as `launch` does: its bin/ first on PATH,
    /// VIRTUAL_ENV set, no PYTHONHOME. A value the step sets itself wins.
    void use_venv_environment(steps::ResolvedStep& out, std::vector<std::string>* other_argv) const {
        std::set<std::string> own;
        for (const auto& [name, value] : out.env_set) own.insert(name);
        exec::enter_venv(out.child_env, venv, own);
        if (out.env_set.count("PATH")) return;
        for (auto* argv : {&out.argv, other_argv})
            if (argv && !argv->empty() && venv_provides((*argv)[0], m_recipe.venv.python))
                (*argv)[0] = (venv / "bin" / (*argv)[0]).string();
    }

    // The program a child runs is resolved now, on the child's PATH, so that the plan shows
    // (and the key hashes) the exact file that will run.
    static void resolve_program(std::vector<std::string>& argv, const exec::EnvMap& env) {
        if (!argv.empty()) argv[0] = steps::on_path(argv[0], env);
    }

    /// The clause's own expansion (steps/verify_<name>.cpp).
    Result<steps::ResolvedVerify> verify_clause(const recipe::VerifyClause& clause, steps::ResolvedStep& out) {
        steps::ResolvedVerify v{clause.kind, {}, {}, {}, false, {}};
        BS_CHECK(steps::clause_of(clause.kind).expand(clause, v, out, *this));
        return v;
    }

    /// `key_argv` and `env_set` are the step's own, as built with the key's transport settings.
    ///
    /// Nothing of an earlier step's text is an input: what a step reads from earlier steps'
    /// work reaches its key as facts (placeholders such as {python.ext_suffix} in its argv, a
    /// build step's ABI packages' versions, an install step's overrides), and what it did to
    /// the venv is checked by the skip rule (owned distributions, an install step's own
    /// requirements), so a re-run after an edited earlier step stays correct.
    void compute_key(steps::ResolvedStep& out, const steps::Kind& kind, const std::vector<std::string>& key_argv,
                     const exec::EnvMap& env_set) const {
        if (!out.complete) {
            out.key.clear();
            out.key_explain = "(known once the venv exists)\n";
            return;
        }
        // Secrets (credentials in URLs, values of secret-looking variables) are shown as
        // `***` and never hashed: the key and `plan --explain` carry no secret, and rotating a
        // token re-runs nothing.
        const auto& secret = m_recipe.env_secret;
        std::vector<std::string> argv;
        for (const auto& a : key_argv) argv.push_back(core::redact_text(a));
        std::vector<std::string> set;
        for (const auto& [k, v] : env_set) set.push_back(k + "=" + core::shown_value(k, v, secret));
        auto inherited = [&](const std::function<bool(const std::string&)>& counts) {
            std::vector<std::string> out_env;
            for (const auto& [k, v] : out.child_env)
                if (!out.env_set.count(k) && counts(k)) out_env.push_back(k + "=" + core::shown_value(k, v, secret));
            return out_env;
        };
        auto fill = [&](core::KeyBuilder& key, const std::vector<std::string>& env, const std::string& installer_id,
                        const steps::ToolName& tool) {
            key.add("id", out.id);
            key.add("kind", out.kind);
            key.add("argv", argv);
            key.add("cwd", out.cwd.string());
            key.add("env.set", set);
            key.add("env.unset", out.env_unset);
            key.add("env.inherited", env);
            if (kind.runs_installer) key.add("installer", installer_id);
            kind.key_inputs(out, key, tool);
            std::vector<std::string> verify;
            for (const auto& v : out.verify) verify.push_back(v.describe());
            key.add("verify", verify);
        };
        const std::string installer_name = installer->name();
        core::KeyBuilder key(k_step_key_scheme);
        steps::ToolName by_version = [this](const std::string& program) { return tool_version(program); };
        fill(key, inherited([&](const std::string& k) { return counts_in_key(k, kind, installer_name, m_recipe); }),
             kind.runs_installer ? installer_version() : std::string(), by_version);
        out.key = key.digest();
        out.key_explain = key.explain();
        out.key_inputs = key.inputs();

        core::KeyBuilder legacy(k_legacy_key_scheme);
        fill(legacy, inherited([](const std::string& k) { return !v3_volatile(k); }), installer->identity(),
             steps::program_identity);
        out.legacy_key = legacy.digest();
    }

    /// What the installer is: "uv 0.9.5", "pip (Python 3.11.2)" (its interpreter for pip).
    std::string installer_version() const {
        const std::string name = installer->name();
        const std::string version = tool_version(installer->program().string());
        return version.starts_with(name + " ") ? version : fmt::format("{} ({})", name, version);
    }

    /// A tool by its version (cached by stat); on another machine's plan (an image's), by its
    /// file: the version of a tool here says nothing there.
    std::string tool_version(const std::string& program) const {
        if (m_tools == nullptr || !m_options.this_machine) return steps::program_identity(program);
        auto version = m_tools->version(program);
        return version ? *version : steps::program_identity(program);
    }

    const recipe::Recipe& m_recipe;
    const PlanOptions& m_options;
    const Facts& m_facts;
    Plan& m_plan;
    Expander& m_ex;
    std::optional<std::vector<std::string>> m_known_urls;
    LockedPlan* m_locked = nullptr;  // --locked
    pyenv::ToolVersions* m_tools = nullptr;
};

/// Steps that work in a venv need one: from the recipe's venv step, or already there.
Status check_venv_source(const recipe::Recipe& recipe, const fs::path& venv) {
    bool makes_venv = false;
    const recipe::Step* needs = nullptr;
    for (const auto& s : recipe.steps) {
        if (steps::kind_of(s.kind).makes_venv) makes_venv = true;
        const bool works_in_venv = steps::kind_of(s.kind).needs_venv || steps::clauses_need_venv(s);
        if (!needs && !makes_venv && works_in_venv) needs = &s;
    }
    if (!needs || makes_venv) return {};
    std::error_code ec;
    if (fs::exists(venv / "pyvenv.cfg", ec)) return {};
    return fail(ErrorCode::invalid_recipe,
                fmt::format("{}: step '{}' needs a venv, but the recipe has no `venv` step before it and {} is "
                            "not a venv",
                            needs->loc.str(), needs->id, venv.string()),
                "add a first step `[[step]] id = \"venv\"  kind = \"venv\"`, or point [venv] path (or --venv) "
                "at an existing venv");
}

}  // namespace

std::string Plan::device_origin() const {
    auto archs = device_facts.find("cuda_archs");
    auto from = device_facts.find("cuda_archs_from");
    if (archs == device_facts.end() || from == device_facts.end()) return {};
    return fmt::format("{} ({})", archs->second, from->second);
}

Result<Facts> gather_facts(const fs::path& venv, bool update_caches) {
    Facts facts;
    facts.env = exec::current_environment();
    BS_CHECK(apply_image_defaults(facts));
    facts.cpus = host_cpus();
    std::error_code ec;
    if (!venv.empty() && fs::exists(venv / "pyvenv.cfg", ec)) {
        auto env = exec::compose_environment(facts.env, {}, {});
        // A sealed venv is left as `seal` made it (engine/image_state.hpp).
        BS_TRY(auto py, pyenv::venv_facts(venv, env, update_caches && !is_sealed(venv)));
        facts.python = std::move(py);
    }
    return facts;
}

Result<fs::path> resolve_venv_path(const recipe::Recipe& recipe, const PlanOptions& options, const Facts& facts) {
    fs::path venv;
    if (options.venv) {
        venv = home_expanded(options.venv->string(), facts.env);
        if (venv.is_relative()) {
            std::error_code ec;
            fs::path cwd = fs::current_path(ec);
            if (ec)
                return fail(ErrorCode::io, fmt::format("--venv {}: cannot read the current directory: {}",
                                                       venv.string(), ec.message()));
            venv = cwd / venv;
        }
    } else {
        Expander ex(recipe, facts);
        BS_CHECK(ex.resolve_vars());
        BS_TRY(auto path, ex.expand(recipe.venv.path));
        if (!path.complete)
            return fail(ErrorCode::invalid_recipe, fmt::format("{}: the venv path must be known before anything runs",
                                                               recipe.venv.path.loc.str()));
        if (core::trim(path.value).empty())
            return fail(ErrorCode::invalid_recipe,
                        fmt::format("{}: [venv] path is empty{}; name the venv's own directory (e.g. "
                                    "\"~/.venvs/{}\")",
                                    recipe.venv.path.loc.str(),
                                    path.value == recipe.venv.path.value ? "" : " once expanded", recipe.name));
        venv = home_expanded(path.value, facts.env);
        if (venv.is_relative()) venv = recipe.file.parent_path() / venv;
    }
    // The path goes into line-based state (the facts cache, logs, scripts' shebangs): a newline
    // or other control character would corrupt it, and no real venv needs one.
    const std::string text = venv.string();
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c != 0x7f) continue;
        const std::string from = options.venv ? std::string("--venv") : recipe.venv.path.loc.str() + ": [venv] path";
        return fail(options.venv ? ErrorCode::usage : ErrorCode::invalid_recipe,
                    fmt::format("{}: the venv path {} contains a control character ({} at byte {}); "
                                "choose a path without one",
                                from, core::shell_quote(text),
                                c == '\n' ? std::string("a newline") : fmt::format("0x{:02x}", c), i));
    }
    return venv.lexically_normal();
}

bool StepSelection::includes(const std::vector<std::string>& ids, size_t i) const {
    const auto& id = ids[i];
    auto has = [&](const std::vector<std::string>& v) { return std::find(v.begin(), v.end(), id) != v.end(); };
    if (has(skip)) return false;
    if (!only.empty() && !has(only)) return false;
    if (from) {
        auto start = std::find(ids.begin(), ids.end(), *from);
        if (start != ids.end()) return i >= static_cast<size_t>(start - ids.begin());
    }
    return true;
}

Status StepSelection::check(const std::vector<std::string>& ids) const {
    auto check_one = [&](const std::string& id, const char* option) -> Status {
        if (std::find(ids.begin(), ids.end(), id) != ids.end()) return {};
        auto near = core::closest_match(id, ids);
        return fail(ErrorCode::usage,
                    fmt::format("{} {}: the recipe has no step '{}'{}", option, id, id,
                                near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)),
                    "steps: " + core::join(ids, ", "));
    };
    if (from) BS_CHECK(check_one(*from, "--from"));
    for (const auto& id : only) BS_CHECK(check_one(id, "--only"));
    for (const auto& id : skip) BS_CHECK(check_one(id, "--skip"));
    return {};
}

Result<Plan> make_plan(const recipe::Recipe& recipe, const PlanOptions& options, const Facts& facts) {
    Plan plan;
    plan.recipe = &recipe;
    std::vector<std::string> ids;
    for (const auto& s : recipe.steps) {
        // The parser knows only registered kinds; a recipe built otherwise may name another.
        if (!steps::find_kind(s.kind))
            return fail(ErrorCode::invalid_recipe,
                        fmt::format("{}: step '{}': no step kind is named '{}'", s.loc.str(), s.id, s.kind));
        ids.push_back(s.id);
    }
    BS_CHECK(options.selection.check(ids));
    plan.retry_optional = options.retry_optional;
    for (size_t i = 0; i < ids.size(); ++i) plan.selected.push_back(options.selection.includes(ids, i));
    BS_TRY(plan.venv, resolve_venv_path(recipe, options, facts));
    plan.venv_python = pyenv::venv_python(plan.venv);
    plan.net = {recipe.network.timeout, recipe.network.retries};

    Expander ex(recipe, facts);
    ex.set_venv(plan.venv);
    ex.set_device(options.arch, options.no_device, !options.dry_run);
    // What the device probes found joins the plan's notes where it was found.
    auto keep_findings = [&] {
        auto found = ex.take_findings();
        plan.notes.insert(plan.notes.end(), found.notes.begin(), found.notes.end());
        plan.notices.insert(plan.notices.end(), found.notices.begin(), found.notices.end());
        plan.device_facts = std::move(found.facts);
    };
    BS_CHECK(ex.resolve_vars());

    exec::EnvMap recipe_set;
    for (const auto& [k, v] : recipe.env_set) {
        BS_TRY(auto value, ex.expand(v));
        recipe_set[k] = value.value;
    }
    // The declared secrets are secret wherever their values show, read by a step or not.
    exec::EnvMap declared;
    for (const auto& name : recipe.env_secret)
        if (auto it = facts.env.find(name); it != facts.env.end()) declared.insert(*it);
    mask_secret_values(recipe, ex, declared);
    mask_secret_values(recipe, ex, recipe_set);
    plan.base_env = exec::compose_environment(facts.env, recipe_set, recipe.env_unset);
    auto path_it = plan.base_env.find("PATH");
    // An interpreter path in [venv] python is a local path like any other (`~`, the recipe's dir).
    std::string python_request = recipe.venv.python;
    if (recipe.venv.python_is_path()) {
        python_request = home_expanded(python_request, facts.env);
        if (fs::path(python_request).is_relative())
            python_request = (recipe.file.parent_path() / python_request).lexically_normal().string();
    }
    BS_TRY(auto installer, pyenv::make_installer(recipe::to_string(recipe.venv.installer),
                                                 path_it == plan.base_env.end() ? "" : path_it->second, python_request,
                                                 options.dry_run));
    plan.installer = std::move(installer);
    if (options.dry_run && plan.installer->identity().ends_with(" missing"))
        plan.notes.push_back(
            fmt::format("{} is not on PATH: the plan shows it by name; `run` would stop here", plan.installer->name()));

    if (!facts.python) BS_CHECK(check_venv_source(recipe, plan.venv));
    keep_findings();
    StepBuilder builder(recipe, options, facts, plan, ex);
    // `plan` reads the cache of tools' versions and never writes it.
    pyenv::ToolVersions tools(manifest::bootstrap_home(facts.env) / "tool-versions.json",
                              options.cache_tool_versions && !options.dry_run);
    builder.set_tools(&tools);
    std::optional<LockedPlan> locked;
    if (options.locked) {
        BS_CHECK(LockedPlan::check(*options.locked, recipe));
        // Where each install step's packages come from on this node: the same plan, unlocked.
        PlanOptions plain = options;
        plain.locked.reset();
        plain.probe_devices = false;
        BS_TRY(auto unlocked, make_plan(recipe, plain, facts));
        locked.emplace(*options.locked, unlocked, facts.python ? &facts.python->markers : nullptr);
        builder.set_locked(&*locked);
    }
    for (size_t i = 0; i < recipe.steps.size(); ++i) {
        auto built = builder.build(recipe.steps[i], i);
        keep_findings();
        if (!built) return tl::unexpected(built.error());
        plan.steps.push_back(std::move(*built));
    }
    tools.save();
    plan.pin_conflicts = pin_conflicts(plan, facts.python ? &facts.python->markers : nullptr, plan.notes);
    if (!plan.pin_conflicts.empty() && !options.collect_pin_conflicts)
        return tl::unexpected(plan.pin_conflicts.front());
    if (locked) BS_CHECK(locked->apply_coverage(plan));
    if (locked) BS_CHECK(locked->apply_selection(plan));
    plan.env_read = ex.env_read();
    note_image_secrets(facts, plan);
    plan.vars = ex.known_vars();
    return plan;
}

}  // namespace bootstrap::engine
