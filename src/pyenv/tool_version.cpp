#include "pyenv/tool_version.hpp"

#include <sys/stat.h>

#include <chrono>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/json_fields.hpp"
#include "core/strings.hpp"
#include "exec/process.hpp"
#include "pyenv/installer.hpp"

namespace bootstrap::pyenv {

namespace {

// {"version": 1, "tools": {"/usr/bin/uv": {"stamp": "dev ino size mtime", "version": "uv 0.9.5"}}}
constexpr int k_cache_version = 1;
// More tools than any machine runs: past this the cache starts over (it is only a cache).
constexpr size_t k_max_entries = 512;

std::string stat_stamp(const struct stat& st) {
    return fmt::format("{} {} {} {}", st.st_dev, st.st_ino, st.st_size,
                       st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
}

}  // namespace

std::string version_line(const std::string& output) {
    std::string first;
    for (const auto& raw : core::split(output, '\n')) {
        std::string line(core::trim(raw));
        if (line.empty()) continue;
        if (line.find("release ") != std::string::npos) return line;
        if (first.empty()) first = line;
    }
    return first;
}

ToolVersions::ToolVersions(fs::path cache_file, bool write) : m_file(std::move(cache_file)), m_write(write) {}

void ToolVersions::load() {
    if (m_loaded) return;
    m_loaded = true;
    if (m_file.empty()) return;
    auto text = core::read_file(m_file);
    if (!text) return;
    using Entries = std::map<std::string, Entry>;
    auto entries = core::read_json(
        *text,
        [&](const core::JsonFields& j) -> Result<Entries> {
            if (j.integer("version") != k_cache_version) return fail(ErrorCode::not_found, "stale");
            Entries out;
            for (const auto& [path, e] : j.objects("tools")) out[path] = Entry{e.str("stamp"), e.str("version")};
            return out;
        },
        [](const std::string& why) -> Result<Entries> { return fail(ErrorCode::io, why); });
    if (entries) m_entries = std::move(*entries);
}

Result<std::string> ToolVersions::version(const std::string& program) {
    // Asked by the name given (a ccache or wrapper link answers for what it stands for), stamped
    // by the file it reaches.
    struct stat st {};
    if (program.empty() || program.front() != '/' || ::stat(program.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        return program + " (not found)";
    const std::string stamp = stat_stamp(st);
    load();
    if (auto it = m_entries.find(program); it != m_entries.end() && it->second.stamp == stamp)
        return it->second.version;
    exec::ProcessSpec spec;
    spec.argv = {program, "--version"};
    spec.env = {{"PATH", "/usr/bin:/bin"}, {"LC_ALL", "C"}};
    spec.timeout = std::chrono::seconds(20);
    spec.capture = true;
    auto ran = exec::run_process(spec);
    if (!ran && ran.error().code == ErrorCode::interrupted) return tl::unexpected(ran.error());
    if (ran && ran->interrupted)
        return fail(ErrorCode::interrupted, fmt::format("interrupted while asking {} for its version", program));
    std::string answer = ran && ran->ok() ? version_line(ran->output) : std::string();
    if (answer.size() > 200) answer.resize(200);
    if (answer.empty()) answer = file_identity(program);  // it cannot say: its file stands for it
    if (m_entries.size() >= k_max_entries) m_entries.clear();
    m_entries[program] = Entry{stamp, answer};
    m_dirty = true;
    return answer;
}

void ToolVersions::save() {
    if (!m_dirty || !m_write || m_file.empty()) return;
    m_dirty = false;
    nlohmann::json tools = nlohmann::json::object();
    for (const auto& [path, e] : m_entries) tools[path] = {{"stamp", e.stamp}, {"version", e.version}};
    nlohmann::json j{{"version", k_cache_version}, {"tools", tools}};
    (void)core::write_file_atomic(m_file, j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", 0644,
                                  core::Durability::unsynced);
}

}  // namespace bootstrap::pyenv
