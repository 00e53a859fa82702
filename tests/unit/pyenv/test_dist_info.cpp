#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "pyenv/dist_info.hpp"
#include "pyenv/interpreter.hpp"

namespace fs = std::filesystem;
using bootstrap::core::TempDir;
using bootstrap::pyenv::Distribution;
using bootstrap::pyenv::MarkerEnv;
using bootstrap::pyenv::Requirement;

namespace {

struct FakeDist {
    FakeDist(std::string n, std::string v, std::vector<std::string> reqs = {}, std::string inst = "uv\n",
             bool req = false)
        : name(std::move(n)),
          version(std::move(v)),
          requires_dist(std::move(reqs)),
          installer(std::move(inst)),
          requested(req) {}

    std::string name;
    std::string version;
    std::vector<std::string> requires_dist;
    std::string installer = "uv\n";
    bool requested = false;
    std::string record = "pkg/__init__.py,sha256=abc,10\n";
};

/// A `*.dist-info` the way an installer leaves it, with a long description after the headers
/// that mentions a Requires-Dist which must not be read.
fs::path write_dist(const fs::path& site, const FakeDist& d) {
    fs::path dir = site / (d.name + "-" + d.version + ".dist-info");
    std::string metadata =
        "Metadata-Version: 2.1\nName: " + d.name + "\nVersion: " + d.version + "\nSummary: a test package\n";
    for (const auto& r : d.requires_dist) metadata += "Requires-Dist: " + r + "\n";
    metadata += "\nLong description.\nRequires-Dist: not-a-header\n";
    REQUIRE(bootstrap::core::write_file_atomic(dir / "METADATA", metadata));
    REQUIRE(bootstrap::core::write_file_atomic(dir / "RECORD", d.record));
    if (!d.installer.empty()) REQUIRE(bootstrap::core::write_file_atomic(dir / "INSTALLER", d.installer));
    if (d.requested) REQUIRE(bootstrap::core::write_file_atomic(dir / "REQUESTED", ""));
    return dir;
}

std::map<std::string, Distribution> scan(const fs::path& site) {
    auto installed = bootstrap::pyenv::scan_site_packages(site);
    REQUIRE(installed.has_value());
    return *installed;
}

Requirement req(const std::string& text) {
    auto parsed = Requirement::parse(text);
    INFO(text);
    REQUIRE(parsed.has_value());
    return *parsed;
}

MarkerEnv linux_env() {
    return MarkerEnv{{"python_version", "3.12"},
                     {"python_full_version", "3.12.3"},
                     {"sys_platform", "linux"},
                     {"os_name", "posix"},
                     {"platform_machine", "x86_64"}};
}

}  // namespace

TEST_CASE("scan_site_packages reads names, versions and stamps") {
    TempDir tmp("bs-pyenv");
    fs::path site = tmp.path();
    fs::path torch_dir = write_dist(site, {"torch", "2.11.0+cu130", {}, "uv\n", true});
    write_dist(site, {"Foo_Bar", "1.0", {}, "  pip \n", false});
    write_dist(site, {"noinstaller", "0.1", {}, ""});
    // Not distributions: a bare directory, a dist-info without METADATA, a regular file.
    fs::create_directories(site / "torch");
    fs::create_directories(site / "broken-1.0.dist-info");
    REQUIRE(bootstrap::core::write_file_atomic(site / "broken-1.0.dist-info" / "RECORD", "x"));
    REQUIRE(bootstrap::core::write_file_atomic(site / "file-1.0.dist-info", "x"));

    auto installed = scan(site);
    REQUIRE(installed.size() == 3);
    REQUIRE(installed.count("torch"));
    REQUIRE(installed.count("foo-bar"));
    CHECK_FALSE(installed.count("broken"));

    const Distribution& torch = installed.at("torch");
    CHECK(torch.name == "torch");
    CHECK(torch.normalized_name == "torch");
    CHECK(torch.version == "2.11.0+cu130");
    CHECK(torch.dist_info() == torch_dir);
    CHECK(torch.installer == "uv");
    CHECK(torch.requested);

    struct stat st {};
    REQUIRE(::stat((torch_dir / "RECORD").c_str(), &st) == 0);
    CHECK(torch.record_stamp.size == static_cast<std::uint64_t>(st.st_size));
    CHECK(torch.record_stamp.inode == static_cast<std::uint64_t>(st.st_ino));
    CHECK(torch.record_stamp.mtime_ns ==
          static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);

    const Distribution& foo = installed.at("foo-bar");
    CHECK(foo.name == "Foo_Bar");
    CHECK(foo.installer == "pip");
    CHECK_FALSE(foo.requested);
    CHECK(installed.at("noinstaller").installer.empty());
}

