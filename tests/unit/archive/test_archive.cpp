#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "archive/archive.hpp"
#include "core/fs.hpp"
#include "core/interrupt.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

// Fixture archives are made by Python's tarfile/zipfile, which write whatever member names,
// types and links they are given (the tests may not use libarchive's writer).
constexpr const char* k_prelude = R"(import io, sys, tarfile, zipfile
out = sys.argv[1]
def add(t, name, data=b'', mode=0o644, type=tarfile.REGTYPE, link=''):
    ti = tarfile.TarInfo(name)
    ti.type, ti.mode, ti.linkname, ti.mtime = type, mode, link, 1700000000
    ti.size = len(data) if type == tarfile.REGTYPE else 0
    t.addfile(ti, io.BytesIO(data) if ti.size else None)
def tar(mode='w:gz', **kw):
    return tarfile.open(out, mode, format=tarfile.PAX_FORMAT, **kw)
D, L, S, F, C = tarfile.DIRTYPE, tarfile.LNKTYPE, tarfile.SYMTYPE, tarfile.FIFOTYPE, tarfile.CHRTYPE
)";

fs::path make_archive(const core::TempDir& dir, const std::string& name, const std::string& body) {
    auto script = dir.path() / (name + ".py");
    REQUIRE(core::write_file_atomic(script, std::string(k_prelude) + body));
    auto out = dir.path() / name;
    auto cmd = fmt::format("python3 '{}' '{}'", script.string(), out.string());
    REQUIRE(std::system(cmd.c_str()) == 0);
    return out;
}

std::string read(const fs::path& p) {
    auto r = core::read_file(p);
    REQUIRE(r);
    return *r;
}

// Nothing named *.tmp-* left in the directory that held dest.
void require_clean(const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(dir)) {
        INFO(e.path().string());
        CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
    }
}

}  // namespace

