#include "pyenv/download_progress.hpp"

#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "core/strings.hpp"

namespace bootstrap::pyenv {

namespace {

struct Unit {
    std::string_view name;
    double bytes;
};

// uv (indicatif's binary_bytes) counts in powers of 1024, pip (rich) in powers of 1000.
constexpr std::array<Unit, 11> k_units{{{"B", 1},
                                        {"bytes", 1},
                                        {"KiB", 1024.0},
                                        {"MiB", 1024.0 * 1024},
                                        {"GiB", 1024.0 * 1024 * 1024},
                                        {"TiB", 1024.0 * 1024 * 1024 * 1024},
                                        {"kB", 1e3},
                                        {"KB", 1e3},
                                        {"MB", 1e6},
                                        {"GB", 1e9},
                                        {"TB", 1e12}}};

std::optional<double> parse_number(std::string_view s) {
    if (s.empty() || s.size() > 24) return std::nullopt;
    for (char c : s)
        if ((c < '0' || c > '9') && c != '.') return std::nullopt;
    auto v = core::parse_double(s);
    if (!v || !std::isfinite(*v) || *v < 0) return std::nullopt;
    return v;
}

/// A progress bar's body: '-' (uv) or rich's box-drawing pieces (pip), five or more.
bool is_bar(std::string_view word) {
    size_t count = 0;
    for (size_t i = 0; i < word.size();) {
        if (word[i] == '-') {
            ++i;
        } else if (word.substr(i, 3) == "━" || word.substr(i, 3) == "╸" || word.substr(i, 3) == "╺") {
            i += 3;
        } else {
            return false;
        }
        ++count;
    }
    return count >= 5;
}

std::vector<std::string_view> words_of(std::string_view text) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && text[i] == ' ') ++i;
        size_t start = i;
        while (i < text.size() && text[i] != ' ') ++i;
        if (i > start) out.push_back(text.substr(start, i - start));
    }
    return out;
}

/// "a/b" -> {a, b}; nullopt without exactly one '/'.
std::optional<std::pair<std::string_view, std::string_view>> halves(std::string_view word) {
    size_t slash = word.find('/');
    if (slash == std::string_view::npos || word.find('/', slash + 1) != std::string_view::npos) return std::nullopt;
    return std::pair{word.substr(0, slash), word.substr(slash + 1)};
}

/// pip names a download by its file or URL: the project part of the file name.
std::string project_of(std::string_view file) {
    if (size_t slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
    if (size_t dash = file.find('-'); dash != std::string_view::npos && dash > 0) file = file.substr(0, dash);
    return std::string(file);
}

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view number, std::string_view unit) {
    auto value = parse_number(number);
    if (!value) return std::nullopt;
    for (const auto& u : k_units)
        if (u.name == unit) return static_cast<std::uint64_t>(std::llround(*value * u.bytes));
    return std::nullopt;
}

bool DownloadMeter::feed(std::string_view segment) {
    const DownloadProgress before = m_progress;
    const std::string_view text = core::trim(segment);
    const auto words = words_of(text);
    if (text.find("Preparing packages") != std::string_view::npos) {  // uv: a new frame
        close_frame();
        m_in_frame = true;
    }
    if (core::starts_with(text, "Prepared ") || core::starts_with(text, "Installing collected packages") ||
        core::starts_with(text, "Successfully installed")) {
        complete_all();
    } else if (words.size() >= 4 && words[0] == "Downloading" && words[words.size() - 2].starts_with('(') &&
               words.back().ends_with(')')) {
        // pip: "Downloading numpy-2.1.3-....whl (16.3 MB)" starts a file and ends the one before.
        // "Downloading numpy-2.1.3-....whl.metadata (62 kB)" is the wheel's METADATA alone (PEP 658),
        // fetched while resolving: not a package download, and no bar of it is counted.
        if (!m_pip_file.empty()) complete(m_pip_file);
        m_pip_file.clear();
        if (!words[1].ends_with(".metadata")) {
            m_pip_file = project_of(words[1]);
            auto size = parse_size(words[words.size() - 2].substr(1), words.back().substr(0, words.back().size() - 1));
            if (size) update(m_pip_file, 0, *size);
        }
    }
    for (size_t i = 0; i < words.size(); ++i) {
        // uv: [name] [bar] <n> <unit>/<n> <unit>
        if (i + 2 < words.size()) {
            auto mid = halves(words[i + 1]);
            if (mid) {
                auto done = parse_size(words[i], mid->first);
                auto total = parse_size(mid->second, words[i + 2]);
                size_t name = i > 0 && is_bar(words[i - 1]) ? i - 1 : i;
                if (done && total && name > 0 && !is_bar(words[name - 1])) {
                    std::string file(words[name - 1]);
                    update(file, *done, *total);
                    m_frame.insert(file);
                    i += 2;
                    continue;
                }
            }
        }
        // pip: [bar] <n>/<n> <unit>, the bar (or the line's start) before it.
        if (i + 1 < words.size() && !m_pip_file.empty() && (i == 0 || is_bar(words[i - 1]))) {
            if (auto both = halves(words[i])) {
                auto done = parse_size(both->first, words[i + 1]);
                auto total = parse_size(both->second, words[i + 1]);
                if (done && total) {
                    update(m_pip_file, *done, *total);
                    if (*done >= *total) complete(m_pip_file);
                    ++i;
                }
            }
        }
    }
    sum();
    return !(m_progress == before);
}

void DownloadMeter::update(const std::string& name, std::uint64_t done, std::uint64_t total) {
    File& f = m_files[name];
    if (f.complete && done < total) f.complete = false;  // the same name again: a second file
    f.done = std::min(done, total);
    f.total = total;
}

void DownloadMeter::complete(const std::string& name) {
    if (auto it = m_files.find(name); it != m_files.end()) it->second.complete = true;
}

void DownloadMeter::complete_all() {
    for (auto& [name, f] : m_files) f.complete = true;
    m_frame.clear();
    m_in_frame = false;
    m_pip_file.clear();
}

/// uv draws a bar for every file still downloading: a file the last frame had no bar for is done.
void DownloadMeter::close_frame() {
    if (m_in_frame)
        for (auto& [name, f] : m_files)
            if (!m_frame.count(name)) f.complete = true;
    m_frame.clear();
}

void DownloadMeter::sum() {
    DownloadProgress p;
    std::uint64_t largest = 0;
    for (const auto& [name, f] : m_files) {
        ++p.files;
        p.total += f.total;
        p.done += f.complete ? f.total : f.done;
        if (f.complete) {
            ++p.files_done;
        } else if (f.total >= largest) {
            largest = f.total;
            p.current = name;
        }
    }
    m_progress = std::move(p);
}

}  // namespace bootstrap::pyenv
