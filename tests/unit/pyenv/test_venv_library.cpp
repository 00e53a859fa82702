// The library a venv's process loads (README pitfall P10): an absolute path is that file; a glob
// is looked for in site-packages first, then its file name on the system.
#include <catch2/catch.hpp>

#include <string>

#include "core/fs.hpp"
#include "exec/process.hpp"
#include "pyenv/venv_library.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

void touch(const fs::path& file) {
    REQUIRE(core::write_file_atomic(file,
                                    "\x7f"
                                    "ELF"));
}

}  // namespace

TEST_CASE("find_loaded_library: an absolute path is that file, found or not") {
    core::TempDir dir("bs-vlib");
    const fs::path lib = dir.path() / "libc.so.6";  // named like a system library on purpose
    touch(lib);
    auto found = pyenv::find_loaded_library({}, lib.string(), exec::current_environment());
    CHECK(found.file == lib);
    CHECK(found.where == "the path given");
    auto missing = pyenv::find_loaded_library({}, (dir.path() / "libgone.so").string(), exec::current_environment());
    CHECK(missing.file.empty());
    CHECK(missing.searched == std::vector<std::string>{(dir.path() / "libgone.so").string()});
    auto globbed = pyenv::find_loaded_library({}, (dir.path() / "libc.so.*").string(), exec::current_environment());
    CHECK(globbed.file == lib);
}

TEST_CASE("find_loaded_library: the venv's match wins, the first site-packages first") {
    core::TempDir dir("bs-vlib");
    const fs::path purelib = dir.path() / "purelib", platlib = dir.path() / "platlib";
    touch(platlib / "nvidia/cublas/lib/libcublasLt.so.13");
    touch(purelib / "nvidia/cublas/lib/libcublasLt.so.13");
    touch(purelib / "nvidia/zz/lib/libcublasLt.so.13");
    auto found =
        pyenv::find_loaded_library({purelib, platlib}, "nvidia/**/libcublasLt.so.13", exec::current_environment());
    CHECK(found.file == purelib / "nvidia/cublas/lib/libcublasLt.so.13");  // sorted first
    CHECK(found.where == "the venv");
    auto second = pyenv::find_loaded_library({dir.path() / "none", platlib}, "nvidia/*/lib/libcublasLt.so.*",
                                             exec::current_environment());
    CHECK(second.file == platlib / "nvidia/cublas/lib/libcublasLt.so.13");
}

TEST_CASE("find_loaded_library: without a venv match, the system's file of that name") {
    core::TempDir dir("bs-vlib");
    auto libc = pyenv::find_loaded_library({dir.path()}, "nvidia/**/libc.so.6", exec::current_environment());
    if (libc.file.empty()) FAIL("no libc.so.6 found on the system; searched: " << libc.searched.size());
    CHECK(libc.where == "the system");
    CHECK(libc.file.filename() == "libc.so.6");
    CHECK(libc.searched.front() == (dir.path() / "nvidia/**/libc.so.6").string());
    auto glob = pyenv::find_loaded_library({dir.path()}, "libc.so.[0-9]", exec::current_environment());
    CHECK(glob.where == "the system");
    auto none = pyenv::find_loaded_library({dir.path()}, "nvidia/**/libnothere.so.42", exec::current_environment());
    CHECK(none.file.empty());
    CHECK(none.where.empty());
    CHECK(none.searched.size() >= 2);  // the site-packages glob, then the system's places
}

TEST_CASE("glob_files: ** spans zero or more directories and does not follow directory links") {
    core::TempDir dir("bs-vlib");
    touch(dir.path() / "a/libx.so");
    touch(dir.path() / "a/b/c/libx.so");
    touch(dir.path() / "a/.hidden/libx.so");
    fs::create_directory_symlink(dir.path() / "a/b", dir.path() / "a/link");
    auto found = pyenv::glob_files(dir.path(), "a/**/libx.so");
    std::vector<fs::path> expected{dir.path() / "a/.hidden/libx.so", dir.path() / "a/b/c/libx.so",
                                   dir.path() / "a/libx.so"};
    CHECK(found == expected);
    CHECK(pyenv::glob_files(dir.path(), "a/*/libx.so").empty());  // a/.hidden: a leading dot
}
