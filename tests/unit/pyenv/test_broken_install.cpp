#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/fs.hpp"
#include "pyenv/broken_install.hpp"
#include "pyenv/record.hpp"

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

namespace {

/// A dist-info for `name` 1.0 whose RECORD lists `files` (path, content) with their hashes.
void install_dist(const fs::path& site, const std::string& name,
                  const std::vector<std::pair<std::string, std::string>>& files) {
    std::string record;
    for (const auto& [path, content] : files) {
        REQUIRE(write_file_atomic(site / path, content));
        record += path + "," + bootstrap::pyenv::record_hash(content) + "," + std::to_string(content.size()) + "\n";
    }
    const std::string info = name + "-1.0.dist-info";
    REQUIRE(write_file_atomic(site / info / "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n\n"));
    REQUIRE(write_file_atomic(site / info / "RECORD", record + info + "/RECORD,,\n"));
}

}  // namespace

TEST_CASE("an install cut short mid-copy is found by its RECORD and removed, edits are not") {
    TempDir tmp("bs-incomplete");
    const fs::path venv = tmp.path() / "venv";
    const auto facts = facts_for(venv);
    const fs::path site = facts.purelib;
    install_dist(site, "pandas",
                 {{"pandas/__init__.py", "import pandas.core\n"},
                  {"pandas/core/a.py", "A = 1\n"},
                  {"pandas/core/b.py", "B = 2\n"},
                  {"pandas/io/c.py", "C = 3\n"}});
    install_dist(site, "edited", {{"edited/__init__.py", "X = 1\n"}});
    install_dist(site, "short", {{"short/__init__.py", "0123456789\n"}});
    install_dist(site, "whole", {{"whole/__init__.py", "W = 1\n"}});
    fs::remove(site / "pandas" / "core" / "a.py");
    fs::remove(site / "pandas" / "io" / "c.py");
    REQUIRE(write_file_atomic(site / "edited" / "__init__.py", "Y = 1\n"));  // same size, other content
    REQUIRE(write_file_atomic(site / "short" / "__init__.py", "01234"));     // a copy stopped half-way
    REQUIRE(write_file_atomic(site / "norecord-1.0.dist-info" / "METADATA",
                              "Metadata-Version: 2.1\nName: norecord\nVersion: 1.0\n\n"));

    auto found = bootstrap::pyenv::find_incomplete_installs(facts, venv);
    REQUIRE(found);
    std::map<std::string, bootstrap::pyenv::RecordFileCheck> by_name;
    for (const auto& f : *found) by_name[f.dist.normalized_name] = f.check;
    REQUIRE(by_name.size() == 3);  // not `edited` (doctor's hash check reports it), not `whole`
    CHECK(by_name["pandas"].missing == 2);
    CHECK(by_name["pandas"].checked == 4);
    CHECK(by_name["short"].changed == std::vector<std::string>{"short/__init__.py (size 5 bytes, recorded 11)"});
    CHECK(by_name["norecord"].record_unreadable);

    auto notes = bootstrap::pyenv::remove_incomplete_installs(facts, venv);
    REQUIRE(notes);
    REQUIRE(notes->size() == 3);
    CHECK(notes->at(1) ==
          "removed the incomplete install of pandas 1.0 (2 of the 4 files its RECORD names are missing, e.g. "
          "pandas/core/a.py (missing)): its dist-info and the 2 file(s) it had");
    CHECK_FALSE(fs::exists(site / "pandas-1.0.dist-info"));
    CHECK_FALSE(fs::exists(site / "pandas"));
    CHECK_FALSE(fs::exists(site / "short-1.0.dist-info"));
    CHECK_FALSE(fs::exists(site / "norecord-1.0.dist-info"));
    CHECK(fs::exists(site / "edited-1.0.dist-info"));
    CHECK(fs::exists(site / "whole" / "__init__.py"));

    // The hash check (doctor's) sees the same-size edit.
    auto dists = bootstrap::pyenv::scan_site_packages(site);
    REQUIRE(dists);
    auto edited = bootstrap::pyenv::check_record_files(dists->at("edited"), site, venv);
    CHECK(edited.changed == std::vector<std::string>{"edited/__init__.py (content differs)"});
    CHECK(edited.missing == 0);
}