TEST_CASE("scan_site_packages can read just the named distributions") {
    TempDir tmp("bs-pyenv");
    fs::path site = tmp.path();
    write_dist(site, {"torch", "2.11.0+cu130"});
    write_dist(site, {"Foo_Bar", "1.0"});
    write_dist(site, {"foo", "2.0"});
    auto only = bootstrap::pyenv::scan_site_packages(site, {"foo-bar", "absent"});
    REQUIRE(only);
    REQUIRE(only->size() == 1);
    CHECK(only->at("foo-bar").version == "1.0");
    CHECK(bootstrap::pyenv::scan_site_packages(site, {"torch"})->at("torch").version == "2.11.0+cu130");
}

TEST_CASE("scan_site_packages notices a rewritten RECORD") {
    TempDir tmp("bs-pyenv");
    fs::path dir = write_dist(tmp.path(), {"pkg", "1.0"});
    auto before = scan(tmp.path()).at("pkg").record_stamp;
    REQUIRE(bootstrap::core::write_file_atomic(dir / "RECORD", "a,b,c\nd,e,f\n"));
    auto after = scan(tmp.path()).at("pkg").record_stamp;
    CHECK_FALSE(before == after);
    CHECK(after == scan(tmp.path()).at("pkg").record_stamp);
}

TEST_CASE("scan_site_packages handles odd METADATA and duplicate dist-infos") {
    TempDir tmp("bs-pyenv");
    fs::path site = tmp.path();
    // CRLF line endings, lower-case header names, a header block bigger than one read.
    std::string metadata = "Metadata-Version: 2.1\r\n";
    for (int i = 0; i < 400; ++i) metadata += "Classifier: Programming Language :: Python\r\n";
    metadata += "name: crlf-pkg\r\nversion: 3.0\r\n\r\nbody\r\n";
    REQUIRE(bootstrap::core::write_file_atomic(site / "crlf_pkg-3.0.dist-info" / "METADATA", metadata));
    // No Name/Version headers: fall back to the directory name.
    REQUIRE(
        bootstrap::core::write_file_atomic(site / "nameless-2.5.dist-info" / "METADATA", "Metadata-Version: 2.1\n\n"));
    // An interrupted upgrade left two dist-infos: the newer one wins.
    write_dist(site, {"dup", "1.0"});
    write_dist(site, {"dup", "1.10"});

    auto installed = scan(site);
    REQUIRE(installed.count("crlf-pkg"));
    CHECK(installed.at("crlf-pkg").version == "3.0");
    REQUIRE(installed.count("nameless"));
    CHECK(installed.at("nameless").version == "2.5");
    CHECK(installed.at("dup").version == "1.10");
}

