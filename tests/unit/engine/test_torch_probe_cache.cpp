// The torch probe's cache: a stand-in interpreter (a shell script that counts its runs and
// prints the probe's key=value answer) in a venv-shaped directory with a torch dist-info.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "core/fs.hpp"
#include "core/strings.hpp"
#include "engine/torch_probe_cache.hpp"

using namespace bootstrap;
namespace fs = std::filesystem;

namespace {

struct FakeVenv {
    core::TempDir dir{"bs-torch-cache"};
    fs::path venv = dir.path() / "venv";
    fs::path site = venv / "lib" / "python3.11" / "site-packages";
    fs::path runs = dir.path() / "runs";
    pyenv::InterpreterFacts facts;

    FakeVenv() {
        fs::create_directories(site);
        fs::create_directories(venv / "bin");
        std::ofstream(venv / "pyvenv.cfg") << "version = 3.11.2\n";
        set_answer(
            "torch_version=2.11.0+cu130\\ncuda_version=13.0\\narch_flags=sm_90 "
            "compute_90\\ndevice=0|9|0|NVIDIA H200\\n");
        install_torch("2.11.0", "torch/__init__.py,sha256=x,1\n");
        facts.purelib = site;
        facts.platlib = site;
    }
    /// What the stand-in python prints (printf format) each time it runs.
    void set_answer(const std::string& printf_text) const {
        fs::path python = venv / "bin" / "python";
        std::ofstream(python) << "#!/bin/sh\necho run >> '" << runs.string() << "'\nprintf '" << printf_text << "'\n";
        ::chmod(python.c_str(), 0755);
    }
    /// (Re)install torch: a new dist-info with a RECORD written anew, as an installer does.
    void install_torch(const std::string& version, const std::string& record) const {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(site))
            if (e.path().filename().string().starts_with("torch-")) fs::remove_all(e.path(), ec);
        fs::path info = site / ("torch-" + version + ".dist-info");
        fs::create_directories(info);
        std::ofstream(info / "METADATA") << "Name: torch\nVersion: " << version << "\n";
        std::ofstream(info / "RECORD") << record;
    }
    int count() const {
        auto text = core::read_file(runs);
        return text ? static_cast<int>(core::split(*text, '\n').size()) - 1 : 0;
    }
    device::ProbeAnswer probe(const std::string& view = "driver: gpu 0 9.0 NVIDIA H200\n", bool write = true) const {
        return engine::cached_probe_torch(venv, &facts, venv / "bin" / "python", {{"PATH", "/usr/bin:/bin"}}, view,
                                          write);
    }
};

}  // namespace

TEST_CASE("torch probe cache: a second probe with the same torch starts no interpreter") {
    FakeVenv v;
    auto first = v.probe();
    REQUIRE(first.available);
    CHECK(v.count() == 1);
    CHECK(fs::exists(engine::torch_probe_cache_path(v.venv)));
    auto second = v.probe();
    CHECK(v.count() == 1);
    REQUIRE(second.available);
    CHECK(second.probe == "torch");
    CHECK(second.torch_version == "2.11.0+cu130");
    CHECK(second.cuda_version == "13.0");
    CHECK(second.torch_arch_flags == first.torch_arch_flags);
    REQUIRE(second.gpus.size() == 1);
    CHECK(second.gpus[0].name == "NVIDIA H200");
    CHECK(second.gpus[0].arch().dotted() == "9.0");
    CHECK(second.notes == first.notes);
    CHECK(second.library == (v.venv / "bin" / "python").string());
}

