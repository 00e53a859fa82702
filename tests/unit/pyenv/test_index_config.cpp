#include <catch2/catch.hpp>

#include <fstream>

#include "core/fs.hpp"
#include "pyenv/index_config.hpp"

using namespace bootstrap;

namespace {
void write(const std::filesystem::path& p, const std::string& text) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
}
using V = std::vector<std::string>;
}  // namespace

TEST_CASE("with no index anywhere, both installers use PyPI", "[index_config]") {
    core::TempDir home;
    exec::EnvMap env{{"HOME", home.path().string()}};
    pyenv::InstallRequest r;
    for (const char* installer : {"uv", "pip"}) {
        auto set = pyenv::effective_indexes(installer, r, env, home.path() / "venv");
        CHECK(set.all() == V{"https://pypi.org/simple"});
        CHECK(set.from == "default");
    }
}

TEST_CASE("the recipe's own indexes win, extras follow the default", "[index_config]") {
    exec::EnvMap env{{"UV_DEFAULT_INDEX", "https://env/simple"}, {"PIP_INDEX_URL", "https://pipenv/simple"}};
    pyenv::InstallRequest r;
    r.index_url = "https://main/simple";
    r.extra_index_urls = {"https://extra/simple"};
    CHECK(pyenv::effective_indexes("uv", r, env, "/v").all() == V{"https://main/simple", "https://extra/simple"});
    CHECK(pyenv::effective_indexes("pip", r, env, "/v").all() == V{"https://main/simple", "https://extra/simple"});
    r.no_index = true;
    CHECK(pyenv::effective_indexes("uv", r, env, "/v").all().empty());
}

TEST_CASE("uv's environment: UV_DEFAULT_INDEX, UV_INDEX_URL, UV_INDEX (name=url), UV_EXTRA_INDEX_URL",
          "[index_config]") {
    pyenv::InstallRequest r;
    exec::EnvMap env{{"UV_NO_CONFIG", "1"},
                     {"UV_INDEX_URL", "https://old/simple"},
                     {"UV_INDEX", "torch=https://torch/whl other=https://other/simple"},
                     {"UV_EXTRA_INDEX_URL", "https://x1/simple"}};
    auto set = pyenv::effective_indexes("uv", r, env, "/v");
    CHECK(set.from == "UV_INDEX_URL");
    CHECK(set.all() == V{"https://old/simple", "https://torch/whl", "https://other/simple", "https://x1/simple"});
    env["UV_DEFAULT_INDEX"] = "https://new/simple";
    CHECK(pyenv::effective_indexes("uv", r, env, "/v").default_index == "https://new/simple");
}

TEST_CASE("uv.toml: index-url, extra-index-url, [[index]] with default, [pip] section", "[index_config]") {
    core::TempDir dir;
    write(dir.path() / "uv.toml", R"(
# comment
[[index]]
name = "mirror"
url = "https://mirror/simple"
default = true

[[index]]
url = "https://extra-a/simple"

[pip]
extra-index-url = [
  "https://extra-b/simple",
]
)");
    exec::EnvMap env{{"UV_CONFIG_FILE", (dir.path() / "uv.toml").string()}};
    auto set = pyenv::effective_indexes("uv", {}, env, "/v");
    CHECK(set.from == "uv.toml");
    CHECK(set.all() == V{"https://mirror/simple", "https://extra-a/simple", "https://extra-b/simple"});
    env["UV_NO_CONFIG"] = "1";
    CHECK(pyenv::effective_indexes("uv", {}, env, "/v").all() == V{"https://pypi.org/simple"});

    core::TempDir home;
    write(home.path() / ".config" / "uv" / "uv.toml", "index-url = \"https://user/simple\"\n");
    exec::EnvMap user{{"HOME", home.path().string()}};
    CHECK(pyenv::effective_indexes("uv", {}, user, "/v").all() == V{"https://user/simple"});
}

TEST_CASE("pip: PIP_INDEX_URL, pip.conf [install] over [global], the venv's pip.conf", "[index_config]") {
    core::TempDir home;
    write(
        home.path() / ".config" / "pip" / "pip.conf",
        "[global]\nindex-url = https://global/simple\nextra-index-url =\n    https://e1/simple\n    https://e2/simple\n"
        "[install]\nindex-url = https://install/simple\n");
    exec::EnvMap env{{"HOME", home.path().string()}};
    auto set = pyenv::effective_indexes("pip", {}, env, home.path() / "venv");
    CHECK(set.from == "pip.conf");
    CHECK(set.all() == V{"https://install/simple", "https://e1/simple", "https://e2/simple"});
    env["PIP_INDEX_URL"] = "https://envpip/simple";
    CHECK(pyenv::effective_indexes("pip", {}, env, home.path() / "venv").default_index == "https://envpip/simple");
    env["PIP_CONFIG_FILE"] = "/dev/null";
    env.erase("PIP_INDEX_URL");
    CHECK(pyenv::effective_indexes("pip", {}, env, home.path() / "venv").all() == V{"https://pypi.org/simple"});
}

TEST_CASE("a recorded, redacted index URL gets its credentials back from what the caller knows", "[index_config]") {
    const std::vector<std::string> known{"https://pypi.org/simple", "http://deploy:S3cret@127.0.0.1:8080/main/simple/"};
    CHECK(pyenv::with_credentials("http://deploy:***@127.0.0.1:8080/main/simple", known) ==
          "http://deploy:S3cret@127.0.0.1:8080/main/simple/");
    // Unknown: the URL without userinfo (netrc or a keyring may still have it), never "***".
    CHECK(pyenv::with_credentials("https://u:***@other/simple", known) == "https://other/simple");
    CHECK(pyenv::with_credentials("https://pypi.org/simple", known) == "https://pypi.org/simple");
    exec::EnvMap env{
        {"UV_NO_CONFIG", "1"}, {"PIP_CONFIG_FILE", "/dev/null"}, {"UV_INDEX_URL", "https://ci:T0k@mirror/simple"}};
    auto all = pyenv::known_index_urls(env, "/v", {"https://r:pw@recipe/simple"});
    CHECK(pyenv::with_credentials("https://ci:***@mirror/simple", all) == "https://ci:T0k@mirror/simple");
    CHECK(pyenv::with_credentials("https://r:***@recipe/simple", all) == "https://r:pw@recipe/simple");
}
