#pragma once
// Helpers shared by the libFuzzer targets in this directory (built with -DBOOTSTRAP_FUZZ=ON,
// run by scripts/fuzz.sh). A target aborts only on a broken invariant; errors returned as
// values are the expected answer to garbage and are simply dropped.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace bootstrap::fuzz {

/// The fuzzer's bytes as text.
inline std::string_view as_text(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

/// A directory private to this fuzzing process, made once under $TMPDIR (scripts/fuzz.sh points
/// TMPDIR at its scratch directory, so a crashed run leaves nothing in /tmp).
inline const std::filesystem::path& scratch_dir() {
    static const std::filesystem::path dir = [] {
        std::string tmpl = (std::filesystem::temp_directory_path() / "bs-fuzz-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) {
            std::perror("mkdtemp");
            std::abort();
        }
        std::filesystem::path made = tmpl;
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(scratch_dir(), ec);
        });
        return made;
    }();
    return dir;
}

/// Replace `path`'s content with `bytes`; aborts when the scratch dir cannot be written (a
/// broken harness, not a finding in the code under test).
inline void write_bytes(const std::filesystem::path& path, std::string_view bytes) {
    // A new file each time, not a truncated one: ext4 flushes a file rewritten after a truncate
    // on close (auto_da_alloc), which made a file-based target 7x slower.
    std::remove(path.c_str());
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
        std::perror(path.c_str());
        std::abort();
    }
}

/// Abort with a message when an invariant of the code under test does not hold.
[[noreturn]] inline void invariant_failed(const char* what, std::string_view detail) {
    std::fprintf(stderr, "fuzz invariant failed: %s: '%.*s'\n", what, static_cast<int>(detail.size()), detail.data());
    std::abort();
}

}  // namespace bootstrap::fuzz
