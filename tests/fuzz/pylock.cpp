// Fuzz target: a pylock.toml read by the one PEP 751 reader (steps::read_pylock, the pins an
// install step writes from it) and by lockfile::parse_pylock (a --locked run's Lockfile, its
// [tool.bootstrap] tables, and the requirements lines written from it). Invariants: every
// name, version, marker, index, url and path the readers accept holds no control character and
// does not start with '-', and every requirements line written is one line that starts no
// option (the injection of issue 41, item 3).

#include <filesystem>
#include <map>

#include "fuzz_support.hpp"
#include "lockfile/pylock.hpp"
#include "manifest/lockfile.hpp"
#include "steps/pylock_data.hpp"

namespace {

using bootstrap::fuzz::invariant_failed;

void check_value(std::string_view what, std::string_view value) {
    for (char c : value)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            invariant_failed(("a control character in a " + std::string(what)).c_str(), value);
    if (!value.empty() && value.front() == '-')
        invariant_failed(("a leading '-' in a " + std::string(what)).c_str(), value);
}

/// Requirements text: one line per requirement, none an option, nothing but the newlines that
/// end them.
void check_requirements(std::string_view text, size_t expected_lines) {
    size_t lines = 0;
    for (size_t at = 0; at < text.size();) {
        const size_t end = text.find('\n', at);
        if (end == std::string_view::npos) invariant_failed("an unterminated requirements line", text);
        std::string_view line = text.substr(at, end - at);
        check_value("requirements line", line);
        if (line.find(" #") != std::string_view::npos) invariant_failed("a comment in a requirements line", line);
        ++lines;
        at = end + 1;
    }
    if (lines != expected_lines) invariant_failed("not one requirements line per package", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bootstrap;
    const std::string_view text = fuzz::as_text(data, size);
    if (auto lock = steps::read_pylock(text, "/l/pylock.toml")) {
        for (const auto& p : lock->packages) {
            check_value("name", p.name);
            check_value("version", p.version);
            check_value("marker", p.marker);
            check_value("index", p.index);
            for (const auto& w : p.wheels) {
                check_value("wheel url", w.url);
                check_value("wheel path", w.path);
                check_value("wheel name", w.file_name);
            }
            if (p.directory) check_value("directory", p.directory->path);
        }
        if (auto pins = steps::pylock_pins(*lock)) check_requirements(pins->text, pins->requirements.size());
    }
    if (auto lock = lockfile::parse_pylock(text, "/l/pylock.toml")) {
        std::vector<const manifest::LockedPackage*> wheels;
        std::map<std::string, std::filesystem::path> paths;
        for (const auto& [name, p] : lock->packages) {
            check_value("name", name);
            check_value("version", p.version);
            check_value("url", p.url);
            check_value("path", p.path);
            check_value("index", p.index);
            for (const auto& url : p.origin.index_urls) check_value("index url", url);
            if (p.sha256.empty()) continue;
            wheels.push_back(&p);
            if (!p.path.empty()) paths[name] = p.path;
        }
        if (auto text = manifest::locked_requirements(wheels, paths)) check_requirements(*text, wheels.size());
    }
    return 0;
}
