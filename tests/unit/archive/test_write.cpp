#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "archive/archive.hpp"
#include "core/fs.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;
using archive::Member;

namespace {

std::vector<Member> sample(const fs::path& src) {
    REQUIRE(core::write_file_atomic(src / "big.bin", std::string(3 << 20, 'x') + "end"));
    REQUIRE(core::write_file_atomic(src / "tool", "#!/bin/sh\necho hi\n", 0755));
    std::vector<Member> m;
    m.push_back({"meta.json", Member::Type::file, {}, std::string("{\"a\": 1}\n"), {}, 0644});
    m.push_back({"tree", Member::Type::directory, {}, {}, {}, 0755});
    m.push_back({"tree/big.bin", Member::Type::file, src / "big.bin", {}, {}, 0644});
    m.push_back({"tree/bin/tool", Member::Type::file, src / "tool", {}, {}, 0755});
    m.push_back({"tree/bin/tool2", Member::Type::symlink, {}, {}, "tool", 0777});
    m.push_back(
        {std::string("tree/") + std::string(150, 'n'), Member::Type::file, {}, std::string("long name"), {}, 0600});
    return m;
}

}  // namespace

TEST_CASE("write_tar_zst: the same members give the same bytes, and extract reads them back") {
    core::TempDir tmp("archive-write");
    auto members = sample(tmp.path() / "src");
    archive::WriteOptions options;
    options.mtime = 1700000000;
    auto a = archive::write_tar_zst(tmp.path() / "a.tar.zst", members, options);
    REQUIRE(a);
    CHECK(a->members == members.size());
    CHECK(a->bytes_in == (3u << 20) + 3 + 9 + 18 + 9);
    CHECK(a->bytes_out == fs::file_size(tmp.path() / "a.tar.zst"));
    CHECK(a->bytes_out < 100000);  // zstd, not a plain tar
    // Touching the sources' mtimes and owners changes nothing in the archive.
    REQUIRE(::chmod((tmp.path() / "src" / "big.bin").c_str(), 0600) == 0);
    REQUIRE(::chmod((tmp.path() / "src" / "big.bin").c_str(), 0644) == 0);
    auto b = archive::write_tar_zst(tmp.path() / "b.tar.zst", members, options);
    REQUIRE(b);
    CHECK(*core::read_file(tmp.path() / "a.tar.zst") == *core::read_file(tmp.path() / "b.tar.zst"));
    // The number of zstd workers does not change a byte (another machine, another core count).
    for (int threads : {1, 4}) {
        archive::WriteOptions other = options;
        other.threads = threads;
        REQUIRE(archive::write_tar_zst(tmp.path() / "c.tar.zst", members, other));
        CHECK(*core::read_file(tmp.path() / "a.tar.zst") == *core::read_file(tmp.path() / "c.tar.zst"));
    }

    archive::ExtractOptions x;
    x.strip_top = false;
    REQUIRE(archive::extract(tmp.path() / "a.tar.zst", tmp.path() / "out", x));
    CHECK(*core::read_file(tmp.path() / "out" / "meta.json") == "{\"a\": 1}\n");
    CHECK(fs::file_size(tmp.path() / "out" / "tree" / "big.bin") == (3u << 20) + 3);
    CHECK(fs::read_symlink(tmp.path() / "out" / "tree" / "bin" / "tool2") == "tool");
    CHECK(*core::read_file(tmp.path() / "out" / "tree" / std::string(150, 'n')) == "long name");
    struct stat st {};
    REQUIRE(::stat((tmp.path() / "out" / "tree" / "bin" / "tool").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0755);
    // GNU tar reads it too, with normalised owners and times.
    auto listing = tmp.path() / "listing.txt";
    auto cmd = fmt::format("tar --zstd -tvf '{}' > '{}' 2>&1", (tmp.path() / "a.tar.zst").string(), listing.string());
    if (std::system(cmd.c_str()) == 0) {
        auto text = core::read_file(listing);
        REQUIRE(text);
        CHECK(text->find("0/0") != std::string::npos);
        CHECK(text->find("2023-11-14") != std::string::npos);
    }
}

TEST_CASE("write_tar_zst: a source that cannot be read leaves no file behind") {
    core::TempDir tmp("archive-write");
    std::vector<Member> members{{"gone", Member::Type::file, tmp.path() / "missing", {}, {}, 0644}};
    auto r = archive::write_tar_zst(tmp.path() / "out.tar.zst", members);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("missing") != std::string::npos);
    CHECK(fs::is_empty(tmp.path()));

    REQUIRE(::mkfifo((tmp.path() / "fifo").c_str(), 0644) == 0);
    std::vector<Member> fifo{{"fifo", Member::Type::file, tmp.path() / "fifo", {}, {}, 0644}};
    // Opened without waiting for a writer, and refused as what it is.
    auto f = archive::write_tar_zst(tmp.path() / "out.tar.zst", fifo);
    REQUIRE_FALSE(f);
    CHECK(f.error().message.find("a FIFO") != std::string::npos);
    CHECK_FALSE(fs::exists(tmp.path() / "out.tar.zst"));
}

TEST_CASE("refuse_duplicates: a path listed twice is refused, naming it, and nothing is left") {
    core::TempDir tmp("archive-write");
    std::vector<Member> members;
    members.push_back({"venv", Member::Type::directory, {}, {}, {}, 0755});
    members.push_back({"venv/pyvenv.cfg", Member::Type::file, {}, std::string("home = /usr/bin\n"), {}, 0644});
    members.push_back({"./venv/pyvenv.cfg", Member::Type::file, {}, std::string("home = /evil\n"), {}, 0644});
    REQUIRE(archive::write_tar_zst(tmp.path() / "dup.tar.zst", members));

    archive::ExtractOptions x;
    x.strip_top = false;
    REQUIRE(archive::extract(tmp.path() / "dup.tar.zst", tmp.path() / "lenient", x));  // the later copy wins
    CHECK(*core::read_file(tmp.path() / "lenient" / "venv" / "pyvenv.cfg") == "home = /evil\n");

    x.refuse_duplicates = true;
    auto r = archive::extract(tmp.path() / "dup.tar.zst", tmp.path() / "strict", x);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == fmt::format("refusing unsafe entry './venv/pyvenv.cfg' in {}: a second entry for the "
                                           "same path (it would replace the first unseen)",
                                           (tmp.path() / "dup.tar.zst").string()));
    CHECK_FALSE(fs::exists(tmp.path() / "strict"));
    for (const auto& e : fs::directory_iterator(tmp.path()))
        CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
}
