#include <catch2/catch.hpp>

#include <fstream>

#include "core/fs.hpp"
#include "doctor/checks.hpp"
#include "pyenv/record.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

/// A venv holding demo 1.0: demo.py and its dist-info, RECORD with the file's real hash; with
/// `.bootstrap/` (a venv bootstrap made) when `ours`.
fs::path demo_venv(const fs::path& root, bool ours) {
    const fs::path venv = root / "venv";
    const fs::path site = venv / "lib" / "python3.11" / "site-packages";
    fs::create_directories(site / "demo-1.0.dist-info");
    std::ofstream(venv / "pyvenv.cfg") << "home = /usr/bin\n";
    if (ours) fs::create_directories(venv / ".bootstrap");
    const std::string code = "ANSWER = 42\n";
    std::ofstream(site / "demo.py") << code;
    std::ofstream(site / "demo-1.0.dist-info" / "METADATA") << "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\n";
    std::ofstream(site / "demo-1.0.dist-info" / "RECORD")
        << "demo.py," << pyenv::record_hash(code) << "," << code.size() << "\n"
        << "demo-1.0.dist-info/METADATA,,\ndemo-1.0.dist-info/RECORD,,\n";
    return venv;
}

}  // namespace

TEST_CASE("installed files are checked against their RECORD, matches remembered by stat") {
    core::TempDir tmp("bs-files");
    const fs::path venv = demo_venv(tmp.path(), true);
    doctor::DoctorOptions options;
    options.venv = venv;
    doctor::CheckSummary summary;
    CHECK(doctor::check_installed_files(options, &summary).empty());
    CHECK(summary.line == "files: 1 installed file of 1 distribution match their RECORD hashes");
    CHECK(fs::exists(venv / ".bootstrap" / "verified-files.cache"));

    const fs::path file = venv / "lib" / "python3.11" / "site-packages" / "demo.py";
    std::ofstream(file) << "ANSWER = 41\n";  // same size, other bytes: the stat changed, so hashed again
    auto found = doctor::check_installed_files(options, &summary);
    REQUIRE(found.size() == 1);
    CHECK(found[0].rule == "installed-files");
    CHECK(found[0].message == "demo 1.0: 1 of its installed files differs from its RECORD");
    CHECK(found[0].evidence.front() == "demo.py (content differs)");
    CHECK(found[0].fix.find("--reinstall demo==1.0") != std::string::npos);

    fs::remove(file);
    found = doctor::check_installed_files(options, &summary);
    REQUIRE(found.size() == 1);
    CHECK(found[0].evidence.front() == "demo.py (missing)");
}

TEST_CASE("launch leaves the files check to doctor, and a foreign venv gets no cache") {
    core::TempDir tmp("bs-files");
    const fs::path venv = demo_venv(tmp.path(), false);
    std::ofstream(venv / "lib" / "python3.11" / "site-packages" / "demo.py") << "edited\n";
    doctor::DoctorOptions options;
    options.venv = venv;
    options.check_files = false;
    doctor::CheckSummary summary;
    CHECK(doctor::check_installed_files(options, &summary).empty());
    CHECK(summary.line.find("files: not checked here") == 0);
    options.check_files = true;
    CHECK(doctor::check_installed_files(options, &summary).size() == 1);
    CHECK_FALSE(fs::exists(venv / ".bootstrap"));  // not bootstrap's venv: nothing written into it
}