TEST_CASE("a hostile dist-info neither blocks nor exhausts a scan") {
    TempDir tmp("bs-pyenv");
    fs::path site = tmp.path();
    write_dist(site, {"good", "1.0"});
    // A METADATA that is a FIFO without a writer (opening it plainly waits forever), one that
    // is a symlink to /dev/zero (endless, no newline), and a RECORD that is one.
    fs::path fifo = site / "fifo_meta-1.0.dist-info";
    fs::create_directories(fifo);
    REQUIRE(::mkfifo((fifo / "METADATA").c_str(), 0644) == 0);
    fs::path zero = site / "zero_meta-2.0.dist-info";
    fs::create_directories(zero);
    fs::create_symlink("/dev/zero", zero / "METADATA");
    fs::path zero_record = write_dist(site, {"zero_record", "3.0"});
    fs::remove(zero_record / "RECORD");
    fs::create_symlink("/dev/zero", zero_record / "RECORD");
    fs::path fifo_installer = write_dist(site, {"fifo_installer", "4.0", {}, ""});
    REQUIRE(::mkfifo((fifo_installer / "INSTALLER").c_str(), 0644) == 0);
    fs::path only_record = site / "wandb-0.22.0.dist-info";
    fs::create_directories(only_record);
    REQUIRE(bootstrap::core::write_file_atomic(only_record / "RECORD", "wandb/__init__.py,,\n"));

    // By default the broken ones are left out, as before.
    auto installed = scan(site);
    CHECK(installed.size() == 2);
    CHECK(installed.count("good"));
    CHECK(installed.at("fifo-installer").installer.empty());

    auto all = bootstrap::pyenv::scan_site_packages(site, {}, /*include_broken=*/true);
    REQUIRE(all);
    REQUIRE(all->size() == 6);
    CHECK(all->at("good").broken.empty());
    CHECK(all->at("fifo-meta").broken == "METADATA is not a regular file (a FIFO)");
    CHECK(all->at("fifo-meta").version == "1.0");
    CHECK(all->at("zero-meta").broken == "METADATA is not a regular file (a character device)");
    CHECK(all->at("zero-record").broken == "RECORD is not a regular file (a character device)");
    CHECK(all->at("zero-record").version == "3.0");
    const Distribution& wandb = all->at("wandb");
    CHECK(wandb.broken == "METADATA missing");
    CHECK(wandb.name == "wandb");
    CHECK(wandb.version == "0.22.0");
    CHECK(wandb.dist_info() == only_record);
    CHECK_FALSE(wandb.record_stamp == bootstrap::core::FileStamp{});

    // The readers name the file and refuse it rather than read it.
    auto reqs = bootstrap::pyenv::read_requires_dist(all->at("zero-meta"));
    REQUIRE_FALSE(reqs);
    CHECK(reqs.error().message ==
          "cannot read " + (zero / "METADATA").string() + ": METADATA is not a regular file (a character device)");
    auto digest = bootstrap::pyenv::record_digests(all->at("zero-record"));
    REQUIRE_FALSE(digest);
    CHECK(digest.error().message ==
          "cannot read " + (zero_record / "RECORD").string() + ": not a regular file (a character device)");
}

TEST_CASE("a broken dist-info wins over a whole one of the same project") {
    TempDir tmp("bs-pyenv");
    write_dist(tmp.path(), {"dup", "1.0"});
    fs::create_directories(tmp.path() / "dup-1.1.dist-info");
    auto all = bootstrap::pyenv::scan_site_packages(tmp.path(), {}, true);
    REQUIRE(all);
    CHECK(all->at("dup").version == "1.1");
    CHECK(all->at("dup").broken == "METADATA missing");
    CHECK(scan(tmp.path()).at("dup").version == "1.0");
}

TEST_CASE("scan_venv_packages: purelib wins, unless only platlib's dist-info is broken") {
    TempDir tmp("bs-pyenv");
    bootstrap::pyenv::InterpreterFacts facts;
    facts.purelib = tmp.path() / "lib";
    facts.platlib = tmp.path() / "lib64";
    write_dist(facts.purelib, {"both", "1.0"});
    write_dist(facts.platlib, {"both", "2.0"});
    write_dist(facts.purelib, {"cut", "1.0"});
    fs::create_directories(facts.platlib / "cut-1.1.dist-info");  // an install cut short
    write_dist(facts.platlib, {"plat", "3.0"});

    auto whole = bootstrap::pyenv::scan_venv_packages(facts);
    REQUIRE(whole);
    CHECK(whole->at("both").version == "1.0");
    CHECK(whole->at("cut").version == "1.0");
    CHECK(whole->at("plat").version == "3.0");
    auto all = bootstrap::pyenv::scan_venv_packages(facts, {}, /*include_broken=*/true);
    REQUIRE(all);
    CHECK(all->at("both").version == "1.0");
    CHECK(all->at("cut").broken == "METADATA missing");
    CHECK(all->size() == 3);
}

