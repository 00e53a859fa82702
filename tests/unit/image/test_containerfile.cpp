#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "image/containerfile.hpp"
#include "image_fixtures.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;
using test::slurp;
using test::write;

namespace {

/// A recipe directory with two local build sources: `ext` named relative to the recipe and
/// `abs` by its absolute path; the recipe's index URL carries credentials from a build secret.
struct World {
    core::TempDir dir{"bs-containerfile"};
    fs::path recipe_dir = dir.path() / "proj";
    fs::path abs_src = dir.path() / "elsewhere" / "abs";
    fs::path recipe_file = recipe_dir / "image.toml";
    fs::path bin = dir.path() / "bootstrap-bin";
    World() {
        write(recipe_dir / "ext" / "pyproject.toml", "[project]\nname = \"ext\"\n");
        write(recipe_dir / "ext" / "build" / "junk.o", "old build output");
        write(recipe_dir / "ext" / ".git" / "HEAD", "ref: refs/heads/main\n");
        write(abs_src / "setup.py", "print('abs')\n");
        write(bin, "#!/bin/sh\necho fake bootstrap\n");
        write(recipe_file,
              "schema = 1\nname = \"img\"\n[venv]\npath = \"/tmp/never/venv\"\npython = \"3.11\"\n"
              "installer = \"pip\"\n[device]\nfallback_arch = \"8.0\"\n"
              "[[step]]\nid = \"venv\"\nkind = \"venv\"\n"
              "[[step]]\nid = \"deps\"\nkind = \"install\"\npackages = [\"six\"]\n"
              "index_url = \"https://alice:{env.BS_TEST_PYPI_TOKEN}@pypi.example.org/simple\"\n"
              "[[step]]\nid = \"ext\"\nkind = \"build\"\nabi_packages = []\n"
              "source = { path = \"ext\" }\n"
              "[[step]]\nid = \"abs\"\nkind = \"build\"\nabi_packages = []\n"
              "source = { path = \"" +
                  abs_src.string() + "\" }\n");
    }
    image::ContainerfileOptions options() const {
        image::ContainerfileOptions o;
        o.output_dir = dir.path() / "ctx";
        o.no_device = true;
        o.bootstrap_binary = bin;
        o.bootstrap_version = "9.9.9-test";
        o.secrets = {"BS_TEST_PYPI_TOKEN"};
        return o;
    }
    recipe::Recipe recipe() const {
        auto r = steps::load_recipe(recipe_file);
        REQUIRE(r);
        return *r;
    }
};

image::ContainerfileSpec golden_spec() {
    image::ContainerfileSpec s;
    s.base_image = "nvidia/cuda:13.0.0-devel-ubuntu24.04";
    s.recipe_name = "h200";
    s.recipe_digest = std::string(64, 'a');
    s.arch = "9.0";
    s.arch_args = {"--arch", "9.0"};
    s.venv = "/opt/venv";
    s.with_uv = true;
    s.lockfile_name = "h200.lock.json";
    image::ContextSource te;
    te.what = "step 'te' source directory";
    te.host_path = "/src/te";
    te.context_path = "sources/0";
    te.image_path = "/etc/bootstrap/te";
    image::ContextSource cpp;
    cpp.what = "step 'helpers' source";
    cpp.host_path = "/src/my dir/helpers.cpp";
    cpp.directory = false;
    cpp.context_path = "sources/1/helpers.cpp";
    cpp.image_path = "/src/my dir/helpers.cpp";
    s.sources = {te, cpp};
    s.env = {{"MAX_JOBS", "8"}, {"NOTE", "two words"}};
    s.bootstrap_version = "1.2.3";
    return s;
}

}  // namespace

