// doctor's text scanning on hostile files and tool output: lines far longer than libstdc++'s
// recursive std::regex matcher can take (it recurses once per character matched).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "core/fs.hpp"
#include "doctor/checks.hpp"
#include "pyenv/relocate.hpp"

using namespace bootstrap;
using namespace bootstrap::doctor;
using bootstrap::pyenv::detect_venv_origin;
using bootstrap::pyenv::relocate_venv;

namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text, mode_t mode = 0644) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
}

}  // namespace

TEST_CASE("an activate script with a 100,000-character line", "[doctor][venv]") {
    core::TempDir tmp("doctor-hostile");
    fs::path venv = tmp.path() / "v";
    write(venv / "bin" / "activate",
          "VIRTUAL_ENV='/" + std::string(100'000, 'a') + "'\nVIRTUAL_ENV='/made/here'\nexport VIRTUAL_ENV\n");
    auto origin = detect_venv_origin(venv);
    REQUIRE(origin);
    CHECK(*origin == "/made/here");
}

TEST_CASE("torch's version.py and nvcc's output with 100,000-character runs", "[doctor][packages]") {
    core::TempDir tmp("doctor-hostile");
    fs::path venv = tmp.path() / "v";
    write(venv / "lib" / "python3.11" / "site-packages" / "torch" / "version.py",
          "cuda: " + std::string(100'000, 'a') + "\ncuda: Optional[str] = '12.8'\n");
    fs::path bin = tmp.path() / "bin";
    write(bin / "nvcc",
          "#!/bin/sh\necho 'release " + std::string(100'000, '9') +
              "'\necho 'Cuda compilation tools, release 12.9, V12.9.41'\n",
          0755);
    DoctorOptions options;
    options.venv = venv;
    options.environment = {{"PATH", bin.string()}};
    auto findings = check_packages(options);
    const Finding* nvcc = nullptr;
    for (const auto& f : findings)
        if (f.rule == "nvcc") nvcc = &f;
    REQUIRE(nvcc);
    CHECK(nvcc->message == "nvcc is CUDA 12.9 but torch was built with CUDA 12.8");
}
