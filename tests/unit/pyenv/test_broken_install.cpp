#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "core/fs.hpp"
#include "pyenv/broken_install.hpp"

namespace fs = std::filesystem;
using bootstrap::core::TempDir;
using bootstrap::core::write_file_atomic;

namespace {

bootstrap::pyenv::InterpreterFacts facts_for(const fs::path& venv) {
    bootstrap::pyenv::InterpreterFacts f;
    f.purelib = venv / "lib" / "python3.11" / "site-packages";
    f.platlib = f.purelib;
    return f;
}

}  // namespace

TEST_CASE("a broken install is removed with its RECORD's files, inside site-packages only") {
    TempDir tmp("bs-broken");
    const fs::path venv = tmp.path() / "venv";
    const auto facts = facts_for(venv);
    const fs::path site = facts.purelib;
    const fs::path outside = tmp.path() / "outside";
    REQUIRE(write_file_atomic(outside / "f.txt", "keep"));
    REQUIRE(write_file_atomic(venv / "bin" / "wandb", "#!python\n"));
    REQUIRE(write_file_atomic(venv / "lib" / "python3.11" / "outside.txt", "keep"));
    REQUIRE(write_file_atomic(site / "wandb" / "__init__.py", "x"));
    REQUIRE(write_file_atomic(site / "wandb" / "__pycache__" / "__init__.cpython-311.pyc", "x"));
    REQUIRE(write_file_atomic(site / "wandb" / "sdk" / "run.py", "x"));
    REQUIRE(write_file_atomic(site / "wandb" / "sdk" / "own.txt", "not in RECORD"));
    fs::create_directory_symlink(outside, site / "evil");
    // A whole package next to it.
    REQUIRE(write_file_atomic(site / "other" / "__init__.py", "x"));
    REQUIRE(write_file_atomic(site / "other-1.0.dist-info" / "METADATA",
                              "Metadata-Version: 2.1\nName: other\nVersion: 1.0\n\n"));
    REQUIRE(write_file_atomic(site / "other-1.0.dist-info" / "RECORD", "other/__init__.py,,\n"));
    // The install that ran out of disk: RECORD only.
    REQUIRE(write_file_atomic(site / "wandb-0.22.0.dist-info" / "RECORD",
                              "wandb/__init__.py,sha256=a,1\n"
                              "\"wandb/sdk/run.py\",sha256=b,1\r\n"
                              "../../../bin/wandb,sha256=c,1\n"
                              "../outside.txt,,\n"
                              "/etc/hostname,,\n"
                              "evil/f.txt,,\n"
                              "other/../../outside.txt,,\n"
                              "wandb-0.22.0.dist-info/RECORD,,\n"));

    auto broken = bootstrap::pyenv::find_broken_installs(facts);
    REQUIRE(broken);
    REQUIRE(broken->size() == 1);
    CHECK(broken->front().normalized_name == "wandb");

    auto notes = bootstrap::pyenv::remove_broken_installs(facts);
    REQUIRE(notes);
    REQUIRE(notes->size() == 1);
    CHECK(notes->front() ==
          "removed the broken install of wandb 0.22.0 (METADATA missing): its dist-info "
          "wandb-0.22.0.dist-info and the 2 file(s) its RECORD lists (5 outside site-packages "
          "left alone)");
    CHECK_FALSE(fs::exists(site / "wandb-0.22.0.dist-info"));
    CHECK_FALSE(fs::exists(site / "wandb" / "__init__.py"));
    CHECK_FALSE(fs::exists(site / "wandb" / "__pycache__"));  // bytecode of a removed .py
    CHECK_FALSE(fs::exists(site / "wandb" / "sdk" / "run.py"));
    CHECK(fs::exists(site / "wandb" / "sdk" / "own.txt"));  // not the package's: kept (and its dir)
    CHECK(fs::exists(venv / "bin" / "wandb"));
    CHECK(fs::exists(venv / "lib" / "python3.11" / "outside.txt"));
    CHECK(fs::exists(outside / "f.txt"));  // behind a symlink out of site-packages
    CHECK(fs::exists(site / "other" / "__init__.py"));
    CHECK(fs::exists(site / "other-1.0.dist-info" / "METADATA"));
    CHECK(fs::exists("/etc/hostname"));

    // Nothing broken left: nothing to do.
    auto again = bootstrap::pyenv::remove_broken_installs(facts);
    REQUIRE(again);
    CHECK(again->empty());
}

TEST_CASE("a broken install whose RECORD is not a regular file loses its dist-info only") {
    TempDir tmp("bs-broken");
    const auto facts = facts_for(tmp.path() / "venv");
    const fs::path site = facts.purelib;
    REQUIRE(write_file_atomic(site / "pkg" / "__init__.py", "x"));
    fs::create_directories(site / "pkg-1.0.dist-info");
    REQUIRE(write_file_atomic(site / "pkg-1.0.dist-info" / "METADATA",
                              "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n\n"));
    fs::create_symlink("/dev/zero", site / "pkg-1.0.dist-info" / "RECORD");
    auto notes = bootstrap::pyenv::remove_broken_installs(facts);
    REQUIRE(notes);
    REQUIRE(notes->size() == 1);
    CHECK(notes->front().find("(RECORD is not a regular file (a character device))") != std::string::npos);
    CHECK(notes->front().find("the 0 file(s)") != std::string::npos);
    CHECK_FALSE(fs::exists(site / "pkg-1.0.dist-info"));
    CHECK(fs::exists(site / "pkg" / "__init__.py"));
    CHECK(fs::exists("/dev/zero"));
}
