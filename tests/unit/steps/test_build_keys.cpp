// Build-cache keys from content: a git source is keyed by its commit (and whether submodules are
// in), never by the URL or clone path it was fetched from; entries of the scheme before
// (bootstrap-build-v1, whose git keys held the URL) are found and re-keyed, not rebuilt.
#include <catch2/catch.hpp>

#include <fstream>

#include "core/fs.hpp"
#include "core/key.hpp"
#include "core/sha256.hpp"
#include "steps/build_cache.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

const std::string k_rev = "0123456789abcdef0123456789abcdef01234567";

steps::BuildInputs apex_from(const std::string& url, const std::string& rev = k_rev) {
    steps::BuildInputs in;
    in.source = "git " + rev;
    in.source_from = url;
    in.python = "cpython 3.12.3";
    in.ext_suffix = ".cpython-312-x86_64-linux-gnu.so";
    in.platform = "linux-x86_64 glibc 2.36";
    in.torch = "2.11.0+cu130 cuda 13.0 cxx11_abi 1";
    in.abi_packages = {"torch 2.11.0+cu130"};
    in.nvcc = "13.0";
    in.compiler = "c++ (Debian 12.2.0-14) 12.2.0";
    in.libstdcxx = "GLIBCXX_3.4.30";
    in.arch_list = "9.0";
    in.env = {"APEX_CPP_EXT=1", "TORCH_CUDA_ARCH_LIST=9.0"};
    in.frontend = "uv build";
    in.no_build_isolation = true;
    return in;
}

/// The bootstrap-build-v1 key exactly as bootstrap computed it before the scheme moved on.
std::string old_v1_digest(const steps::BuildInputs& in, const std::string& url) {
    core::KeyBuilder key("bootstrap-build-v1");
    key.add("source", "git " + url + "@" + in.source.substr(4));
    key.add("subdirectory", in.subdirectory);
    key.add("python", in.python);
    key.add("ext_suffix", in.ext_suffix);
    key.add("platform", in.platform);
    key.add("torch", in.torch);
    key.add("abi_packages", in.abi_packages);
    key.add("nvcc", in.nvcc);
    key.add("compiler", in.compiler);
    key.add("libstdc++", in.libstdcxx);
    key.add("arch_list", in.arch_list);
    key.add("env", in.env);
    key.add("frontend", in.frontend);
    key.add("no_build_isolation", in.no_build_isolation ? "true" : "false");
    key.add("config_settings", in.config_settings);
    return key.digest();
}

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

/// A v1 entry as an older bootstrap published it, built from `url`.
std::string publish_v1(const steps::BuildCache& cache, const steps::BuildInputs& in, const std::string& url) {
    const auto v1 = steps::make_build_key_v1(in, "git " + url + "@" + in.source.substr(4));
    auto staging = cache.staging(v1.digest);
    REQUIRE(staging);
    write(*staging / "apex-0.1-cp312-cp312-linux_x86_64.whl", "apex wheel");
    write(*staging / "build.log", "built\n");
    auto entry = cache.publish(v1.digest, *staging, v1.explain, 2700);
    REQUIRE(entry);
    return v1.digest;
}

}  // namespace

TEST_CASE("build keys: the same commit from two clone paths or a mirror is one key") {
    const auto a = steps::make_build_key(apex_from("/home/alice/src/apex"));
    const auto b = steps::make_build_key(apex_from("/scratch/bob/apex-clone"));
    const auto c = steps::make_build_key(apex_from("https://mirror.example/NVIDIA/apex.git"));
    CHECK(a.digest == b.digest);
    CHECK(a.digest == c.digest);
    CHECK(a.explain.rfind("scheme: bootstrap-build-v2\nsource: git " + k_rev +
                              "\n# source from: /home/alice/src/apex (not part of the key)\n",
                          0) == 0);
    CHECK(b.explain.find("# source from: /scratch/bob/apex-clone (not part of the key)") != std::string::npos);
    CHECK(a.explain.find("/scratch") == std::string::npos);
}

TEST_CASE("build keys: another commit, or submodules, is another key") {
    const auto base = steps::make_build_key(apex_from("/src/apex"));
    CHECK(steps::make_build_key(apex_from("/src/apex", std::string(40, 'f'))).digest != base.digest);
    auto with_submodules = apex_from("/src/apex");
    with_submodules.source += " +submodules";
    CHECK(steps::make_build_key(with_submodules).digest != base.digest);
}

TEST_CASE("build keys: a v1 source maps to the content it names") {
    CHECK(steps::content_source("git /src/apex@" + k_rev) == "git " + k_rev);
    CHECK(steps::content_source("git https://***@host/apex.git@" + k_rev + " +submodules") ==
          "git " + k_rev + " +submodules");
    CHECK(steps::content_source("sha256 " + std::string(64, 'a')) == "sha256 " + std::string(64, 'a'));
    CHECK(steps::content_source("tree abc") == "tree abc");
}

TEST_CASE("build keys: v1 keys are computed as the scheme before did") {
    const auto in = apex_from("/src/apex");
    const auto v1 = steps::make_build_key_v1(in, "git /src/apex@" + k_rev);
    CHECK(v1.digest == old_v1_digest(in, "/src/apex"));
    CHECK(v1.digest != steps::make_build_key(in).digest);
    CHECK(v1.explain.rfind("scheme: bootstrap-build-v1\nsource: git /src/apex@" + k_rev + "\n", 0) == 0);
    CHECK(v1.explain.find("# source from") == std::string::npos);
}

