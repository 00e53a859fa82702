// Issue 41, item 2: what a build context carries of this machine (only what the steps read; never
// `/`, a system directory or home whole; never a credential file).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "image/containerfile.hpp"
#include "image_fixtures.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;
using test::slurp;
using test::write;

namespace {

/// Sets a variable for the test's scope, then puts the old value back.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : m_name(name) {
        if (const char* old = std::getenv(name)) m_old = old;
        ::setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (m_old) ::setenv(m_name, m_old->c_str(), 1);
        else ::unsetenv(m_name);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* m_name;
    std::optional<std::string> m_old;
};

/// A fake home holding the credentials a home directory does.
void fill_home(const fs::path& home) {
    write(home / ".ssh" / "id_ed25519", "PRIVATE KEY\n");
    write(home / ".ssh" / "known_hosts", "host\n");
    write(home / ".netrc", "machine x login a password p\n");
    write(home / ".pypirc", "[pypi]\npassword = p\n");
    write(home / ".aws" / "credentials", "[default]\naws_secret_access_key = k\n");
    write(home / ".docker" / "config.json", "{\"auths\": {}}\n");
    write(home / ".local" / "share" / "keyrings" / "login.keyring", "k\n");
    write(home / "notes.txt", "mine\n");
}

const std::string k_head =
    "schema = 1\nname = \"g\"\n[venv]\npath = \"/tmp/never/venv\"\npython = \"3.11\"\n"
    "installer = \"pip\"\n";

struct Context {
    core::TempDir dir{"bs-context-guard"};
    fs::path recipe_file = dir.path() / "proj" / "r.toml";
    fs::path home = dir.path() / "home" / "alice";
    image::ContainerfileOptions options() const {
        image::ContainerfileOptions o;
        o.output_dir = dir.path() / "ctx";
        o.no_device = true;
        o.bootstrap_binary = recipe_file;
        o.bootstrap_version = "9.9.9-test";
        return o;
    }
    Result<image::ContainerfileResult> write_context(const std::string& body) const {
        write(recipe_file, k_head + body);
        auto recipe = steps::load_recipe(recipe_file);
        REQUIRE(recipe);
        return image::write_build_context(*recipe, options());
    }
    /// Every file under the context (relative names).
    std::vector<std::string> context_files() const {
        std::vector<std::string> out;
        for (const auto& e : fs::recursive_directory_iterator(dir.path() / "ctx"))
            out.push_back(e.path().lexically_relative(dir.path() / "ctx").string());
        return out;
    }
};

bool holds(const std::vector<std::string>& names, std::string_view part) {
    return std::any_of(names.begin(), names.end(), [&](const auto& n) { return n.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("a [vars] value naming home is not copied when no step reads it, and refused when one reads it whole") {
    Context c;
    fill_home(c.home);
    ScopedEnv home("HOME", c.home.string());
    const std::string vars = "[vars]\nlogdir = \"{env.HOME}\"\n";  // logdir at line 8
    SECTION("no step reads it: nothing of it reaches the context") {
        auto written = c.write_context(vars + "[[step]]\nid = \"train\"\nkind = \"run\"\nargv = [\"true\"]\n");
        INFO((written ? "" : written.error().message));
        REQUIRE(written);
        CHECK(written->spec.sources.empty());
        const auto files = c.context_files();
        for (auto part : {"id_ed25519", ".netrc", ".pypirc", "credentials", "config.json", "keyring", "notes.txt"})
            CHECK_FALSE(holds(files, part));
    }
    SECTION("a step's argv names it") {
        auto r =
            c.write_context(vars + "[[step]]\nid = \"train\"\nkind = \"run\"\nargv = [\"ls\", \"{vars.logdir}\"]\n");
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("r.toml:8:10: [vars] logdir = \"" + c.home.string() +
                                     "\" is the home directory") != std::string::npos);
        CHECK(r.error().message.find("step 'train' reads whole (argv[1])") != std::string::npos);
        CHECK(r.error().detail.find("name the directory the step reads") != std::string::npos);
        CHECK_FALSE(fs::exists(c.dir.path() / "ctx"));
    }
    SECTION("a step runs in it") {
        auto r = c.write_context(vars +
                                 "[[step]]\nid = \"train\"\nkind = \"run\"\nargv = [\"true\"]\n"
                                 "cwd = \"{vars.logdir}\"\n");
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("r.toml:8:10: [vars] logdir") != std::string::npos);
        CHECK(r.error().message.find("(working directory)") != std::string::npos);
    }
    SECTION("an ancestor of home, named by a step directly") {
        auto r = c.write_context("[[step]]\nid = \"train\"\nkind = \"run\"\nargv = [\"ls\", \"" +
                                 c.home.parent_path().string() + "\"]\n");
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("r.toml:7:1: step 'train' argv[1]") != std::string::npos);
        CHECK(r.error().message.find("an ancestor of the home directory") != std::string::npos);
    }
    SECTION("what a step reads in it is carried alone, and a credential file there is refused") {
        write(c.home / "data" / "train.txt", "x\n");
        auto written = c.write_context(vars +
                                       "[[step]]\nid = \"train\"\nkind = \"run\"\n"
                                       "argv = [\"cat\", \"{vars.logdir}/data/train.txt\"]\n");
        INFO((written ? "" : written.error().message));
        REQUIRE(written);
        REQUIRE(written->spec.sources.size() == 1);
        CHECK(written->spec.sources[0].host_path == c.home / "data" / "train.txt");
        CHECK(written->spec.sources[0].image_path == (c.home / "data" / "train.txt").string());
        const auto files = c.context_files();
        CHECK(holds(files, "train.txt"));
        CHECK_FALSE(holds(files, "notes.txt"));
        fs::remove_all(c.dir.path() / "ctx");
        auto r = c.write_context(vars +
                                 "[[step]]\nid = \"train\"\nkind = \"run\"\n"
                                 "argv = [\"cat\", \"{vars.logdir}/.netrc\"]\n");
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("../home/alice/.netrc (.netrc; in step 'train' argv[1])") != std::string::npos);
    }
}