TEST_CASE("METADATA and RECORD larger than 64 MiB are broken, not read") {
    TempDir tmp("bs-pyenv");
    fs::path dir = write_dist(tmp.path(), {"huge", "1.0"});
    // Sparse: the size is what is checked, no byte is read.
    REQUIRE(::truncate((dir / "RECORD").c_str(), (64 << 20) + 1) == 0);
    auto all = bootstrap::pyenv::scan_site_packages(tmp.path(), {}, true);
    REQUIRE(all);
    CHECK(all->at("huge").broken == "RECORD is larger than 64 MiB (64.0 MiB)");
    auto digest = bootstrap::pyenv::record_digest(all->at("huge"));
    REQUIRE_FALSE(digest);
    CHECK(digest.error().message.find("larger than 64 MiB") != std::string::npos);

    REQUIRE(::truncate((dir / "METADATA").c_str(), 65 << 20) == 0);
    all = bootstrap::pyenv::scan_site_packages(tmp.path(), {}, true);
    REQUIRE(all);
    CHECK(all->at("huge").broken == "METADATA is larger than 64 MiB (65 MiB)");
}

TEST_CASE("a 50 MB header line is read in linear time") {
    TempDir tmp("bs-pyenv");
    fs::path dir = tmp.path() / "long-1.0.dist-info";
    std::string metadata = "Metadata-Version: 2.1\nName: long\nSummary: ";
    metadata.append(50'000'000, 'a');
    metadata += "\nVersion: 1.5\nRequires-Dist: numpy>=1.0\n\nbody\n";
    REQUIRE(bootstrap::core::write_file_atomic(dir / "METADATA", metadata));
    const auto start = std::chrono::steady_clock::now();
    auto installed = scan(tmp.path());
    auto reqs = bootstrap::pyenv::read_requires_dist(installed.at("long"));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(installed.at("long").version == "1.5");
    REQUIRE(reqs);
    CHECK(reqs->size() == 1);
    // Linear: well under a second (the quadratic search took 10-70 s per read); the bound
    // leaves room for a loaded machine and the sanitizer build.
    CHECK(seconds < 8.0);
}

TEST_CASE("scan_site_packages reports a missing directory") {
    auto r = bootstrap::pyenv::scan_site_packages("/nonexistent/bs-site-packages");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == bootstrap::ErrorCode::not_found);
    CHECK(r.error().message.find("/nonexistent/bs-site-packages") != std::string::npos);
}

TEST_CASE("read_requires_dist parses the headers only") {
    TempDir tmp("bs-pyenv");
    write_dist(tmp.path(),
               {"transformers", "4.57.1", {"regex!=2019.12.17", "numpy>=1.17", "torch>=2.2; extra == \"torch\""}});
    auto installed = scan(tmp.path());
    auto reqs = bootstrap::pyenv::read_requires_dist(installed.at("transformers"));
    REQUIRE(reqs);
    REQUIRE(reqs->size() == 3);
    CHECK((*reqs)[0].str() == "regex!=2019.12.17");
    CHECK((*reqs)[1].str() == "numpy>=1.17");
    CHECK((*reqs)[2].str() == "torch>=2.2; extra == \"torch\"");

    // The scan kept them (the same header pass as name and version): parsed from memory.
    REQUIRE(installed.at("transformers").requires_dist.has_value());
    CHECK(installed.at("transformers").requires_dist->size() == 3);
    Distribution kept = installed.at("transformers");
    kept.dist_info_path = (tmp.path() / "missing.dist-info").native();
    CHECK(bootstrap::pyenv::read_requires_dist(kept));
    // A Distribution made another way reads METADATA.
    Distribution bad = kept;
    bad.requires_dist.reset();
    CHECK_FALSE(bootstrap::pyenv::read_requires_dist(bad));
}

TEST_CASE("read_requires_dist reports a bad line with the file") {
    TempDir tmp("bs-pyenv");
    write_dist(tmp.path(), {"broken", "1.0", {"numpy>="}});
    auto reqs = bootstrap::pyenv::read_requires_dist(scan(tmp.path()).at("broken"));
    REQUIRE_FALSE(reqs);
    CHECK(reqs.error().message.find("METADATA") != std::string::npos);
    CHECK(reqs.error().message.find("expected a version after '>='") != std::string::npos);
}

TEST_CASE("record_digest hashes RECORD") {
    TempDir tmp("bs-pyenv");
    FakeDist d{"pkg", "1.0"};
    d.record = "pkg/__init__.py,sha256=xyz,3\npkg-1.0.dist-info/RECORD,,\n";
    write_dist(tmp.path(), d);
    auto digest = bootstrap::pyenv::record_digest(scan(tmp.path()).at("pkg"));
    REQUIRE(digest);
    CHECK(*digest == bootstrap::core::sha256_hex(d.record));
}