TEST_CASE("a tar.gz with one top directory has it stripped, modes and links are kept") {
    core::TempDir dir("bs-archive");
    // A pax global header, as `git archive` (GitHub tarballs) writes one, is not a member.
    auto file = make_archive(dir, "pkg.tar.gz", R"(
with tar(pax_headers={'comment': '0123abcd'}) as t:
    add(t, 'pkg-1.0/', type=D, mode=0o755)
    add(t, 'pkg-1.0/setup.py', b'setup()\n')
    add(t, 'pkg-1.0/src/mod.py', b'x = 1\n')
    add(t, 'pkg-1.0/bin/run', b'#!/bin/sh\n', mode=0o4775)
    add(t, 'pkg-1.0/link.py', type=S, link='src/mod.py')
    add(t, 'pkg-1.0/hard.py', type=L, link='pkg-1.0/setup.py')
)");
    auto dest = dir.path() / "out" / "pkg";
    auto r = archive::extract(file, dest);
    REQUIRE(r);
    CHECK(r->stripped == "pkg-1.0");
    CHECK(r->files == 5);
    CHECK(r->bytes == 8 + 6 + 10);
    CHECK(read(dest / "setup.py") == "setup()\n");
    CHECK(read(dest / "src" / "mod.py") == "x = 1\n");
    CHECK(read(dest / "hard.py") == "setup()\n");
    CHECK(fs::read_symlink(dest / "link.py") == "src/mod.py");
    struct stat st {};
    REQUIRE(::stat((dest / "bin" / "run").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0755);  // executable kept; setuid and group write dropped
    CHECK(st.st_mtime == 1700000000);
    require_clean(dir.path() / "out");
}

TEST_CASE("several top entries, or strip_top off, are extracted as they are") {
    core::TempDir dir("bs-archive");
    auto two = make_archive(dir, "two.tar.xz", R"(
with tar('w:xz') as t:
    add(t, 'a/x', b'x')
    add(t, 'b/y', b'y')
)");
    auto r = archive::extract(two, dir.path() / "two");
    REQUIRE(r);
    CHECK(r->stripped.empty());
    CHECK(read(dir.path() / "two" / "a" / "x") == "x");
    CHECK(read(dir.path() / "two" / "b" / "y") == "y");

    auto one = make_archive(dir, "one.tar.bz2", R"(
with tar('w:bz2') as t:
    add(t, './top/z', b'z')
)");
    auto kept = archive::extract(one, dir.path() / "kept", {.strip_top = false});
    REQUIRE(kept);
    CHECK(kept->stripped.empty());
    CHECK(read(dir.path() / "kept" / "top" / "z") == "z");
    auto stripped = archive::extract(one, dir.path() / "stripped");
    REQUIRE(stripped);
    CHECK(stripped->stripped == "top");
    CHECK(read(dir.path() / "stripped" / "z") == "z");

    auto single = make_archive(dir, "single.tar", R"(
with tar('w') as t:
    add(t, 'README', b'hi')
)");
    auto file_only = archive::extract(single, dir.path() / "single");
    REQUIRE(file_only);
    CHECK(file_only->stripped.empty());
    CHECK(read(dir.path() / "single" / "README") == "hi");
}

TEST_CASE("a zip is extracted, with its executable bits") {
    core::TempDir dir("bs-archive");
    auto file = make_archive(dir, "proj.zip", R"(
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('proj/', '')
    z.writestr('proj/data.txt', 'data' * 100)
    info = zipfile.ZipInfo('proj/tool.sh')
    info.external_attr = (0o100755 << 16)
    info.create_system = 3
    z.writestr(info, '#!/bin/sh\n')
)");
    auto dest = dir.path() / "proj";
    auto r = archive::extract(file, dest);
    REQUIRE(r);
    CHECK(r->stripped == "proj");
    CHECK(r->files == 2);
    CHECK(read(dest / "data.txt").size() == 400);
    struct stat st {};
    REQUIRE(::stat((dest / "tool.sh").c_str(), &st) == 0);
    CHECK((st.st_mode & 0111) == 0111);
}

TEST_CASE("unsafe entries are refused and leave nothing behind") {
    struct Case {
        const char* what;
        const char* body;
        const char* entry;  // named in the message
    };
    const Case cases[] = {
        {"dot-dot", "add(t, 'pkg/ok', b'1')\n    add(t, '../evil', b'x')", "../evil"},
        {"nested dot-dot", "add(t, 'pkg/../../evil', b'x')", "pkg/../../evil"},
        {"absolute", "add(t, '/tmp/bs-archive-evil', b'x')", "/tmp/bs-archive-evil"},
        {"absolute symlink then a file through it", "add(t, 'etc', type=S, link='/etc')\n    add(t, 'etc/evil', b'x')",
         "etc"},
        {"escaping symlink", "add(t, 'pkg/up', type=S, link='../../evil')", "pkg/up"},
        {"dot-dot after a name in a symlink", "add(t, 'pkg/s', type=S, link='a/../../x')", "pkg/s"},
        {"write through an inner symlink",
         "add(t, 'pkg/sub/', type=D)\n    add(t, 'pkg/d', type=S, link='sub')\n"
         "    add(t, 'pkg/d/x', b'x')",
         "pkg/d/x"},
        {"hardlink outside", "add(t, 'pkg/h', type=L, link='../evil')", "pkg/h"},
        {"absolute hardlink", "add(t, 'pkg/h', type=L, link='/etc/passwd')", "pkg/h"},
        {"hardlink to a symlink", "add(t, 'a/b/s', type=S, link='../../x')\n    add(t, 'h', type=L, link='a/b/s')",
         "h"},
        {"hardlink through a symlink",
         "add(t, 'pkg/sub/f', b'x')\n    add(t, 'pkg/d', type=S, link='sub')\n"
         "    add(t, 'pkg/h', type=L, link='pkg/d/f')",
         "pkg/h"},
        {"a file replacing a symlink", "add(t, 'pkg/s', type=S, link='f')\n    add(t, 'pkg/s', b'x')", "pkg/s"},
        {"fifo", "add(t, 'pkg/fifo', type=F)", "pkg/fifo"},
        {"device", "add(t, 'pkg/tty', type=C)", "pkg/tty"},
        {"symlink leaving the stripped top",
         "add(t, 'pkg/f', b'x')\n"
         "    add(t, 'pkg/l', type=S, link='../pkg/f')",
         "pkg"},
    };
    for (const auto& c : cases) {
        SECTION(c.what) {
            core::TempDir dir("bs-archive");
            auto file = make_archive(dir, "bad.tar.gz", fmt::format("with tar() as t:\n    {}\n", c.body));
            auto parent = dir.path() / "out";
            auto dest = parent / "dest";
            auto r = archive::extract(file, dest);
            REQUIRE_FALSE(r);
            CHECK(r.error().code == ErrorCode::io);
            INFO(r.error().message);
            CHECK(r.error().message.find(fmt::format("refusing unsafe entry '{}' in {}: ", c.entry, file.string())) ==
                  0);
            CHECK_FALSE(fs::exists(dest));
            CHECK_FALSE(fs::exists(parent / "evil"));
            CHECK_FALSE(fs::exists(dir.path() / "evil"));
            CHECK_FALSE(fs::exists("/tmp/bs-archive-evil"));
            require_clean(parent);
        }
    }
}

TEST_CASE("an unsafe zip entry is refused too") {
    core::TempDir dir("bs-archive");
    auto file = make_archive(dir, "bad.zip", R"(
with zipfile.ZipFile(out, 'w') as z:
    z.writestr('ok.txt', 'ok')
    z.writestr('../evil', 'x')
)");
    auto r = archive::extract(file, dir.path() / "out" / "dest");
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("refusing unsafe entry '../evil'") == 0);
    CHECK_FALSE(fs::exists(dir.path() / "out" / "evil"));
    require_clean(dir.path() / "out");
}