TEST_CASE("the Dockerfile: one RUN with cache mounts, explicit arch, labels, documented paths") {
    const std::string expected =
        "# Written by `bootstrap containerfile` (bootstrap 1.2.3): recipe 'h200', arch 9.0.\n"
        "# Build with any of: DOCKER_BUILDKIT=1 docker build -t IMAGE DIR | podman build -t IMAGE DIR |\n"
        "# buildah bud -t IMAGE DIR\n"
        "# Behind a TLS-inspecting proxy, give its CA: --secret id=ca-bundle,src=/path/to/ca.pem\n"
        "# In the image: the venv at /opt/venv, its manifest and history in /opt/venv/.bootstrap/,\n"
        "# the recipe, lockfile and manifest (manifest.json, manifest.json.sha256) in /etc/bootstrap/.\n"
        "FROM nvidia/cuda:13.0.0-devel-ubuntu24.04\n"
        "COPY bootstrap/bin/ /usr/local/bin/\n"
        "COPY bootstrap/etc/ /etc/bootstrap/\n"
        "COPY [\"sources/0/\", \"/etc/bootstrap/te/\"]\n"
        "COPY [\"sources/1/helpers.cpp\", \"/src/my dir/helpers.cpp\"]\n"
        "LABEL org.opencontainers.image.title=\"h200\" \\\n"
        "      io.bootstrap.recipe.name=\"h200\" \\\n"
        "      io.bootstrap.recipe.digest=\"sha256:" +
        std::string(64, 'a') +
        "\" \\\n"
        "      io.bootstrap.arch=\"9.0\" \\\n"
        "      io.bootstrap.venv=\"/opt/venv\" \\\n"
        "      io.bootstrap.version=\"1.2.3\"\n"
        "ARG SOURCE_DATE_EPOCH=0\n"
        "RUN --mount=type=cache,id=bootstrap-home,target=/var/cache/bootstrap \\\n"
        "    --mount=type=cache,id=bootstrap-uv,target=/var/cache/uv \\\n"
        "    --mount=type=secret,id=ca-bundle,required=false \\\n"
        "    set -e; export BOOTSTRAP_HOME=/var/cache/bootstrap UV_CACHE_DIR=/var/cache/uv UV_LINK_MODE=copy "
        "NO_COLOR=1 MAX_JOBS=8 'NOTE=two words'; \\\n"
        "    if [ -f /run/secrets/ca-bundle ]; then export SSL_CERT_FILE=/run/secrets/ca-bundle "
        "CURL_CA_BUNDLE=/run/secrets/ca-bundle REQUESTS_CA_BUNDLE=/run/secrets/ca-bundle "
        "PIP_CERT=/run/secrets/ca-bundle GIT_SSL_CAINFO=/run/secrets/ca-bundle; fi; \\\n"
        "    bootstrap run /etc/bootstrap/recipe.toml --venv /opt/venv --arch 9.0 --lockfile "
        "/etc/bootstrap/h200.lock.json </dev/null; \\\n"
        "    /opt/venv/bin/python -m compileall -q -f -j0 --invalidation-mode checked-hash /opt/venv/lib \\\n"
        "        || echo 'compileall: some files did not compile; they stay as they are'; \\\n"
        "    bootstrap snapshot --venv /opt/venv -o /etc/bootstrap/manifest.json; \\\n"
        "    (cd /etc/bootstrap && sha256sum manifest.json > manifest.json.sha256); \\\n"
        "    bootstrap seal --venv /opt/venv\n"
        "ENV VIRTUAL_ENV=\"/opt/venv\" PATH=\"/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"\n";
    CHECK(image::render_containerfile(golden_spec()) == expected);
}

TEST_CASE("a recipe name with a line break stays in its comment, a venv with a space in its ENV") {
    auto s = golden_spec();
    s.recipe_name = "x\nRUN touch /PWNED";
    s.venv = "/opt/my venv";
    const auto text = image::render_containerfile(s);
    CHECK(text.find("\nRUN touch /PWNED") == std::string::npos);
    CHECK(text.find("recipe 'x RUN touch /PWNED'") != std::string::npos);
    CHECK(text.find("ENV VIRTUAL_ENV=\"/opt/my venv\" PATH=\"/opt/my venv/bin:") != std::string::npos);
    CHECK(text.find("bootstrap seal --venv '/opt/my venv'") != std::string::npos);
    size_t instructions = 0;  // every line is a comment, an instruction or a continuation
    for (const auto& line : core::split(text, '\n'))
        if (!line.empty() && line[0] != '#' && line[0] != ' ') ++instructions;
    CHECK(instructions == 9);  // FROM, 4 COPY, LABEL, ARG, RUN, ENV
}

TEST_CASE("labels and shell words are quoted") {
    auto s = golden_spec();
    s.recipe_name = "a\"b$c";
    s.env = {{"X", "it's"}};
    const auto text = image::render_containerfile(s);
    CHECK(text.find("io.bootstrap.recipe.name=\"a\\\"b\\$c\"") != std::string::npos);
    CHECK(text.find("'X=it'\\''s'") != std::string::npos);
}

