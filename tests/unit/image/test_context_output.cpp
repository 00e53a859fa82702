// Issue 41, item 10: `-o ctx` (relative, as the README writes it) put the stage's host path in
// the COPY destinations instead of the image's /etc/bootstrap/.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "core/fs.hpp"
#include "image/containerfile.hpp"
#include "image_fixtures.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;
using test::slurp;
using test::write;

namespace {

/// Runs in `dir` for the test's scope.
class ScopedCwd {
public:
    explicit ScopedCwd(const fs::path& dir) : m_old(fs::current_path()) { fs::current_path(dir); }
    ~ScopedCwd() {
        std::error_code ec;
        fs::current_path(m_old, ec);
    }
    ScopedCwd(const ScopedCwd&) = delete;
    ScopedCwd& operator=(const ScopedCwd&) = delete;

private:
    fs::path m_old;
};

}  // namespace

TEST_CASE("a relative -o writes the image's paths, not the stage's, from any working directory") {
    core::TempDir dir{"bs-context-output"};
    const fs::path recipe_file = dir.path() / "proj" / "r.toml";
    write(dir.path() / "proj" / "ext" / "setup.py", "print()\n");
    write(recipe_file,
          "schema = 1\nname = \"g\"\n[venv]\npath = \"/tmp/never/venv\"\npython = \"3.11\"\n"
          "installer = \"pip\"\n"
          "[[step]]\nid = \"venv\"\nkind = \"venv\"\n[[step]]\nid = \"ext\"\nkind = \"build\"\nabi_packages = []\n"
          "source = { path = \"ext\" }\n");
    auto recipe = steps::load_recipe(recipe_file);
    REQUIRE(recipe);
    fs::create_directories(dir.path() / "work dir" / "sub");
    fs::create_directory_symlink(dir.path() / "work dir", dir.path() / "link");
    const std::pair<fs::path, fs::path> cases[] = {{dir.path() / "work dir", "ctx"},
                                                   {dir.path() / "work dir", "./ctx2"},
                                                   {dir.path() / "work dir" / "sub", "../x/ctx"},
                                                   {dir.path() / "link", "ctx3"},
                                                   {dir.path() / "work dir", "my ctx/"}};
    for (const auto& [cwd, out] : cases) {
        INFO(cwd.string() + " -o " + out.string());
        ScopedCwd in(cwd);
        if (out.string().starts_with("../")) fs::create_directories(fs::path("..") / "x");
        image::ContainerfileOptions o;
        o.output_dir = out;
        o.no_device = true;
        o.bootstrap_binary = recipe_file;
        o.bootstrap_version = "9.9.9-test";
        auto written = image::write_build_context(*recipe, o);
        INFO((written ? "" : written.error().message));
        REQUIRE(written);
        const auto text = slurp(out / "Dockerfile");
        CHECK(text.find("COPY [\"sources/0/\", \"/etc/bootstrap/ext/\"]\n") != std::string::npos);
        CHECK(text.find(".tmp-") == std::string::npos);
        CHECK(fs::exists(out / "sources" / "0" / "setup.py"));
    }
}
