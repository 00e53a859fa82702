#include "pyenv/relocate.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/strings.hpp"

namespace bootstrap::pyenv {

namespace {

constexpr size_t k_max_script_bytes = 1 << 20;

bool is_path_end(char c) { return c == '/' || c == '\'' || c == '"' || c == '\n' || c == ' ' || c == '\t' || c == ':'; }

fs::path canonical_or_same(const fs::path& p) {
    std::error_code ec;
    auto c = fs::weakly_canonical(p, ec);
    return ec ? p : c;
}

}  // namespace

std::optional<std::string> read_script_text(const fs::path& file) {
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(file, ec)) || fs::file_size(file, ec) > k_max_script_bytes)
        return std::nullopt;
    auto text = core::read_file(file);
    if (!text || text->find('\0') != std::string::npos) return std::nullopt;
    return *text;
}

std::vector<size_t> prefix_positions(const std::string& text, const std::string& prefix) {
    std::vector<size_t> out;
    if (prefix.empty()) return out;
    for (size_t pos = text.find(prefix); pos != std::string::npos; pos = text.find(prefix, pos + 1)) {
        size_t end = pos + prefix.size();
        if (end == text.size() || is_path_end(text[end])) out.push_back(pos);
    }
    return out;
}

Result<fs::path> detect_venv_origin(const fs::path& venv) {
    static const std::regex line(R"(^\s*(?:export\s+)?VIRTUAL_ENV=['"]?([^'"\n]+)['"]?\s*$)");
    auto text = core::read_file(venv / "bin" / "activate");
    if (!text)
        return fail(ErrorCode::not_found,
                    fmt::format("cannot tell where {} was made: {}", venv.string(), text.error().message));
    for (const auto& l : core::split(*text, '\n')) {
        std::smatch m;
        // std::regex recurses per character; no path is longer than PATH_MAX (4096).
        if (l.size() <= 4096 && std::regex_match(l, m, line) && m[1].str().front() == '/') return fs::path(m[1].str());
    }
    return fail(ErrorCode::not_found, fmt::format("cannot tell where {} was made: no VIRTUAL_ENV= line in {}",
                                                  venv.string(), (venv / "bin" / "activate").string()));
}

Result<RelocateReport> relocate_venv(const fs::path& venv, fs::path old_prefix, const fs::path& new_prefix) {
    RelocateReport report;
    // Every script of a bin/ that is not a venv's (~/.local, /usr/local, a project's) would be
    // rewritten too: only a venv's own directory is relocated.
    std::error_code ec;
    if (!fs::is_regular_file(venv / "pyvenv.cfg", ec))
        return fail(ErrorCode::usage,
                    fmt::format("{} is not a venv (it has no pyvenv.cfg): refusing to rewrite the scripts in its bin/",
                                venv.string()),
                    "name the venv's own directory, the one that holds pyvenv.cfg and bin/");
    if (old_prefix.empty()) {
        BS_TRY(old_prefix, detect_venv_origin(venv));
    }
    report.old_prefix = old_prefix;
    std::string from = old_prefix.lexically_normal().string();
    while (from.size() > 1 && from.back() == '/') from.pop_back();
    std::string to =
        new_prefix.empty() ? canonical_or_same(fs::absolute(venv)).string() : new_prefix.lexically_normal().string();
    while (to.size() > 1 && to.back() == '/') to.pop_back();
    if (from == to) return report;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(venv / "bin", ec)) files.push_back(e.path());
    if (ec) return fail(ErrorCode::io, fmt::format("cannot list {}: {}", (venv / "bin").string(), ec.message()));
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
        auto text = read_script_text(file);
        if (!text) continue;
        auto positions = prefix_positions(*text, from);
        if (positions.empty()) continue;
        std::string rewritten;
        size_t last = 0;
        for (size_t pos : positions) {
            rewritten.append(*text, last, pos - last);
            rewritten += to;
            last = pos + from.size();
        }
        rewritten.append(*text, last, std::string::npos);
        struct stat st {};
        if (::stat(file.c_str(), &st) != 0) return fail(ErrorCode::io, fmt::format("cannot stat {}", file.string()));
        BS_CHECK(core::write_file_atomic(file, rewritten, st.st_mode & 07777));
        report.rewritten.push_back(file);
    }
    return report;
}

}  // namespace bootstrap::pyenv