TEST_CASE("the build context holds the binary, the recipe and its local sources where the image's recipe looks") {
    World w;
    auto written = image::write_build_context(w.recipe(), w.options());
    INFO((written ? "" : written.error().message + " " + written.error().detail));
    REQUIRE(written);
    const fs::path ctx = w.dir.path() / "ctx";
    CHECK(slurp(ctx / "bootstrap/bin/bootstrap") == slurp(w.bin));
    CHECK(slurp(ctx / "bootstrap/etc/recipe.toml") == slurp(w.recipe_file));
    CHECK_FALSE(fs::exists(ctx / "bootstrap/bin/uv"));  // a pip recipe needs no uv
    REQUIRE(written->spec.sources.size() == 2);
    const auto& abs = written->spec.sources[0];  // by path: elsewhere/abs < proj/ext
    const auto& ext = written->spec.sources[1];
    CHECK(abs.what == "step 'abs' source directory");
    CHECK(abs.image_path == w.abs_src.string());  // an absolute path stays
    CHECK(ext.what == "step 'ext' source directory");
    CHECK(ext.image_path == "/etc/bootstrap/ext");  // relative to the image's recipe
    CHECK(fs::exists(ctx / abs.context_path / "setup.py"));
    CHECK(fs::exists(ctx / ext.context_path / "pyproject.toml"));
    CHECK_FALSE(fs::exists(ctx / ext.context_path / "build"));  // build output is not source
    CHECK_FALSE(fs::exists(ctx / ext.context_path / ".git"));
    CHECK(ext.left_out == std::vector<std::string>{".git", "build (build output)"});
    CHECK(ext.files == 1);
    const auto text = slurp(ctx / "Dockerfile");
    CHECK(text.find("COPY [\"" + ext.context_path + "/\", \"/etc/bootstrap/ext/\"]\n") != std::string::npos);
    CHECK(text.find("--no-device") != std::string::npos);
    CHECK(text.find("io.bootstrap.arch=\"8.0\"") != std::string::npos);  // the fallback arch
    CHECK(text.find("io.bootstrap.recipe.digest=\"sha256:" + w.recipe().source_digest + "\"") != std::string::npos);
    // No temp dir is left beside it.
    for (const auto& e : fs::directory_iterator(w.dir.path()))
        CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
}

TEST_CASE("a build secret's value reaches neither the context nor the Dockerfile, which mounts it") {
    World w;
    ::setenv("BS_TEST_PYPI_TOKEN", "s3cr3t-token", 1);
    auto written = image::write_build_context(w.recipe(), w.options());
    ::unsetenv("BS_TEST_PYPI_TOKEN");
    REQUIRE(written);
    const fs::path ctx = w.dir.path() / "ctx";
    for (const auto& e : fs::recursive_directory_iterator(ctx))
        if (e.is_regular_file()) CHECK(slurp(e.path()).find("s3cr3t-token") == std::string::npos);
    const auto text = slurp(ctx / "Dockerfile");
    CHECK(text.find("    --mount=type=secret,id=BS_TEST_PYPI_TOKEN,required=false \\\n") != std::string::npos);
    CHECK(text.find("if [ -f /run/secrets/BS_TEST_PYPI_TOKEN ]; then BS_TEST_PYPI_TOKEN=\"$(cat "
                    "/run/secrets/BS_TEST_PYPI_TOKEN)\"; export BS_TEST_PYPI_TOKEN; else echo") != std::string::npos);
    CHECK(written->spec.env.empty());  // not an --env, not a variable written into the RUN
}

