#include "manifest/history.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <limits>

#include <fmt/format.h>

#include "core/fd.hpp"
#include "core/fs.hpp"
#include "core/strings.hpp"
#include "manifest/diff.hpp"
#include "state/layout.hpp"

namespace bootstrap::manifest {

namespace {

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// Digits as a number; nullopt when empty, not all digits, or past int64.
std::optional<std::int64_t> parse_number(std::string_view digits) {
    if (!all_digits(digits)) return std::nullopt;
    return core::parse_int<std::int64_t>(digits);
}

/// "0007-after-run.json" → {7, "after-run"}; nullopt for anything else (temp files, claims).
/// Any number of digits: the lister must see every number the writer may have used.
Result<std::optional<HistoryEntry>> parse_entry_name(const fs::path& file) {
    std::string name = file.filename().string();
    if (name.size() < 6 || name.substr(name.size() - 5) != ".json") return std::nullopt;
    std::string_view stem = std::string_view(name).substr(0, name.size() - 5);
    size_t dash = stem.find('-');
    std::string_view digits = stem.substr(0, dash);
    if (!all_digits(digits)) return std::nullopt;
    auto number = parse_number(digits);
    if (!number)
        return fail(ErrorCode::io, fmt::format("history entry {} has a number too large to use; rename or "
                                               "remove it (bootstrap numbers entries up to {})",
                                               file.string(), k_max_history_number));
    HistoryEntry e;
    e.number = *number;
    e.file = file;
    e.label = dash == std::string_view::npos ? "" : std::string(stem.substr(dash + 1));
    return e;
}

std::string describe_entries(const std::vector<HistoryEntry>& entries) {
    if (entries.empty()) return "the history is empty";
    if (entries.size() == 1) return fmt::format("the history holds entry {}", entries.front().number);
    return fmt::format("the history holds entries {} to {}", entries.front().number, entries.back().number);
}

std::string iso_utc(std::time_t t) {
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string file_time(const fs::path& file) {
    struct stat st {};
    return ::stat(file.c_str(), &st) == 0 ? iso_utc(st.st_mtim.tv_sec) : "";
}

/// `.NNNN.claim` in the history dir, created exclusively; false when another writer has it.
Result<bool> claim(const fs::path& claim_file) {
    core::Fd fd(::open(claim_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (fd) return true;
    if (errno == EEXIST) return false;
    return fail(ErrorCode::io, fmt::format("cannot create {}: {}", claim_file.string(), std::strerror(errno)));
}

}  // namespace

fs::path history_dir(const fs::path& venv) { return state::Layout(venv).history(); }

std::string sanitize_label(std::string_view label) {
    if (label.empty()) return "snapshot";
    std::string out(label);
    for (char& c : out) {
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                  c == '-';
        if (!ok) c = '-';
    }
    if (out.front() == '.') out.front() = '-';  // no hidden files
    return out;
}

Result<std::vector<HistoryEntry>> list_history(const fs::path& venv) {
    std::vector<HistoryEntry> entries;
    const fs::path dir = history_dir(venv);
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) {
        if (ec == std::errc::no_such_file_or_directory) return entries;
        return fail(ErrorCode::io, fmt::format("cannot list {}: {}", dir.string(), ec.message()));
    }
    for (const auto& item : it) {
        BS_TRY(auto e, parse_entry_name(item.path()));
        if (e) entries.push_back(std::move(*e));
    }
    std::sort(entries.begin(), entries.end(), [](const HistoryEntry& a, const HistoryEntry& b) {
        return a.number != b.number ? a.number < b.number : a.file < b.file;
    });
    return entries;
}

Result<HistoryEntry> append_history(const fs::path& venv, const Manifest& m) {
    const fs::path dir = history_dir(venv);
    BS_CHECK(core::create_directories(dir));
    BS_TRY(auto entries, list_history(venv));
    std::int64_t number = entries.empty() ? 1 : entries.back().number + 1;
    const std::string label = sanitize_label(m.label);
    const std::string text = to_json(m);
    for (;; ++number) {
        if (number > k_max_history_number)
            return fail(ErrorCode::io,
                        fmt::format("cannot add to the history in {}: its newest entry {} is "
                                    "numbered at or past the highest number bootstrap writes ({})",
                                    dir.string(), entries.empty() ? "?" : entries.back().file.filename().string(),
                                    k_max_history_number),
                        "move the entries numbered that high out of the history directory");
        const fs::path claim_file = dir / fmt::format(".{:04d}.claim", number);
        BS_TRY(bool mine, claim(claim_file));
        if (!mine) continue;
        // An entry may have been published under this number after our listing.
        BS_TRY(auto now, list_history(venv));
        bool taken = std::any_of(now.begin(), now.end(), [&](const HistoryEntry& e) { return e.number == number; });
        if (taken) {
            ::unlink(claim_file.c_str());
            continue;
        }
        HistoryEntry entry{number, dir / fmt::format("{:04d}-{}.json", number, label), label};
        bool exists = false;
        auto saved = core::write_file_exclusive(entry.file, text, &exists);
        ::unlink(claim_file.c_str());
        if (!saved && exists) continue;  // never overwrite an entry, whoever wrote it
        if (!saved) return tl::unexpected(saved.error());
        return entry;
    }
}

Result<fs::path> resolve_reference(const fs::path& venv, const std::string& ref) {
    std::optional<std::int64_t> back;  // how many entries before the newest
    const bool by_number = all_digits(ref);
    const auto back_count = core::after_prefix(ref, "last~");  // "last~N"
    const bool by_back = back_count && all_digits(*back_count);
    if (ref == "last") back = 0;
    if (by_back)
        // Too many digits for 64 bits: more than any history holds, like any too-large N.
        back = parse_number(*back_count).value_or(std::numeric_limits<std::int64_t>::max());
    if (!by_number && !back) {
        std::error_code ec;
        if (fs::is_regular_file(ref, ec)) return fs::path(ref);
        return fail(ErrorCode::usage, fmt::format("{}: no such manifest file, and not a history reference (a "
                                                  "number, `last` or `last~N`)",
                                                  ref));
    }
    if (venv.empty())
        return fail(ErrorCode::usage, fmt::format("history reference `{}` needs a venv: pass --venv DIR or activate "
                                                  "it (VIRTUAL_ENV)",
                                                  ref));
    BS_TRY(auto entries, list_history(venv));
    if (by_number) {
        auto number = parse_number(ref);
        for (const auto& e : entries)
            if (number && e.number == *number) return e.file;
        return fail(ErrorCode::usage,
                    fmt::format("no history entry {} in {}: {}", number ? std::to_string(*number) : ref,
                                history_dir(venv).string(), describe_entries(entries)));
    }
    if (static_cast<size_t>(*back) >= entries.size())
        return fail(ErrorCode::usage, fmt::format("no history entry `{}` in {}: {}", ref, history_dir(venv).string(),
                                                  describe_entries(entries)));
    return entries[entries.size() - 1 - static_cast<size_t>(*back)].file;
}

Result<Manifest> load_reference(const fs::path& venv, const std::string& ref) {
    BS_TRY(fs::path file, resolve_reference(venv, ref));
    return load_manifest(file);
}

Result<std::vector<HistoryRow>> describe_history(const fs::path& venv) {
    BS_TRY(auto entries, list_history(venv));
    std::vector<HistoryRow> rows;
    std::optional<Manifest> previous;
    for (const auto& e : entries) {
        HistoryRow row;
        row.entry = e;
        auto m = load_manifest(e.file);
        if (!m) {
            row.error = m.error().message;
            row.time = file_time(e.file);
            rows.push_back(std::move(row));
            continue;
        }
        row.time = m->run && !m->run->time.empty() ? m->run->time : file_time(e.file);
        row.package_count = m->packages.size();
        row.recipe = m->recipe_name;
        row.run = m->run;
        if (previous) row.changes = diff(*previous, *m).summary();
        previous = std::move(*m);
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace bootstrap::manifest
