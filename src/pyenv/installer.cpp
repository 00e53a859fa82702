#include "pyenv/installer.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include "exec/process.hpp"
#include "pyenv/interpreter.hpp"
#include "pyenv/requirement.hpp"

namespace bootstrap::pyenv {

namespace {

/// uv's `--upgrade` upgrades every package of the resolution, dependencies already satisfied
/// included (cuBLAS's upgrade raised nvidia-cuda-nvrtc past torch's pin too); pip's `--upgrade`
/// (strategy only-if-needed) upgrades just the named ones. uv gets the same: one
/// `--upgrade-package NAME` per requirement it can name, `--upgrade` only for one it cannot (a
/// path or URL).
void add_uv_upgrade(std::vector<std::string>& argv, const std::vector<std::string>& requirements) {
    std::vector<std::string> names;
    for (const auto& text : requirements) {
        auto req = Requirement::parse(text);
        if (!req || !req->url.empty()) {
            argv.push_back("--upgrade");
            return;
        }
        names.push_back(req->name);
    }
    for (const auto& name : names) argv.insert(argv.end(), {"--upgrade-package", name});
}

void add_sources(std::vector<std::string>& argv, const InstallRequest& r) {
    if (r.index_url) {
        argv.push_back("--index-url");
        argv.push_back(*r.index_url);
    }
    for (const auto& u : r.extra_index_urls) {
        argv.push_back("--extra-index-url");
        argv.push_back(u);
    }
    for (const auto& f : r.find_links) {
        argv.push_back("--find-links");
        argv.push_back(f);
    }
    if (r.no_index) argv.push_back("--no-index");
    if (r.dry_run) argv.push_back("--dry-run");
}

void add_no_build_isolation(std::vector<std::string>& argv, const InstallRequest& r) {
    for (const auto& name : r.no_build_isolation_packages)
        argv.insert(argv.end(), {"--no-build-isolation-package", name});
}

class UvInstaller final : public Installer {
public:
    explicit UvInstaller(fs::path uv) : m_uv(std::move(uv)) {}
    std::string name() const override { return "uv"; }
    std::string identity() const override { return "uv " + file_identity(m_uv); }
    fs::path program() const override { return m_uv; }

    Command create_venv(const fs::path& venv, const std::string& python) const override {
        // --allow-existing: the venv directory may already hold bootstrap's own state dir.
        return {{m_uv.string(), "venv", "--no-project", "--allow-existing", "--python", python, venv.string()}, {}, {}};
    }

    Command install(const fs::path& venv, const InstallRequest& r, const NetworkOptions& net) const override {
        Command c;
        c.argv = {m_uv.string(), "pip", "install", "--python", venv_python(venv).string()};
        add_sources(c.argv, r);
        if (r.upgrade) add_uv_upgrade(c.argv, r.requirements);
        if (r.reinstall) c.argv.push_back("--reinstall");
        if (r.no_deps) c.argv.push_back("--no-deps");
        for (const auto& name : r.reinstall_packages) c.argv.insert(c.argv.end(), {"--reinstall-package", name});
        if (r.pre) c.argv.insert(c.argv.end(), {"--prerelease", "allow"});
        if (r.overrides_file) c.argv.insert(c.argv.end(), {"--override", r.overrides_file->string()});
        add_no_build_isolation(c.argv, r);
        c.argv.insert(c.argv.end(), r.requirements.begin(), r.requirements.end());
        c.env_set = network_env(net);
        return c;
    }

    Command resolve(const fs::path& venv, const InstallRequest& r, const fs::path& requirements_in, const fs::path& out,
                    const NetworkOptions& net) const override {
        Command c;
        c.argv = {m_uv.string(),   "pip",         "compile",
                  "--format",      "pylock.toml", "--quiet",
                  "--no-header",   "--python",    venv_python(venv).string(),
                  "--output-file", out.string()};
        InstallRequest sources = r;
        sources.dry_run = false;
        add_sources(c.argv, sources);
        if (r.pre) c.argv.insert(c.argv.end(), {"--prerelease", "allow"});
        if (r.overrides_file) c.argv.insert(c.argv.end(), {"--override", r.overrides_file->string()});
        add_no_build_isolation(c.argv, r);
        c.argv.push_back(requirements_in.string());
        c.env_set = network_env(net);
        return c;
    }