TEST_CASE("secrets written in the recipe are refused at their line, naming --secret") {
    World w;
    auto o = w.options();
    auto text = slurp(w.recipe_file);
    SECTION("a URL password") {
        text.replace(text.find("{env.BS_TEST_PYPI_TOKEN}"), 24, "s3cr3t-token");
        write(w.recipe_file, text);
        auto r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        INFO(r.error().message);
        CHECK(r.error().message.find("image.toml:16: a URL with credentials") != std::string::npos);
        CHECK(r.error().message.find("s3cr3t-token") == std::string::npos);
        CHECK(r.error().detail.find("--secret") != std::string::npos);
    }
    SECTION("a URL token in a comment") {
        write(w.recipe_file, text + "# mirror: https://tok-123456@mirror.example/simple\n");
        auto r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        INFO(r.error().message);
        CHECK(r.error().message.find("image.toml:27:") != std::string::npos);
    }
    SECTION("a secret-named variable with a literal value") {
        text.replace(text.find("[device]"), 8,
                     "[env]\nsecret = [\"MY_WORD\"]\nset = { MY_WORD = \"hunter22\" }\n[device]");
        write(w.recipe_file, text);
        auto r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("sets MY_WORD, a secret") != std::string::npos);
        CHECK(r.error().detail.find("--secret MY_WORD") != std::string::npos);
    }
    SECTION("a --secret that is not a secret name") {
        o.secrets.push_back("MAX_JOBS");
        auto r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("--secret MAX_JOBS: not a secret name") != std::string::npos);
    }
    SECTION("a secret the recipe reads, not given as --secret") {
        o.secrets.clear();
        ::setenv("BS_TEST_PYPI_TOKEN", "s3cr3t-token", 1);
        auto r = image::write_build_context(w.recipe(), o);
        ::unsetenv("BS_TEST_PYPI_TOKEN");
        REQUIRE_FALSE(r);
        CHECK(r.error().detail.find("--secret BS_TEST_PYPI_TOKEN") != std::string::npos);
    }
    CHECK_FALSE(fs::exists(w.dir.path() / "ctx"));
}

TEST_CASE("containerfile refuses what it cannot do right, naming it") {
    World w;
    auto o = w.options();
    SECTION("no arch") {
        o.no_device = false;
        auto r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("--arch") != std::string::npos);
    }
    SECTION("a secret-named --env") {
        o.env = {{"HF_TOKEN", "hf_abc"}};
        auto r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("HF_TOKEN") != std::string::npos);
        CHECK(r.error().message.find("hf_abc") == std::string::npos);
    }
    SECTION("an --env value with URL credentials") {
        o.env = {{"MIRROR", "https://bob:hunter2@mirror.example/simple"}};
        auto r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("MIRROR") != std::string::npos);
        CHECK(r.error().message.find("hunter2") == std::string::npos);
    }
    SECTION("a non-empty output directory") {
        write(o.output_dir / "keep", "x");
        auto r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("not empty") != std::string::npos);
        CHECK(slurp(o.output_dir / "keep") == "x");
    }
    SECTION("a uv recipe without a uv to copy, named after the arch is checked") {
        auto text = slurp(w.recipe_file);
        text.replace(text.find("installer = \"pip\""), 17, "installer = \"uv\"");
        write(w.recipe_file, text);
        auto r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("no uv was found") != std::string::npos);
        o.uv_binary = w.dir.path() / "no-uv";
        r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("no-uv") != std::string::npos);
        o.uv_binary = w.bin;
        o.no_device = false;
        r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("--arch") != std::string::npos);  // usage first
    }
    SECTION("a relative venv path") {
        o.venv = "venv";
        auto r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("'venv'") != std::string::npos);
    }
    // Issue 23, item 6: a line break in any value written into the Dockerfile would start an
    // instruction of its own.
    SECTION("a base image with a newline") {
        o.base_image = "debian:12\nRUN touch /PWNED";
        auto r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("--base") != std::string::npos);
        CHECK(r.error().message.find("a newline") != std::string::npos);
        o.base_image = "debian 12";
        r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("not an image reference") != std::string::npos);
    }
    SECTION("an --env value with a newline") {
        o.env = {{"FOO", "a\nRUN touch /PWNED"}};
        auto r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("--env FOO") != std::string::npos);
    }
    SECTION("an --arch with a newline") {
        o.no_device = false;
        o.arch = "9.0\nRUN touch /PWNED";
        auto r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("--arch") != std::string::npos);
    }
    SECTION("a venv path with a newline") {
        o.venv = "/opt/v\nRUN x";
        auto r = image::write_build_context(w.recipe(), o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("--venv") != std::string::npos);
    }
    CHECK_FALSE(fs::exists(w.dir.path() / "ctx" / "Dockerfile"));
}