TEST_CASE("is_satisfied checks the requirement and what it pulls in") {
    TempDir tmp("bs-pyenv");
    fs::path site = tmp.path();
    write_dist(site, {"numpy", "1.26.4"});
    write_dist(site, {"pandas", "2.2.0", {"numpy>=2; python_version >= '3.9'"}});
    write_dist(site,
               {"transformers", "4.57.1", {"numpy>=1.17", "regex!=2019.12.17", "tqdm>=4.27 ; extra == 'progress'"}});
    write_dist(site, {"scipy", "1.14.0", {"numpy<2.3,>=1.23.5", "pywin32 ; sys_platform == 'win32'"}});
    auto installed = scan(site);
    MarkerEnv env = linux_env();
    auto check = [&](const std::string& text, bool prereleases = false) {
        std::string why;
        bool ok = bootstrap::pyenv::is_satisfied(req(text), installed, env, prereleases, &why);
        return std::make_pair(ok, why);
    };

    CHECK(check("numpy>=1.20").first);
    CHECK(check("NumPy").first);
    CHECK(check("numpy==1.26.*").first);
    CHECK(check("scipy").first);  // pywin32 is only for Windows

    auto [numpy_ok, numpy_why] = check("numpy>=2");
    CHECK_FALSE(numpy_ok);
    CHECK(numpy_why == "numpy 1.26.4 does not satisfy numpy>=2");

    auto [missing_ok, missing_why] = check("matplotlib");
    CHECK_FALSE(missing_ok);
    CHECK(missing_why == "matplotlib is not installed");

    auto [pandas_ok, pandas_why] = check("pandas");
    CHECK_FALSE(pandas_ok);
    CHECK(pandas_why == "numpy 1.26.4 does not satisfy numpy>=2 (required by pandas 2.2.0)");

    auto [tf_ok, tf_why] = check("transformers>=4");
    CHECK_FALSE(tf_ok);
    CHECK(tf_why == "regex is not installed (required by transformers 4.57.1)");

    // A marker that is false for this interpreter needs nothing installed.
    CHECK(check("matplotlib ; sys_platform == 'darwin'").first);
    CHECK_FALSE(check("matplotlib ; sys_platform == 'linux'").first);
    env["python_version"] = "3.8";  // pandas' numpy>=2 no longer applies
    CHECK(check("pandas").first);
    env = linux_env();
    env["sys_platform"] = "win32";
    auto [win_ok, win_why] = check("scipy");
    CHECK_FALSE(win_ok);
    CHECK(win_why == "pywin32 is not installed (required by scipy 1.14.0)");

    // why_not may be null.
    CHECK_FALSE(bootstrap::pyenv::is_satisfied(req("numpy>=2"), installed, env, false, nullptr));
}

TEST_CASE("is_satisfied follows extras, normalised") {
    TempDir tmp("bs-pyenv");
    fs::path site = tmp.path();
    write_dist(site, {"accelerate",
                      "1.0.0",
                      {"numpy>=1.17", "deepspeed ; extra == 'Deep_Speed'",
                       "rich ; extra == 'rich' and python_version >= '3.8'"}});
    write_dist(site, {"numpy", "2.1.0"});
    write_dist(site, {"rich", "13.0.0", {"pygments>=2 ; extra == 'rich'"}});
    auto installed = scan(site);
    MarkerEnv env = linux_env();
    std::string why;
    CHECK(bootstrap::pyenv::is_satisfied(req("accelerate"), installed, env, false, &why));
    CHECK(bootstrap::pyenv::is_satisfied(req("accelerate[rich]"), installed, env, false, &why));
    // rich's own extra is not requested by accelerate[rich], so pygments is not needed.
    CHECK_FALSE(bootstrap::pyenv::is_satisfied(req("accelerate[deep-speed]"), installed, env, false, &why));
    CHECK(why == "deepspeed is not installed (required by accelerate 1.0.0)");
    CHECK_FALSE(bootstrap::pyenv::is_satisfied(req("rich[RICH]"), installed, env, false, &why));
    CHECK(why == "pygments is not installed (required by rich 13.0.0)");
    // The caller's env must not leak an extra into the walk, nor be changed by it.
    env["extra"] = "";
    CHECK(bootstrap::pyenv::is_satisfied(req("accelerate"), installed, env, false, &why));
    CHECK(env.at("extra").empty());
}