    Command build_wheel(const fs::path& venv, const BuildRequest& r, const NetworkOptions& net) const override {
        Command c;
        c.argv = {m_uv.string(), "build",
                  "--wheel",     "--no-create-gitignore",
                  "--out-dir",   r.out_dir.string(),
                  "--python",    venv_python(venv).string()};
        if (r.no_build_isolation) c.argv.push_back("--no-build-isolation");
        if (r.build_constraints) c.argv.insert(c.argv.end(), {"--build-constraint", r.build_constraints->string()});
        if (r.sources) {
            InstallRequest sources;
            sources.index_url = r.sources->index_url;
            sources.extra_index_urls = r.sources->extra_index_urls;
            sources.find_links = r.sources->find_links;
            add_sources(c.argv, sources);
        }
        for (const auto& [k, v] : r.config_settings) c.argv.insert(c.argv.end(), {"--config-setting", k + "=" + v});
        c.argv.push_back(r.project.string());
        c.env_set = network_env(net);
        return c;
    }

    Command uninstall(const fs::path& venv, const std::vector<std::string>& names) const override {
        Command c;
        c.argv = {m_uv.string(), "pip", "uninstall", "--python", venv_python(venv).string()};
        c.argv.insert(c.argv.end(), names.begin(), names.end());
        c.env_set = {{"UV_NO_PROGRESS", "1"}};
        return c;
    }

    static exec::EnvMap network_env(const NetworkOptions& net) {
        return {{"UV_HTTP_TIMEOUT", std::to_string(net.timeout)},
                {"UV_HTTP_RETRIES", std::to_string(net.retries)},
                {"UV_NO_PROGRESS", "1"}};
    }

private:
    fs::path m_uv;
};

class PipInstaller final : public Installer {
public:
    explicit PipInstaller(fs::path base_python) : m_base_python(std::move(base_python)) {}
    std::string name() const override { return "pip"; }
    // The pip that runs lives in the venv; its identity is the venv's interpreter plus the
    // interpreter that creates venvs.
    std::string identity() const override { return "pip " + file_identity(m_base_python); }
    fs::path program() const override { return m_base_python; }

    Command create_venv(const fs::path& venv, const std::string& python) const override {
        // An interpreter path from the recipe makes the venv; a version was matched by
        // make_installer when it chose m_base_python.
        const std::string base = python.find('/') != std::string::npos ? python : m_base_python.string();
        return {{base, "-m", "venv", venv.string()}, {}, {}};
    }

    Command install(const fs::path& venv, const InstallRequest& r, const NetworkOptions& net) const override {
        Command c;
        c.argv = {
            venv_python(venv).string(), "-m", "pip", "install", "--timeout", std::to_string(net.timeout), "--retries",
            std::to_string(net.retries)};
        add_sources(c.argv, r);
        if (r.upgrade) c.argv.push_back("--upgrade");
        if (r.reinstall) c.argv.push_back("--force-reinstall");
        if (r.no_deps) c.argv.push_back("--no-deps");
        if (r.pre) c.argv.push_back("--pre");
        if (r.overrides_file) c.argv.insert(c.argv.end(), {"--constraint", r.overrides_file->string()});
        c.argv.insert(c.argv.end(), r.requirements.begin(), r.requirements.end());
        c.env_set = {{"PIP_DISABLE_PIP_VERSION_CHECK", "1"}, {"PIP_NO_INPUT", "1"}};
        return c;
    }