TEST_CASE("a context carries every local input where the image's recipe reads it, and the variables it read") {
    core::TempDir dir{"bs-context-inputs"};
    const fs::path checkout = dir.path() / "checkout";
    write(checkout / "pyproject.toml", "[project]\nname = \"proj\"\n");
    write(checkout / "uv.lock", "version = 1\n");
    write(checkout / "pkg" / "helpers.cpp", "int x;\n");
    write(checkout / "pkg" / "__pycache__" / "m.cpython-311.pyc", "junk");
    write(checkout / ".venv" / "pyvenv.cfg", "home = /usr/bin\n");
    write(checkout / ".venv" / "lib" / "big", std::string(1000, 'x'));
    write(checkout / "cmake-out" / "CMakeCache.txt", "cache\n");
    write(checkout / ".git" / "HEAD", "ref: refs/heads/main\n");
    fs::create_symlink("pkg/helpers.cpp", checkout / "link.cpp");
    const fs::path repo = dir.path() / "repo";  // a local git repository (the fake's .git is enough)
    write(repo / ".git" / "HEAD", "ref: refs/heads/main\n");
    write(repo / "setup.py", "print()\n");
    const fs::path wheels = dir.path() / "recipe" / "wheels";
    write(wheels / "a-1.0-py3-none-any.whl", "zip");
    const fs::path recipe_file = dir.path() / "recipe" / "r.toml";
    write(recipe_file,
          "schema = 1\nname = \"inputs\"\n[vars]\ncheckout = \"{env.BS_TEST_CHECKOUT}\"\n"
          "mirror = \"{env.BS_TEST_MIRROR:-https://pypi.org/simple}\"\n"
          "[venv]\npath = \"{vars.checkout}/.venv\"\npython = \"3.11\"\ninstaller = \"uv\"\n"
          "[[step]]\nid = \"venv\"\nkind = \"venv\"\n"
          "[[step]]\nid = \"deps\"\nkind = \"sync\"\nproject = \"{vars.checkout}\"\n"
          "[[step]]\nid = \"local\"\nkind = \"install\"\npackages = [\"a\"]\nfind_links = [\"wheels\"]\n"
          "index_url = \"{vars.mirror}\"\n"
          "[[step]]\nid = \"ext\"\nkind = \"build\"\nabi_packages = []\n"
          "source = { git = \"" +
              repo.string() + "\", rev = \"" + std::string(40, 'a') +
              "\" }\n"
              "[[step]]\nid = \"helpers\"\nkind = \"pybind11\"\nsource = \"{vars.checkout}/pkg/helpers.cpp\"\n"
              "module = \"helpers\"\n");
    ::setenv("BS_TEST_CHECKOUT", checkout.c_str(), 1);
    ::unsetenv("BS_TEST_MIRROR");
    auto recipe = steps::load_recipe(recipe_file);
    REQUIRE(recipe);
    image::ContainerfileOptions o;
    o.output_dir = checkout / "ctx";  // inside a copied input: left out of its own copy
    o.arch = "9.0";
    o.bootstrap_binary = recipe_file;
    o.uv_binary = recipe_file;
    o.bootstrap_version = "9.9.9-test";

    SECTION("copied, folded and mapped") {
        auto written = image::write_build_context(*recipe, o);
        INFO((written ? "" : written.error().message + " " + written.error().detail));
        REQUIRE(written);
        const auto& sources = written->spec.sources;
        REQUIRE(sources.size() == 3);  // checkout (project, pybind11 source, [vars]), repo, wheels
        const auto& c = sources[0];
        CHECK(c.host_path == checkout);
        CHECK(c.image_path == checkout.string());
        const fs::path ctx = o.output_dir;
        CHECK(fs::exists(ctx / c.context_path / "pkg" / "helpers.cpp"));
        CHECK(fs::is_symlink(ctx / c.context_path / "link.cpp"));
        CHECK_FALSE(fs::exists(ctx / c.context_path / ".venv"));
        CHECK_FALSE(fs::exists(ctx / c.context_path / ".git"));
        CHECK_FALSE(fs::exists(ctx / c.context_path / "cmake-out"));
        CHECK_FALSE(fs::exists(ctx / c.context_path / "pkg" / "__pycache__"));
        CHECK_FALSE(fs::exists(ctx / c.context_path / "ctx"));
        CHECK(c.files == 4);  // pyproject.toml, uv.lock, helpers.cpp, link.cpp
        CHECK(fs::last_write_time(ctx / c.context_path / "uv.lock") == fs::last_write_time(checkout / "uv.lock"));
        const auto& r = sources[2 - (sources[1].host_path == repo ? 1 : 0)];
        CHECK(r.host_path == repo);
        CHECK(r.repository);
        CHECK(fs::exists(ctx / r.context_path / ".git" / "HEAD"));  // a repository keeps its .git
        const auto& wl = sources[sources[1].host_path == repo ? 2 : 1];
        CHECK(wl.host_path == wheels);
        CHECK(wl.image_path == "/etc/bootstrap/wheels");  // relative to the recipe
        // The variable read is set in the RUN; the defaulted one is not.
        const auto text = slurp(ctx / "Dockerfile");
        CHECK(text.find("BS_TEST_CHECKOUT=" + checkout.string()) != std::string::npos);
        CHECK(text.find("BS_TEST_MIRROR") == std::string::npos);
    }
    SECTION("an unset variable is an error naming it and the recipe's line") {
        ::unsetenv("BS_TEST_CHECKOUT");
        auto r = image::write_build_context(*recipe, o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("BS_TEST_CHECKOUT") != std::string::npos);
        CHECK(r.error().message.find("r.toml:4:") != std::string::npos);
    }
    SECTION("a variable whose value holds credentials is refused, the value hidden") {
        ::setenv("BS_TEST_MIRROR", "https://bob:hunter2@mirror.example/simple", 1);
        auto r = image::write_build_context(*recipe, o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("BS_TEST_MIRROR") != std::string::npos);
        CHECK(r.error().message.find("r.toml:5:") != std::string::npos);
        CHECK(r.error().message.find("hunter2") == std::string::npos);
        ::unsetenv("BS_TEST_MIRROR");
    }
    SECTION("a missing project is an error before anything is written") {
        fs::rename(checkout / "pyproject.toml", dir.path() / "moved");
        fs::remove_all(checkout);
        auto r = image::write_build_context(*recipe, o);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("project") != std::string::npos);
    }
    ::unsetenv("BS_TEST_CHECKOUT");
}