TEST_CASE("is_satisfied stops at dependency cycles") {
    TempDir tmp("bs-pyenv");
    fs::path site = tmp.path();
    write_dist(site, {"alpha", "1.0", {"beta>=1", "alpha[x] ; extra == 'y'"}});
    write_dist(site, {"beta", "1.0", {"gamma"}});
    write_dist(site, {"gamma", "1.0", {"alpha[y]"}});
    auto installed = scan(site);
    MarkerEnv env = linux_env();
    std::string why;
    CHECK(bootstrap::pyenv::is_satisfied(req("alpha"), installed, env, false, &why));
    CHECK(bootstrap::pyenv::is_satisfied(req("gamma"), installed, env, false, &why));

    write_dist(site, {"gamma", "1.0", {"alpha[y]", "delta"}});
    installed = scan(site);
    CHECK_FALSE(bootstrap::pyenv::is_satisfied(req("alpha"), installed, env, false, &why));
    CHECK(why == "delta is not installed (required by gamma 1.0)");
}

TEST_CASE("is_satisfied: local versions, pre-releases, URLs") {
    TempDir tmp("bs-pyenv");
    fs::path site = tmp.path();
    write_dist(site, {"torch", "2.11.0+cu130"});
    write_dist(site, {"nightly", "2.12.0.dev20250101+cu130"});
    write_dist(site, {"user", "1.0", {"nightly>=2.0"}});
    write_dist(site, {"weird", "not-a-version"});
    write_dist(site, {"bad-deps", "1.0", {"numpy>="}});
    auto installed = scan(site);
    MarkerEnv env = linux_env();
    auto ok = [&](const std::string& text, bool prereleases = false) {
        return bootstrap::pyenv::is_satisfied(req(text), installed, env, prereleases, nullptr);
    };
    std::string why;

    CHECK(ok("torch==2.11.0"));  // the candidate's local label is ignored
    CHECK(ok("torch==2.11.0+cu130"));
    CHECK_FALSE(ok("torch==2.11.0+cu128"));
    CHECK(ok("torch>=2.10,<2.12"));

    CHECK(ok("nightly"));  // a bare name takes whatever is installed
    CHECK(ok("nightly>=2.0", true));
    CHECK(ok("nightly>=2.12.0.dev0"));  // names a pre-release
    CHECK_FALSE(bootstrap::pyenv::is_satisfied(req("nightly>=2.0"), installed, env, false, &why));
    CHECK(why ==
          "nightly 2.12.0.dev20250101+cu130 does not satisfy nightly>=2.0 (it is a "
          "pre-release, and pre-releases are not allowed)");
    CHECK(ok("user"));  // a dependency's installed pre-release is accepted

    CHECK(ok("weird"));
    CHECK_FALSE(bootstrap::pyenv::is_satisfied(req("weird>=1"), installed, env, false, &why));
    CHECK(why ==
          "weird not-a-version has a version that is not PEP 440, so it cannot satisfy "
          "weird>=1");

    CHECK_FALSE(
        bootstrap::pyenv::is_satisfied(req("torch @ https://example.org/torch.whl"), installed, env, false, &why));
    CHECK(why ==
          "torch @ https://example.org/torch.whl is a direct URL requirement, which "
          "cannot be checked against the installed torch 2.11.0+cu130");
    CHECK_FALSE(bootstrap::pyenv::is_satisfied(req("absent @ https://example.org/a.whl"), installed, env, false, &why));
    CHECK(why == "absent is not installed");

    CHECK_FALSE(bootstrap::pyenv::is_satisfied(req("bad-deps"), installed, env, false, &why));
    CHECK(why.find("bad Requires-Dist") != std::string::npos);
}

