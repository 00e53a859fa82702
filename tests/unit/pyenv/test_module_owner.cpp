// Module -> distribution from the dist-infos (RECORD, then top_level.txt), and the version
// check of a `{ import = "x", version = "..." }` verify clause.
#include <catch2/catch.hpp>

#include <string>

#include "core/fs.hpp"
#include "pyenv/module_owner.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

void write_dist(const fs::path& site, const std::string& name, const std::string& version, const std::string& record,
                const std::string& top_level = "") {
    fs::path dir = site / (name + "-" + version + ".dist-info");
    REQUIRE(core::write_file_atomic(dir / "METADATA",
                                    "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n\n"));
    REQUIRE(core::write_file_atomic(dir / "RECORD", record));
    if (!top_level.empty()) REQUIRE(core::write_file_atomic(dir / "top_level.txt", top_level));
}

struct Site {
    core::TempDir dir{"bs-owner"};
    std::map<std::string, pyenv::Distribution> installed;
    Site() {
        const fs::path& site = dir.path();
        write_dist(site, "torch", "2.10.0",
                   "torch/__init__.py,sha256=a,1\ntorch/_C.cpython-311-x86_64-linux-gnu.so,sha256=b,2\n"
                   "functorch/__init__.py,sha256=c,3\ntorch-2.10.0.dist-info/RECORD,,\n");
        write_dist(site, "PyYAML", "6.0.1",
                   "yaml/__init__.py,sha256=a,1\n_yaml/__init__.py,sha256=b,2\n"
                   "PyYAML-6.0.1.dist-info/RECORD,,\n");
        write_dist(site, "six", "1.16.0", "six.py,sha256=a,1\n\"six-1.16.0.dist-info/RE,CORD\",,\n");
        write_dist(site, "tinyext", "0.1", "tinyext.cpython-311-x86_64-linux-gnu.so,sha256=a,1\n");
        write_dist(site, "torchvision", "0.25.0", "torchvision/__init__.py,sha256=a,1\n");
        // A namespace package two distributions share, each with its own subpackage.
        write_dist(site, "nvidia-cublas", "13.4.1.1", "nvidia/__init__.py,,\nnvidia/cublas/lib.so,,\n");
        write_dist(site, "nvidia-cudnn", "9.1.0", "nvidia/__init__.py,,\nnvidia/cudnn/lib.so,,\n");
        // An editable install: RECORD holds only a .pth; top_level.txt names the package.
        write_dist(site, "mylib", "0.3.0.dev1", "__editable__.mylib-0.3.0.pth,sha256=a,1\n", "mylib\n");
        auto scanned = pyenv::scan_site_packages(site);
        REQUIRE(scanned);
        installed = std::move(*scanned);
    }
    std::vector<std::string> owners(std::string_view module) const {
        std::vector<std::string> out;
        for (const auto* d : pyenv::distributions_providing(module, installed)) out.push_back(d->name);
        return out;
    }
    Result<pyenv::Distribution> check(std::string_view module, std::string_view spec) const {
        auto specifiers = pyenv::SpecifierSet::parse(spec);
        REQUIRE(specifiers);
        return pyenv::check_module_version(module, *specifiers, installed);
    }
};

}  // namespace

TEST_CASE("the distribution providing a module comes from RECORD, then top_level.txt") {
    Site site;
    using V = std::vector<std::string>;
    CHECK(site.owners("torch") == V{"torch"});
    CHECK(site.owners("torch.nn") == V{"torch"});  // no file of its own: its package's
    CHECK(site.owners("torch._C") == V{"torch"});
    CHECK(site.owners("functorch") == V{"torch"});
    CHECK(site.owners("yaml") == V{"PyYAML"});              // the module is not named after its distribution
    CHECK(site.owners("six") == V{"six"});                  // a single-file module
    CHECK(site.owners("tinyext") == V{"tinyext"});          // an extension module file
    CHECK(site.owners("torchvision") == V{"torchvision"});  // "torch" is not a prefix of it
    CHECK(site.owners("nvidia.cudnn") == V{"nvidia-cudnn"});
    CHECK(site.owners("nvidia") == V{"nvidia-cublas", "nvidia-cudnn"});
    CHECK(site.owners("mylib.sub") == V{"mylib"});
    CHECK(site.owners("json").empty());
}

TEST_CASE("a module's version is its distribution's, checked against the specifier") {
    Site site;
    auto ok = site.check("torch", ">=2.1,<3");
    REQUIRE(ok);
    CHECK(ok->name == "torch");
    CHECK(ok->version == "2.10.0");

    auto low = site.check("torch", ">=2.11");
    REQUIRE_FALSE(low);
    CHECK(low.error().code == ErrorCode::step_failed);
    CHECK(low.error().message == "torch 2.10.0 does not satisfy >=2.11 (distribution torch)");

    auto yaml = site.check("yaml", ">=7");
    REQUIRE_FALSE(yaml);
    CHECK(yaml.error().message == "yaml 6.0.1 does not satisfy >=7 (distribution PyYAML)");

    // What is installed counts, pre-release or not.
    CHECK(site.check("mylib", ">=0.2"));

    auto none = site.check("json", ">=1");
    REQUIRE_FALSE(none);
    CHECK(none.error().message ==
          "json: no installed distribution provides this module, so its version cannot be checked "
          "against >=1");

    auto several = site.check("nvidia", ">=1");
    REQUIRE_FALSE(several);
    CHECK(several.error().message ==
          "nvidia: provided by several distributions (nvidia-cublas 13.4.1.1, nvidia-cudnn 9.1.0); "
          "check the version of a module only one of them provides");
}
