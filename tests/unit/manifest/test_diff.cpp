#include <catch2/catch.hpp>

#include "fixture.hpp"
#include "manifest/diff.hpp"

using namespace bootstrap::manifest;
using bs_test::pkg;
using Kind = PackageChange::Kind;

namespace {

Manifest base() {
    Manifest m;
    m.python = {"3.11.7", "cpython", ".cpython-311-x86_64-linux-gnu.so", "cpython-311-x86_64-linux-gnu",
                "linux-x86_64"};
    m.host = bs_test::fake_host();
    for (auto p : {pkg("demo-core", "1.0.0"), pkg("foo", "1.0"), pkg("transformers", "4.57.1"), pkg("numpy", "2.0.0"),
                   pkg("same", "1.0"), pkg("weird", "x-1")})
        m.packages[p.name] = p;
    return m;
}

}  // namespace

TEST_CASE("diff classifies package changes") {
    Manifest before = base(), after = base();
    after.packages.erase("foo");
    after.packages["regex"] = pkg("regex", "2024.1.0");
    after.packages["demo-core"].version = "2.0.0";
    after.packages["numpy"].version = "1.26.4";
    after.packages["transformers"].record_sha256 = "other";
    after.packages["weird"].version = "x-2";  // not PEP 440: string order

    ManifestDiff d = diff(before, after);
    REQUIRE(d.packages.size() == 6);
    auto at = [&](size_t i) {
        return std::tie(d.packages[i].kind, d.packages[i].name, d.packages[i].from, d.packages[i].to);
    };
    using T = std::tuple<Kind, std::string, std::string, std::string>;
    CHECK(T(at(0)) == T{Kind::upgraded, "demo-core", "1.0.0", "2.0.0"});
    CHECK(T(at(1)) == T{Kind::removed, "foo", "1.0", ""});
    CHECK(T(at(2)) == T{Kind::downgraded, "numpy", "2.0.0", "1.26.4"});
    CHECK(T(at(3)) == T{Kind::added, "regex", "", "2024.1.0"});
    CHECK(T(at(4)) == T{Kind::reinstalled, "transformers", "4.57.1", "4.57.1"});
    CHECK(T(at(5)) == T{Kind::upgraded, "weird", "x-1", "x-2"});
    CHECK(d.facts.empty());
    CHECK(d.summary() == "1 added, 1 removed, 2 upgraded, 1 downgraded, 1 reinstalled");

    CHECK(format_diff(d) ==
          "^ demo-core 1.0.0 -> 2.0.0\n"
          "- foo 1.0\n"
          "v numpy 2.0.0 -> 1.26.4\n"
          "+ regex 2024.1.0\n"
          "~ transformers 4.57.1 (reinstalled: files differ)\n"
          "^ weird x-1 -> x-2\n");
}

TEST_CASE("PEP 440 ordering, not string ordering, decides upgrades") {
    Manifest before = base(), after = base();
    before.packages["foo"].version = "1.9";
    after.packages["foo"].version = "1.10";
    before.packages["numpy"].version = "2.0.0rc1";
    after.packages["numpy"].version = "2.0.0";
    ManifestDiff d = diff(before, after);
    REQUIRE(d.packages.size() == 2);
    CHECK(d.packages[0].kind == Kind::upgraded);
    CHECK(d.packages[1].kind == Kind::upgraded);
}

TEST_CASE("identical manifests have no difference") {
    ManifestDiff d = diff(base(), base());
    CHECK(d.empty());
    CHECK(d.summary() == "no change");
    CHECK(format_diff(d).empty());
    // Origin annotations alone are not a change of what is installed.
    Manifest after = base();
    after.packages["foo"].origin.step = "install";
    CHECK(diff(base(), after).empty());
}

TEST_CASE("diff reports interpreter, torch, host and build_env facts") {
    Manifest before = base(), after = base();
    after.python.version = "3.12.1";
    after.torch = Torch{"2.11.0", "13.0", ""};
    after.host.nvcc = "";
    before.build_env["MAX_JOBS"] = "4";
    after.build_env["MAX_JOBS"] = "8";
    after.build_env["TORCH_CUDA_ARCH_LIST"] = "9.0";

    ManifestDiff d = diff(before, after);
    CHECK(d.packages.empty());
    CHECK(d.summary() == "6 facts changed");
    CHECK(format_diff(d) ==
          "host.nvcc: 13.0 -> (none)\n"
          "python.version: 3.11.7 -> 3.12.1\n"
          "torch.cuda: (none) -> 13.0\n"
          "torch.version: (none) -> 2.11.0\n"
          "build_env.MAX_JOBS: 4 -> 8\n"
          "build_env.TORCH_CUDA_ARCH_LIST: (none) -> 9.0\n");
}

TEST_CASE("diff_json") {
    Manifest before = base(), after = base();
    after.packages["regex"] = pkg("regex", "2024.1.0");
    after.python.version = "3.12.1";
    std::string j = diff_json(diff(before, after));
    CHECK(j ==
          "{\n"
          "  \"facts\": [\n"
          "    {\n"
          "      \"field\": \"python.version\",\n"
          "      \"from\": \"3.11.7\",\n"
          "      \"to\": \"3.12.1\"\n"
          "    }\n"
          "  ],\n"
          "  \"packages\": [\n"
          "    {\n"
          "      \"from\": \"\",\n"
          "      \"kind\": \"added\",\n"
          "      \"name\": \"regex\",\n"
          "      \"to\": \"2024.1.0\"\n"
          "    }\n"
          "  ],\n"
          "  \"same\": false,\n"
          "  \"schema\": 1,\n"
          "  \"summary\": \"1 added, 1 fact changed\"\n"
          "}\n");
}

TEST_CASE("across venvs, the portable digest decides, within one, the exact one") {
    Manifest a = base(), b = base();
    a.venv = "/srv/a";
    b.venv = "/srv/b";
    // The same wheel in both: the console script's shebang (in RECORD) names each venv.
    a.packages["foo"].record_sha256 = "exact-a";
    b.packages["foo"].record_sha256 = "exact-b";
    for (auto* m : {&a, &b})
        for (auto& [name, p] : m->packages) p.record_sha256_portable = "portable-" + name;
    CHECK(diff(a, b).empty());

    // Within one venv the exact digest still counts.
    Manifest b_here = b;
    b_here.venv = a.venv;
    ManifestDiff here = diff(a, b_here);
    REQUIRE(here.packages.size() == 1);
    CHECK(here.packages[0].kind == Kind::reinstalled);
    CHECK(here.packages[0].name == "foo");

    // Different files besides the scripts differ across venvs too.
    Manifest changed = b;
    changed.packages["foo"].record_sha256_portable = "portable-other";
    ManifestDiff d = diff(a, changed);
    REQUIRE(d.packages.size() == 1);
    CHECK(d.packages[0].kind == Kind::reinstalled);

    // A manifest written before the portable digest existed falls back to the exact one.
    Manifest old = a;
    old.packages["foo"].record_sha256_portable.clear();
    ManifestDiff fallback = diff(old, b);
    REQUIRE(fallback.packages.size() == 1);
    CHECK(fallback.packages[0].name == "foo");
    CHECK(fallback.packages[0].kind == Kind::reinstalled);
}