TEST_CASE("a system directory read whole is refused at the [vars] line, one inside it is the image's own") {
    Context c;
    SECTION("/etc") {
        auto r = c.write_context(
            "[vars]\nlogdir = \"/etc\"\n[[step]]\nid = \"save\"\nkind = \"run\"\n"
            "argv = [\"cp\", \"out.log\", \"{vars.logdir}\"]\n");
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("r.toml:8:10: [vars] logdir = \"/etc\" is a system directory (/etc), which step "
                                     "'save' reads whole (argv[2])") != std::string::npos);
        CHECK_FALSE(fs::exists(c.dir.path() / "ctx"));
    }
    SECTION("/ and /usr as a working directory") {
        for (std::string dir : {"/", "/usr"}) {
            auto r =
                c.write_context("[[step]]\nid = \"s\"\nkind = \"run\"\nargv = [\"true\"]\ncwd = \"" + dir + "\"\n");
            REQUIRE_FALSE(r);
            CHECK(r.error().message.find("step 's' working directory '" + dir + "' is") != std::string::npos);
            CHECK(r.error().message.find(dir == "/" ? "the root of the file system" : "a system directory (/usr)") !=
                  std::string::npos);
        }
    }
    SECTION("a program or a file in the system's trees is not carried") {
        auto written = c.write_context(
            "[vars]\nconf = \"/etc\"\n[[step]]\nid = \"s\"\nkind = \"run\"\n"
            "argv = [\"/bin/cat\", \"{vars.conf}/hostname\", \"/dev/null\"]\n");
        INFO((written ? "" : written.error().message));
        REQUIRE(written);
        CHECK(written->spec.sources.empty());
    }
}

TEST_CASE("credential files inside a directory a step reads are refused, each named with its rule") {
    Context c;
    const fs::path checkout = c.dir.path() / "proj" / "checkout";
    write(checkout / "train.py", "print()\n");
    write(checkout / ".netrc", "machine x\n");
    write(checkout / "keys" / ".ssh" / "id_rsa", "PRIVATE\n");
    write(checkout / "cfg" / ".aws" / "credentials", "k\n");
    auto r = c.write_context("[[step]]\nid = \"train\"\nkind = \"run\"\nargv = [\"true\"]\ncwd = \"checkout\"\n");
    REQUIRE_FALSE(r);
    const auto& m = r.error().message;
    CHECK(m.find("3 credential files would be copied into the build context") != std::string::npos);
    CHECK(m.find("checkout/.netrc (.netrc; in step 'train' working directory)") != std::string::npos);
    CHECK(m.find("checkout/keys/.ssh/id_rsa (an SSH private key (.ssh/id_*);") != std::string::npos);
    CHECK(m.find("checkout/cfg/.aws/credentials (.aws/credentials;") != std::string::npos);
    CHECK(r.error().detail.find("move them out") != std::string::npos);
    CHECK_FALSE(fs::exists(c.dir.path() / "ctx"));
    // Moved out, the checkout is carried.
    fs::remove(checkout / ".netrc");
    fs::remove_all(checkout / "keys");
    fs::remove_all(checkout / "cfg");
    auto written = c.write_context("[[step]]\nid = \"train\"\nkind = \"run\"\nargv = [\"true\"]\ncwd = \"checkout\"\n");
    INFO((written ? "" : written.error().message));
    REQUIRE(written);
    CHECK(slurp(c.dir.path() / "ctx" / written->spec.sources.at(0).context_path / "train.py") == "print()\n");
}

TEST_CASE("a [vars] checkout a step reads in is carried whole, one no step reads is not") {
    Context c;
    const fs::path megatron = c.dir.path() / "megatron";
    write(megatron / "pretrain.py", "import megatron.core\n");
    write(megatron / "megatron" / "core" / "__init__.py", "");
    const fs::path unused = c.dir.path() / "unused";
    write(unused / "big.bin", "x");
    auto written = c.write_context("[vars]\nmegatron = \"" + megatron.string() + "\"\nunused = \"" + unused.string() +
                                   "\"\n[[step]]\nid = \"prep\"\nkind = \"run\"\n"
                                   "argv = [\"python3\", \"{vars.megatron}/pretrain.py\"]\n");
    INFO((written ? "" : written.error().message));
    REQUIRE(written);
    REQUIRE(written->spec.sources.size() == 1);  // the script folded into its checkout
    CHECK(written->spec.sources[0].host_path == megatron);
    CHECK(fs::exists(c.dir.path() / "ctx" / written->spec.sources[0].context_path / "megatron/core/__init__.py"));
    // Named inside a shell's command line, or in a step's environment, it is read too.
    for (const std::string step : {"argv = [\"sh\", \"-c\", \"cd {vars.megatron} && python3 pretrain.py\"]\n",
                                   "argv = [\"python3\", \"-c\", \"import megatron\"]\n"
                                   "env = { PYTHONPATH = \"/x:{vars.megatron}\" }\n"}) {
        fs::remove_all(c.dir.path() / "ctx");
        written = c.write_context("[vars]\nmegatron = \"" + megatron.string() + "\"\n[[step]]\nid = \"prep\"\n" +
                                  "kind = \"run\"\n" + step);
        INFO(step + (written ? "" : written.error().message));
        REQUIRE(written);
        REQUIRE(written->spec.sources.size() == 1);
        CHECK(written->spec.sources[0].host_path == megatron);
    }
}
