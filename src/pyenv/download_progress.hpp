#pragma once
// How far an installer's downloads have come, read from the progress bars it draws on a
// terminal (the installer runs on a pseudo-terminal: exec::ProcessSpec::terminal). Neither uv nor
// pip prints byte counts anywhere else. Fed the plain segments of its output
// (core::TerminalTranscript), redraws included:
//   uv:  a frame per redraw, "⠙ Preparing packages... (1/3)" and one bar per file in flight,
//        "sympy  ------------------------------ 1.23 MiB/5.90 MiB" (powers of 1024); a file's
//        bar leaves the frame once it is downloaded; "Prepared 3 packages in 2.1s" ends them.
//   pip: "Downloading numpy-2.1.3-cp311-....whl (16.3 MB)", then its bar redrawn,
//        "━━━━━━━━━━━━━━╸━━━━━━━━ 11.3/16.3 MB 337.8 MB/s eta 0:00:01" (powers of 1000); the
//        next "Downloading" or "Installing collected packages" ends it.
// The sizes are the installers' rounded ones (three significant digits), so the sums are close,
// not exact; a file served from the installer's cache draws no bar and is not counted.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace bootstrap::pyenv {

struct DownloadProgress {
    std::uint64_t done = 0;   // bytes received, over every file seen
    std::uint64_t total = 0;  // the sizes of those files
    size_t files = 0;         // files seen
    size_t files_done = 0;    // of them, downloaded
    std::string current;      // the largest file still downloading ("" when none)
    [[nodiscard]] bool operator==(const DownloadProgress&) const = default;
};

/// "5.90 MiB", "16.3 MB", "0 B", "512 bytes": bytes; nullopt when `number` or `unit` is not one.
[[nodiscard]] std::optional<std::uint64_t> parse_size(std::string_view number, std::string_view unit);

class DownloadMeter {
public:
    /// One segment of the installer's output; true when the progress changed.
    bool feed(std::string_view segment);
    [[nodiscard]] const DownloadProgress& progress() const { return m_progress; }

private:
    struct File {
        std::uint64_t done = 0;
        std::uint64_t total = 0;
        bool complete = false;
    };
    void update(const std::string& name, std::uint64_t done, std::uint64_t total);
    void complete(const std::string& name);
    void complete_all();
    void close_frame();
    void sum();

    std::map<std::string, File> m_files;
    std::set<std::string> m_frame;  // uv: the files the frame being drawn has a bar for
    bool m_in_frame = false;
    std::string m_pip_file;  // pip: the file its bar is for
    DownloadProgress m_progress;
};

}  // namespace bootstrap::pyenv
