#pragma once
// A synthetic venv for manifest tests: `*.dist-info` directories written the way installers
// leave them, and interpreter/host facts that need no Python and no probing.

#include <catch2/catch.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/fs.hpp"
#include "manifest/manifest.hpp"
#include "pyenv/interpreter.hpp"

namespace bs_test {

namespace fs = std::filesystem;

struct DistSpec {
    DistSpec(std::string n, std::string v, std::string inst = "uv\n", bool req = false)
        : name(std::move(n)),
          version(std::move(v)),
          installer(std::move(inst)),
          requested(req),
          record(name + "/__init__.py,sha256=abc,10\n") {}
    std::string name;
    std::string version;
    std::string installer = "uv\n";
    bool requested = false;
    std::vector<std::string> tags = {"py3-none-any"};
    std::optional<std::string> direct_url;  // direct_url.json content
    std::optional<std::string> record;      // RECORD content; none for a distutils-era install
};

inline fs::path site_packages(const fs::path& venv) { return venv / "lib" / "python3.11" / "site-packages"; }

inline fs::path write_dist(const fs::path& site, const DistSpec& d) {
    fs::path dir = site / (d.name + "-" + d.version + ".dist-info");
    REQUIRE(bootstrap::core::write_file_atomic(
        dir / "METADATA",
        "Metadata-Version: 2.1\nName: " + d.name + "\nVersion: " + d.version + "\n\nA long description.\n"));
    if (d.record) REQUIRE(bootstrap::core::write_file_atomic(dir / "RECORD", *d.record));
    if (!d.installer.empty()) REQUIRE(bootstrap::core::write_file_atomic(dir / "INSTALLER", d.installer));
    if (d.requested) REQUIRE(bootstrap::core::write_file_atomic(dir / "REQUESTED", ""));
    std::string wheel = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n";
    for (const auto& t : d.tags) wheel += "Tag: " + t + "\n";
    REQUIRE(bootstrap::core::write_file_atomic(dir / "WHEEL", wheel));
    if (d.direct_url) REQUIRE(bootstrap::core::write_file_atomic(dir / "direct_url.json", *d.direct_url));
    return dir;
}

inline bootstrap::pyenv::InterpreterFacts fake_python(const fs::path& venv) {
    bootstrap::pyenv::InterpreterFacts f;
    f.executable = (venv / "bin" / "python").string();
    f.version = "3.11.7";
    f.version_short = "3.11";
    f.implementation = "cpython";
    f.ext_suffix = ".cpython-311-x86_64-linux-gnu.so";
    f.soabi = "cpython-311-x86_64-linux-gnu";
    f.purelib = site_packages(venv);
    f.platlib = site_packages(venv);
    f.platform = "linux-x86_64";
    return f;
}

inline bootstrap::manifest::Host fake_host() { return {"2.36", "3.4.30", "12.2.0", "13.0", "580.65.06"}; }

/// A Manifest built by hand (no filesystem), for JSON and diff tests.
inline bootstrap::manifest::Package pkg(const std::string& name, const std::string& version,
                                        const std::string& record = "r1") {
    bootstrap::manifest::Package p;
    p.name = name;
    p.display_name = name;
    p.version = version;
    p.installer = "uv";
    p.wheel_tag = "py3-none-any";
    p.record_sha256 = record;
    p.origin.kind = bootstrap::manifest::OriginKind::index;
    return p;
}

}  // namespace bs_test