TEST_CASE("an existing destination, a corrupt or truncated file are errors naming it") {
    core::TempDir dir("bs-archive");
    auto file = make_archive(dir, "ok.tar.gz", R"(
with tar() as t:
    add(t, 'pkg/big', bytes(range(256)) * 4096)
)");
    REQUIRE(core::create_directories(dir.path() / "exists"));
    auto exists = archive::extract(file, dir.path() / "exists");
    REQUIRE_FALSE(exists);
    CHECK(exists.error().message.find("already exists") != std::string::npos);

    REQUIRE(core::write_file_atomic(dir.path() / "junk.tar.gz", std::string(4096, 'j')));
    auto junk = archive::extract(dir.path() / "junk.tar.gz", dir.path() / "junk");
    REQUIRE_FALSE(junk);
    CHECK(junk.error().code == ErrorCode::io);
    CHECK(junk.error().message.find("cannot extract " + (dir.path() / "junk.tar.gz").string() + ": ") == 0);
    CHECK_FALSE(fs::exists(dir.path() / "junk"));

    auto whole = read(file);
    REQUIRE(core::write_file_atomic(dir.path() / "cut.tar.gz", whole.substr(0, whole.size() / 2)));
    auto cut = archive::extract(dir.path() / "cut.tar.gz", dir.path() / "cut");
    REQUIRE_FALSE(cut);
    CHECK(cut.error().message.find("cannot extract " + (dir.path() / "cut.tar.gz").string()) == 0);
    CHECK_FALSE(fs::exists(dir.path() / "cut"));

    auto missing = archive::extract(dir.path() / "nope.tar", dir.path() / "nope");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find("nope.tar") != std::string::npos);
    require_clean(dir.path());
}

TEST_CASE("an interrupt stops extraction and leaves nothing") {
    core::TempDir dir("bs-archive");
    auto file = make_archive(dir, "ok.tar.gz", R"(
with tar() as t:
    add(t, 'pkg/a', b'a')
)");
    core::set_interrupt_signal(SIGINT);
    auto r = archive::extract(file, dir.path() / "dest");
    core::set_interrupt_signal(0);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::interrupted);
    CHECK_FALSE(fs::exists(dir.path() / "dest"));
    require_clean(dir.path());
}

TEST_CASE("non-ASCII member names survive the C locale") {
    const std::string name =
        "\xc3\xbc"
        "n"
        "\xc3\xaf"
        "code.txt";  // "\u00fcn\u00efcode.txt"
    core::TempDir dir("bs-archive");
    auto tgz = make_archive(dir, "u.tar.gz", R"(
with tar() as t:
    add(t, 'pkg/\u00fcn\u00efcode.txt', b'u')
)");
    auto r = archive::extract(tgz, dir.path() / "tar");
    REQUIRE(r);
    CHECK(read(dir.path() / "tar" / name) == "u");
    auto zip = make_archive(dir, "u.zip", R"(
with zipfile.ZipFile(out, 'w') as z:
    z.writestr('pkg/\u00fcn\u00efcode.txt', 'u')
)");
    auto z = archive::extract(zip, dir.path() / "zip");
    INFO((z ? std::string() : z.error().message));
    REQUIRE(z);
    CHECK(read(dir.path() / "zip" / name) == "u");
}