TEST_CASE("torch probe cache: what invalidates it") {
    FakeVenv v;
    REQUIRE(v.probe().available);
    REQUIRE(v.count() == 1);

    SECTION("torch upgraded: a new RECORD") {
        v.set_answer("torch_version=2.12.0\\narch_flags=sm_90\\n");
        v.install_torch("2.12.0", "torch/__init__.py,sha256=y,2\n");
        CHECK(v.probe().torch_version == "2.12.0");
        CHECK(v.count() == 2);
        CHECK(v.probe().torch_version == "2.12.0");
        CHECK(v.count() == 2);
    }
    SECTION("torch reinstalled at the same version (same size, new inode and mtime)") {
        // Past the file system's timestamp granularity (a jiffy), so the new RECORD's mtime
        // differs even where its inode number is reused.
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        v.install_torch("2.11.0", "torch/__init__.py,sha256=x,1\n");
        (void)v.probe();
        CHECK(v.count() == 2);
    }
    SECTION("a CUDA library wheel changed") {
        fs::create_directories(v.site / "nvidia_cuda_runtime-13.0.96.dist-info");
        std::ofstream(v.site / "nvidia_cuda_runtime-13.0.96.dist-info" / "RECORD") << "x\n";
        (void)v.probe();
        CHECK(v.count() == 2);
        (void)v.probe();
        CHECK(v.count() == 2);
    }
    SECTION("the driver's view changed (another GPU, a driver upgrade, CUDA_VISIBLE_DEVICES)") {
        (void)v.probe("driver: gpu 0 9.0 NVIDIA H200\ndriver: gpu 1 9.0 NVIDIA H200\n");
        CHECK(v.count() == 2);
    }
    SECTION("torch removed: nothing keys a cache, every probe asks") {
        fs::remove_all(v.site / "torch-2.11.0.dist-info");
        CHECK_FALSE(engine::torch_probe_key(v.venv, v.facts, "").has_value());
        (void)v.probe();
        (void)v.probe();
        CHECK(v.count() == 3);
    }
    SECTION("an unreadable or foreign cache file is a miss, rewritten") {
        REQUIRE(core::write_file_atomic(engine::torch_probe_cache_path(v.venv), "{not json"));
        REQUIRE(v.probe().available);
        CHECK(v.count() == 2);
        REQUIRE(v.probe().available);
        CHECK(v.count() == 2);
        REQUIRE(core::write_file_atomic(engine::torch_probe_cache_path(v.venv), R"({"version": 1, "key": 7})"));
        REQUIRE(v.probe().available);
        CHECK(v.count() == 3);
    }
}

TEST_CASE("torch probe cache: plan reads it but never writes it, a failure is never kept") {
    FakeVenv v;
    SECTION("write = false") {
        REQUIRE(v.probe("view\n", false).available);
        CHECK_FALSE(fs::exists(engine::torch_probe_cache_path(v.venv)));
        (void)v.probe("view\n", false);
        CHECK(v.count() == 2);
        (void)v.probe("view\n", true);
        (void)v.probe("view\n", false);
        CHECK(v.count() == 3);
    }
    SECTION("a torch that does not import is asked again next time") {
        v.set_answer("import_error=ImportError: libcudnn.so.9: cannot open\\n");
        auto a = v.probe();
        CHECK_FALSE(a.available);
        CHECK_THAT(a.unavailable_reason, Catch::Contains("libcudnn.so.9"));
        CHECK_FALSE(fs::exists(engine::torch_probe_cache_path(v.venv)));
        (void)v.probe();
        CHECK(v.count() == 2);
    }
}

TEST_CASE("torch probe key: scheme, interpreter, RECORD stamps, then the view") {
    FakeVenv v;
    fs::create_directories(v.site / "nvidia_cudnn_cu13-9.10.dist-info");
    std::ofstream(v.site / "nvidia_cudnn_cu13-9.10.dist-info" / "RECORD") << "x\n";
    fs::create_directories(v.site / "numpy-2.0.dist-info");
    std::ofstream(v.site / "numpy-2.0.dist-info" / "RECORD") << "x\n";
    auto key = engine::torch_probe_key(v.venv, v.facts, "driver: view\n");
    REQUIRE(key);
    auto lines = core::split(*key, '\n');
    REQUIRE(lines.size() == 7);
    CHECK(lines[0] == "bootstrap-torch-probe-v1");
    CHECK(lines[1].starts_with("interpreter " + fs::canonical(v.venv / "bin" / "python").string()));
    CHECK(lines[2].starts_with("pyvenv.cfg "));
    CHECK(lines[3].starts_with("record nvidia_cudnn_cu13-9.10.dist-info/RECORD 2 "));
    CHECK(lines[4].starts_with("record torch-2.11.0.dist-info/RECORD "));
    CHECK(lines[5] == "driver: view");
}
