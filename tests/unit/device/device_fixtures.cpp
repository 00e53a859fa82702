#include "device_fixtures.hpp"

#include <sys/stat.h>

#include <fstream>
#include <memory>

#include "core/fs.hpp"
#include "exec/process.hpp"

namespace bootstrap::test {

ScopedEnv::ScopedEnv(std::string name, std::optional<std::string> value) : m_name(std::move(name)) {
    if (const char* old = std::getenv(m_name.c_str())) m_old = old;
    if (value) ::setenv(m_name.c_str(), value->c_str(), 1);
    else ::unsetenv(m_name.c_str());
}

ScopedEnv::~ScopedEnv() {
    if (m_old) ::setenv(m_name.c_str(), m_old->c_str(), 1);
    else ::unsetenv(m_name.c_str());
}

void write_script(const fs::path& path, const std::string& body) {
    fs::create_directories(path.parent_path());
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << body;
    }
    ::chmod(path.c_str(), 0755);
}

exec::EnvMap child_env(const exec::EnvMap& extra) {
    exec::EnvMap env{{"PATH", "/usr/bin:/bin"}};
    for (const auto& [k, v] : extra) env[k] = v;
    return env;
}

namespace {

struct FakeVenv {
    std::unique_ptr<core::TempDir> dir;
    std::optional<fs::path> venv;
    std::string why;
};

FakeVenv make_fake_venv() {
    FakeVenv out;
    auto env = exec::current_environment();
    fs::path python = exec::find_program("python3", env.count("PATH") ? env.at("PATH") : "");
    if (python.empty()) {
        out.why = "python3 not found on PATH";
        return out;
    }
    out.dir = std::make_unique<core::TempDir>("bs-fake-torch");
    fs::path venv = out.dir->path() / "venv";
    exec::ProcessSpec spec;
    spec.argv = {python.string(), "-m", "venv", "--without-pip", venv.string()};
    spec.env = env;
    spec.capture = true;
    auto made = exec::run_process(spec);
    if (!made || !made->ok()) {
        out.why = "python3 -m venv failed: " + (made ? made->output : made.error().message);
        return out;
    }
    fs::path site;
    for (const auto& entry : fs::directory_iterator(venv / "lib")) {
        if (fs::exists(entry.path() / "site-packages")) site = entry.path() / "site-packages";
    }
    if (site.empty()) {
        out.why = "the new venv has no lib/python*/site-packages";
        return out;
    }
    fs::copy(fs::path(BS_TEST_FIXTURES) / "fake_torch" / "torch", site / "torch", fs::copy_options::recursive);
    out.venv = venv;
    return out;
}

}  // namespace

const std::optional<fs::path>& fake_torch_venv(std::string* why) {
    static FakeVenv venv = make_fake_venv();
    if (why) *why = venv.why;
    return venv.venv;
}

}  // namespace bootstrap::test