TEST_CASE("a decompression bomb is refused, naming the archive and the member") {
    core::TempDir dir("bs-archive");
    // 64 MiB of zeros packs to some 64 KiB (gzip) or 64 KiB (deflate): ~1000:1.
    fs::path file;
    SECTION("tar.gz") {
        file = make_archive(dir, "bomb.tar.gz", R"(
with tar() as t:
    add(t, 'pkg/setup.py', b'setup()\n')
    add(t, 'pkg/zeros.bin', bytes(64 << 20))
)");
    }
    SECTION("zip") {
        file = make_archive(dir, "bomb.zip", R"(
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('pkg/setup.py', b'setup()\n')
    z.writestr('pkg/zeros.bin', bytes(64 << 20))
)");
    }
    auto dest = dir.path() / "out" / "pkg";
    auto r = archive::extract(file, dest);
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(r.error().message.find(fmt::format("refusing to extract {}: member 'pkg/zeros.bin' "
                                             "expands more than 200:1 (",
                                             file.string())) == 0);
    CHECK_FALSE(fs::exists(dest));
    require_clean(dest.parent_path());
}

TEST_CASE("the extracted tree's size is capped, by a member's declared size or its data") {
    core::TempDir dir("bs-archive");
    auto file = make_archive(dir, "big.tar.gz", R"(
import os
with tar() as t:
    add(t, 'pkg/setup.py', b'setup()\n')
    add(t, 'pkg/data.bin', os.urandom(200000))
)");
    auto dest = dir.path() / "out" / "pkg";
    archive::ExtractOptions options;
    options.max_bytes = 100000;
    auto r = archive::extract(file, dest, options);
    REQUIRE_FALSE(r);
    CHECK(r.error().message ==
          fmt::format("refusing to extract {}: member 'pkg/data.bin' would take the extracted tree "
                      "past 97.7 KiB (the limit on an archive's contents)",
                      file.string()));
    CHECK_FALSE(fs::exists(dest));
    require_clean(dest.parent_path());

    options.max_bytes = 200008;  // exactly what it holds
    auto fits = archive::extract(file, dest, options);
    REQUIRE(fits);
    CHECK(fits->bytes == 200008);
}

TEST_CASE("a compressible archive below the ratio floor, or incompressible data, extracts") {
    core::TempDir dir("bs-archive");
    auto file = make_archive(dir, "fine.tar.gz", R"(
import os
with tar() as t:
    add(t, 'pkg/zeros.bin', bytes(4 << 20))
    add(t, 'pkg/random.bin', os.urandom(3 << 20))
)");
    archive::ExtractOptions options;
    options.ratio_floor = 6 << 20;  // the zeros alone stay below it; the random data lowers the ratio
    auto r = archive::extract(file, dir.path() / "out", options);
    REQUIRE(r);
    CHECK(r->bytes == (7u << 20));
}

TEST_CASE("formats other than tar and zip are refused by name, and the codecs sources use are read") {
    core::TempDir dir{"bs-archive-formats"};
    SECTION("a cpio archive (newc): not read, the message says what is") {
        // A newc header of one empty file "a" and the trailer, as `cpio -H newc -o` writes it.
        auto header = [](const std::string& name, unsigned mode) {
            return fmt::format("070701{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}",
                               1, mode, 0, 0, 1, 0, 0, 0, 0, 0, 0, name.size() + 1, 0) +
                   name + std::string(1, '\0');
        };
        auto pad = [](std::string s) { return s + std::string((4 - s.size() % 4) % 4, '\0'); };
        const auto cpio = dir.path() / "x.cpio";
        REQUIRE(core::write_file_atomic(cpio, pad(header("a", 0100644)) + pad(header("TRAILER!!!", 0))));
        auto r = archive::extract(cpio, dir.path() / "out");
        REQUIRE_FALSE(r);
        INFO(r.error().message);
        CHECK(r.error().message.find("bootstrap reads tar and zip archives") != std::string::npos);
        CHECK_FALSE(fs::exists(dir.path() / "out"));
        require_clean(dir.path());
    }
    for (const char* mode : {"w:gz", "w:bz2", "w:xz"}) {
        DYNAMIC_SECTION("a tar " << mode) {
            auto file = make_archive(dir, std::string("t-") + (mode + 2),
                                     fmt::format(R"(
with tar('{}') as t:
    add(t, 'top/', type=D, mode=0o755)
    add(t, 'top/f.txt', b'hello')
)",
                                                 mode));
            auto r = archive::extract(file, dir.path() / "out");
            REQUIRE(r);
            CHECK(read(dir.path() / "out" / "f.txt") == "hello");
        }
    }
}