TEST_CASE("build keys: a v1 entry of the same commit from another path is re-keyed, not rebuilt") {
    core::TempDir home("bs-build-keys");
    steps::BuildCache cache(home.path() / "builds");
    const auto old_key = publish_v1(cache, apex_from("/old/clone/apex"), "/old/clone/apex");

    const auto key = steps::make_build_key(apex_from("/new/clone/apex"));
    CHECK_FALSE(cache.find(key.digest));
    CHECK(cache.find_v1(key.inputs) == old_key);
    CHECK_FALSE(cache.find_v1(apex_from("/new/clone/apex", std::string(40, 'f'))));  // another commit
    auto other_torch = apex_from("/old/clone/apex");
    other_torch.torch = "2.10.0+cu130 cuda 13.0 cxx11_abi 1";
    CHECK_FALSE(cache.find_v1(other_torch));  // every other input still counts

    std::optional<core::EntryTrust> passed;
    auto no_keys = []() -> Result<const core::TrustedKeys*> { return fail(ErrorCode::io, "not asked"); };
    auto adopted = cache.adopt_v1(key, home.path() / "checked", no_keys, &passed, true, nullptr);
    REQUIRE(adopted);
    REQUIRE(*adopted);
    CHECK_FALSE(passed);
    CHECK((*adopted)->dir == home.path() / "builds" / key.digest);
    CHECK((*adopted)->rekeyed_from == "bootstrap-build-v1 " + old_key);
    CHECK((*adopted)->build_seconds == Approx(2700));
    CHECK(core::read_file((*adopted)->dir / "inputs.txt").value() == key.explain);
    CHECK(core::read_file((*adopted)->dir / "build.log").value() == "built\n");
    CHECK(core::read_file((*adopted)->dir / "entry.txt").value().find("rekeyed_from = bootstrap-build-v1 " + old_key) !=
          std::string::npos);
    auto found = cache.find(key.digest);  // a plain v2 hit from now on
    REQUIRE(found);
    CHECK(found->sha256 == core::sha256_hex("apex wheel"));
    CHECK(cache.find(old_key));  // the v1 entry is kept
}

TEST_CASE("build keys: a v1 entry whose inputs.txt names the commit but not its key is not adopted") {
    core::TempDir home("bs-build-keys");
    steps::BuildCache cache(home.path() / "builds");
    const auto in = apex_from("/elsewhere/apex");
    // Its directory name is not the v1 key of our inputs from the URL it names.
    const fs::path fake = home.path() / "builds" / std::string(64, 'e');
    write(fake / "inputs.txt", steps::make_build_key_v1(in, "git /elsewhere/apex@" + k_rev).explain);
    write(fake / "apex-0.1-cp312-cp312-linux_x86_64.whl", "not apex");
    write(fake / "entry.txt",
          "wheel = apex-0.1-cp312-cp312-linux_x86_64.whl\nsha256 = " + core::sha256_hex("not apex") + "\n");
    CHECK_FALSE(cache.find_v1(steps::make_build_key(in).inputs));
}

TEST_CASE("build keys: an archive's v1 entry is found by its key directly") {
    core::TempDir home("bs-build-keys");
    steps::BuildCache cache(home.path() / "builds");
    auto in = apex_from("https://x/apex-0.1.tar.gz");
    in.source = "sha256 " + std::string(64, 'a');
    const auto v1 = steps::make_build_key_v1(in, in.source);
    auto staging = cache.staging(v1.digest);
    REQUIRE(staging);
    write(*staging / "apex-0.1-cp312-cp312-linux_x86_64.whl", "apex wheel");
    REQUIRE(cache.publish(v1.digest, *staging, v1.explain, 1));
    CHECK(cache.find_v1(in) == v1.digest);
}

// An install step's sdist (steps/source_build.hpp): keyed by the sdist's sha256, never its URL;
// a pure wheel's key leaves out torch, the compiler and nvcc, so a torch bump keeps it.
TEST_CASE("an sdist's pure key ignores the toolchain, its compiled key does not", "[build][sdist]") {
    steps::BuildInputs in = apex_from("https://files.example/x-1.0.tar.gz");
    in.source = "sha256 " + std::string(64, 'a');
    in.build_requires = {"setuptools==80.9.0"};
    in.no_build_isolation = false;
    const auto pure = steps::make_source_build_key(in, true);
    const auto full = steps::make_source_build_key(in, false);
    CHECK(pure.digest != full.digest);
    CHECK(pure.explain.find("# source from: https://files.example/x-1.0.tar.gz (not part of the key)") !=
          std::string::npos);

    steps::BuildInputs bumped = in;
    bumped.torch = "2.12.0+cu130 cuda 13.0 cxx11_abi 1";
    bumped.compiler = "c++ (Debian 13.1.0) 13.1.0";
    bumped.nvcc = "13.1";
    bumped.source_from = "https://mirror.example/x-1.0.tar.gz";
    CHECK(steps::make_source_build_key(bumped, true).digest == pure.digest);
    CHECK(steps::make_source_build_key(bumped, false).digest != full.digest);

    steps::BuildInputs other_setuptools = in;
    other_setuptools.build_requires = {"setuptools==81.0.0"};
    CHECK(steps::make_source_build_key(other_setuptools, true).digest != pure.digest);
    steps::BuildInputs other_sdist = in;
    other_sdist.source = "sha256 " + std::string(64, 'b');
    CHECK(steps::make_source_build_key(other_sdist, true).digest != pure.digest);
    // Neither scheme is a build step's: the same inputs never share an entry with one.
    CHECK(steps::make_build_key(in).digest != full.digest);
}