TEST_CASE("a url source's archive travels in the context, fetched into this machine's cache once") {
    core::TempDir dir{"bs-context-downloads"};
    const fs::path archive = dir.path() / "files" / "src-1.0.tar.gz";
    write(archive, "not really a tarball, but bytes with a sha256");
    const std::string sha = *core::sha256_file(archive);
    const fs::path recipe_file = dir.path() / "r.toml";
    write(recipe_file,
          "schema = 1\nname = \"dl\"\n[venv]\npath = \"/tmp/never\"\npython = \"3.11\"\ninstaller = \"pip\"\n"
          "[[step]]\nid = \"venv\"\nkind = \"venv\"\n"
          "[[step]]\nid = \"src\"\nkind = \"build\"\nabi_packages = []\n"
          "source = { url = \"file://" +
              archive.string() + "\", sha256 = \"" + sha + "\" }\n");
    ::setenv("BOOTSTRAP_HOME", (dir.path() / "home").c_str(), 1);
    auto recipe = steps::load_recipe(recipe_file);
    REQUIRE(recipe);
    image::ContainerfileOptions o;
    o.no_device = true;
    o.bootstrap_binary = recipe_file;
    o.bootstrap_version = "9.9.9-test";
    for (int n = 1; n <= 2; ++n) {
        o.output_dir = dir.path() / fmt::format("ctx{}", n);
        auto written = image::write_build_context(*recipe, o);
        INFO((written ? "" : written.error().message + " " + written.error().detail));
        REQUIRE(written);
        REQUIRE(written->spec.downloads.size() == 1);
        const auto& d = written->spec.downloads[0];
        CHECK(d.step_id == "src");
        CHECK(d.fetched == (n == 1));  // the second context finds it in $BOOTSTRAP_HOME
        CHECK(d.context_path == "bootstrap/downloads/" + sha + "/src-1.0.tar.gz");
        CHECK(slurp(o.output_dir / d.context_path) == slurp(archive));
        const auto text = slurp(o.output_dir / "Dockerfile");
        CHECK(text.find("--mount=type=bind,source=bootstrap/downloads,target=/run/bootstrap-downloads") !=
              std::string::npos);
        CHECK(text.find("cp -Rn /run/bootstrap-downloads/. /var/cache/bootstrap/sources/downloads/") !=
              std::string::npos);
    }
    ::unsetenv("BOOTSTRAP_HOME");
}