TEST_CASE("is_satisfied accepts a pin the recipe overrides on purpose") {
    TempDir tmp("bs-pyenv");
    fs::path site = tmp.path();
    write_dist(site, {"torch", "2.11.0+cu130", {"nvidia-cublas==13.1.0.3"}});
    write_dist(site, {"nvidia-cublas", "13.4.1.1"});
    auto installed = scan(site);
    MarkerEnv env = linux_env();
    std::string why;
    CHECK_FALSE(bootstrap::pyenv::is_satisfied(req("torch==2.11.0+cu130"), installed, env, false, &why));
    CHECK(why ==
          "nvidia-cublas 13.4.1.1 does not satisfy nvidia-cublas==13.1.0.3 (required by torch "
          "2.11.0+cu130)");
    std::set<std::pair<std::string, std::string>> allowed{{"torch", "nvidia-cublas"}};
    CHECK(bootstrap::pyenv::is_satisfied(req("torch==2.11.0+cu130"), installed, env, false, &why, allowed));
    // The override is about the version only: the dependency must still be there.
    fs::remove_all(site / "nvidia-cublas-13.4.1.1.dist-info");
    CHECK_FALSE(bootstrap::pyenv::is_satisfied(req("torch==2.11.0+cu130"), scan(site), env, false, &why, allowed));
}

TEST_CASE("record digests leave out uv's uv_cache.json row only") {
    const std::string base = "foo-1.0.dist-info/RECORD,,\nfoo/__init__.py,sha256=abc,6\n";
    const std::string with_stamp =
        "foo-1.0.dist-info/RECORD,,\nfoo-1.0.dist-info/uv_cache.json,sha256=zz,15\nfoo/__init__.py,sha256=abc,6\n";
    CHECK(bootstrap::pyenv::record_text_digest(base) == bootstrap::core::sha256_hex(base));
    CHECK(bootstrap::pyenv::record_text_digest(with_stamp) == bootstrap::pyenv::record_text_digest(base));
    // A package's own file that happens to be called uv_cache.json still counts.
    const std::string own = base + "foo/uv_cache.json,sha256=yy,3\n";
    CHECK(bootstrap::pyenv::record_text_digest(own) != bootstrap::pyenv::record_text_digest(base));
}

TEST_CASE("portable record digests also leave out the venv's scripts, and nothing else") {
    const std::string files = "foo-1.0.dist-info/RECORD,,\nfoo/__init__.py,sha256=abc,6\n";
    // The same wheel in two venvs: only the console script (its shebang) differs.
    const std::string in_a = "../../../bin/foo,sha256=AAA,211\n" + files;
    const std::string in_b = "../../../bin/foo,sha256=BBB,215\n" + files;
    using bootstrap::pyenv::portable_record_text_digest;
    using bootstrap::pyenv::record_text_digest;
    CHECK(record_text_digest(in_a) != record_text_digest(in_b));  // the exact digest is unchanged
    CHECK(record_text_digest(in_a) == bootstrap::core::sha256_hex(in_a));
    CHECK(portable_record_text_digest(in_a) == portable_record_text_digest(in_b));
    CHECK(portable_record_text_digest(in_a) == bootstrap::core::sha256_hex(files));
    // uv's bookkeeping row goes too, as in the exact digest.
    CHECK(portable_record_text_digest("foo-1.0.dist-info/uv_cache.json,sha256=zz,15\n" + in_a) ==
          portable_record_text_digest(in_a));
    // Other files outside site-packages, a package's own bin/ directory and a different file
    // still count.
    for (const std::string other : {"../../../share/foo/data.txt,sha256=x,1\n", "foo/bin/tool,sha256=x,1\n",
                                    "../../../bin/sub/tool,sha256=x,1\n", "foo/extra.py,sha256=x,1\n"})
        CHECK(portable_record_text_digest(in_a + other) != portable_record_text_digest(in_a));
    const std::string edited = "../../../bin/foo,sha256=AAA,211\nfoo/__init__.py,sha256=abd,6\n";
    CHECK(portable_record_text_digest(edited) != portable_record_text_digest(in_a));
}

TEST_CASE("record_digests reads RECORD once for both digests") {
    TempDir tmp("bs-pyenv");
    FakeDist d{"pkg", "1.0"};
    d.record = "../../../bin/pkg,sha256=s,9\npkg/__init__.py,sha256=xyz,3\n";
    write_dist(tmp.path(), d);
    auto dist = scan(tmp.path()).at("pkg");
    auto both = bootstrap::pyenv::record_digests(dist);
    REQUIRE(both);
    CHECK(both->exact == *bootstrap::pyenv::record_digest(dist));
    CHECK(both->portable == bootstrap::core::sha256_hex("pkg/__init__.py,sha256=xyz,3\n"));
}
