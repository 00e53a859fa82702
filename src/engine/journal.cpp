#include "engine/journal.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"

namespace bootstrap::engine {

namespace {
constexpr int k_journal_schema = 1;

StepStatus status_from(const std::string& s) {
    if (s == "ok") return StepStatus::ok;
    if (s == "interrupted") return StepStatus::interrupted;
    return StepStatus::failed;
}
}  // namespace

const char* to_string(StepStatus s) {
    switch (s) {
        case StepStatus::ok: return "ok";
        case StepStatus::failed: return "failed";
        case StepStatus::interrupted: return "interrupted";
    }
    return "failed";
}

fs::path Journal::path_for(const fs::path& venv) { return venv / ".bootstrap" / "journal.json"; }

Result<Journal> Journal::load(const fs::path& venv) {
    const auto path = path_for(venv);
    auto text = core::read_file(path);
    if (!text) {
        if (text.error().code == ErrorCode::not_found) return Journal{};
        return tl::unexpected(text.error());
    }
    try {
        auto j = nlohmann::json::parse(*text);
        if (j.value("schema", 0) != k_journal_schema)
            return fail(ErrorCode::io, fmt::format("{}: unsupported journal schema {} (expected {})",
                                                   path.string(), j.value("schema", 0), k_journal_schema));
        Journal journal;
        journal.recipe = j.value("recipe", "");
        for (const auto& [id, e] : j.at("steps").items()) {
            JournalEntry entry;
            entry.key = e.at("key").get<std::string>();
            entry.status = status_from(e.at("status").get<std::string>());
            entry.run_id = e.value("run_id", "");
            entry.finished_at = e.value("finished_at", "");
            entry.seconds = e.value("seconds", 0.0);
            entry.log = e.value("log", "");
            entry.venv_state = e.value("venv_state", "");
            if (e.contains("index_urls")) entry.index_urls = e.at("index_urls").get<std::vector<std::string>>();
            if (e.contains("dists"))
                for (const auto& [name, d] : e.at("dists").items()) {
                    DistRecord rec;
                    rec.version = d.at("version").get<std::string>();
                    rec.record_sha256 = d.at("record_sha256").get<std::string>();
                    rec.stamp.size = d.at("stamp").at(0).get<std::uint64_t>();
                    rec.stamp.mtime_ns = d.at("stamp").at(1).get<std::int64_t>();
                    rec.stamp.inode = d.at("stamp").at(2).get<std::uint64_t>();
                    entry.dists[name] = rec;
                }
            journal.steps[id] = std::move(entry);
        }
        return journal;
    } catch (const nlohmann::json::exception& e) {
        return fail(ErrorCode::io,
                    fmt::format("{} is corrupt ({}); remove it to start over (every step then re-checks)",
                                path.string(), e.what()));
    }
}

Status Journal::save(const fs::path& venv) const {
    nlohmann::json j;
    j["schema"] = k_journal_schema;
    j["recipe"] = recipe;
    j["steps"] = nlohmann::json::object();
    for (const auto& [id, e] : steps) {
        nlohmann::json je{{"key", e.key},           {"status", to_string(e.status)},
                          {"run_id", e.run_id},     {"finished_at", e.finished_at},
                          {"seconds", e.seconds},   {"log", e.log}};
        if (!e.venv_state.empty()) je["venv_state"] = e.venv_state;
        if (!e.index_urls.empty()) je["index_urls"] = e.index_urls;
        je["dists"] = nlohmann::json::object();
        for (const auto& [name, d] : e.dists)
            je["dists"][name] = {{"version", d.version},
                                 {"record_sha256", d.record_sha256},
                                 {"stamp", {d.stamp.size, d.stamp.mtime_ns, d.stamp.inode}}};
        j["steps"][id] = std::move(je);
    }
    return core::write_file_atomic(path_for(venv), j.dump(1) + "\n");
}

}  // namespace bootstrap::engine