    Command build_wheel(const fs::path& venv, const BuildRequest& r, const NetworkOptions& net) const override {
        Command c;
        c.argv = {venv_python(venv).string(),
                  "-m",
                  "pip",
                  "wheel",
                  "--no-deps",
                  "--wheel-dir",
                  r.out_dir.string(),
                  "--timeout",
                  std::to_string(net.timeout),
                  "--retries",
                  std::to_string(net.retries)};
        if (r.no_build_isolation) c.argv.push_back("--no-build-isolation");
        for (const auto& [k, v] : r.config_settings) c.argv.push_back("--config-settings=" + k + "=" + v);
        c.argv.push_back(r.project.string());
        c.env_set = {{"PIP_DISABLE_PIP_VERSION_CHECK", "1"}, {"PIP_NO_INPUT", "1"}};
        return c;
    }

    Command resolve(const fs::path& /*venv*/, const InstallRequest& /*request*/, const fs::path& /*requirements_in*/,
                    const fs::path& /*out*/, const NetworkOptions& /*net*/) const override {
        return {};  // pip builds what it needs itself
    }

    Command uninstall(const fs::path& venv, const std::vector<std::string>& names) const override {
        Command c;
        c.argv = {venv_python(venv).string(), "-m", "pip", "uninstall", "-y"};
        c.argv.insert(c.argv.end(), names.begin(), names.end());
        c.env_set = {{"PIP_DISABLE_PIP_VERSION_CHECK", "1"}, {"PIP_NO_INPUT", "1"}};
        return c;
    }

private:
    fs::path m_base_python;
};

}  // namespace

std::string file_identity(const fs::path& program) {
    struct stat st {};
    if (::stat(program.c_str(), &st) != 0) return program.string() + " missing";
    return fmt::format("{} {} {}", program.string(), st.st_size, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
}

Result<fs::path> find_uv(const std::string& path_var) {
    auto uv = exec::find_program("uv", path_var);
    if (uv.empty())
        return fail(ErrorCode::not_found, "the recipe's installer is uv, but uv is not on PATH",
                    "install it with `python3 -m pip install uv` (or `pipx install uv`), put it on "
                    "PATH, or set `installer = \"pip\"` in the recipe's [venv] section");
    return uv;
}

Result<std::unique_ptr<Installer>> make_installer(const std::string& name, const std::string& path_var,
                                                  const std::string& python_request, bool allow_missing) {
    if (name == "uv") {
        auto uv = find_uv(path_var);
        if (!uv && allow_missing) uv = fs::path("uv");
        if (!uv) return tl::unexpected(uv.error());
        return std::unique_ptr<Installer>(std::make_unique<UvInstaller>(*uv));
    }
    if (name == "pip") {
        if (python_request.find('/') != std::string::npos)  // [venv] python names the interpreter
            return std::unique_ptr<Installer>(std::make_unique<PipInstaller>(python_request));
        for (const std::string& candidate : {"python" + python_request, std::string("python3")}) {
            auto p = exec::find_program(candidate, path_var);
            if (!p.empty()) return std::unique_ptr<Installer>(std::make_unique<PipInstaller>(p));
        }
        if (allow_missing) return std::unique_ptr<Installer>(std::make_unique<PipInstaller>("python" + python_request));
        return fail(ErrorCode::not_found,
                    fmt::format("no python{} (or python3) on PATH to create the venv with", python_request));
    }
    return fail(ErrorCode::usage, fmt::format("unknown installer '{}' (expected uv or pip)", name));
}

Command uv_sync(const fs::path& uv, const fs::path& project, const fs::path& venv, const std::vector<std::string>& args,
                const NetworkOptions& net) {
    Command c;
    c.argv = {uv.string(), "sync", "--project", project.string(), "--python", venv_python(venv).string()};
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    c.env_set = {{"UV_PROJECT_ENVIRONMENT", venv.string()},
                 {"UV_HTTP_TIMEOUT", std::to_string(net.timeout)},
                 {"UV_HTTP_RETRIES", std::to_string(net.retries)},
                 {"UV_NO_PROGRESS", "1"}};
    return c;
}

}  // namespace bootstrap::pyenv
