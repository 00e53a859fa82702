#include "state/journal.hpp"

#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "state/layout.hpp"

namespace bootstrap::state {

namespace {

nlohmann::json write_inputs(const std::vector<core::KeyInput>& inputs) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& in : inputs) {
        if (in.list) out.push_back(nlohmann::json::array({in.field, in.values}));
        else out.push_back(nlohmann::json::array({in.field, in.values.empty() ? std::string() : in.values.front()}));
    }
    return out;
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

fs::path Journal::path_for(const fs::path& venv) { return state::Layout(venv).journal(); }

std::future<Result<Journal>> Journal::load_in_background(const fs::path& venv) {
    // A thread costs more than reading a small journal (a few steps, a few hundred packages).
    constexpr std::uintmax_t k_worth_a_thread = 256 << 10;
    std::error_code ec;
    const auto size = fs::file_size(path_for(venv), ec);
    if (!ec && size >= k_worth_a_thread) {
        try {
            return std::async(std::launch::async, [venv] { return load(venv); });
        } catch (const std::system_error&) {
            // No thread to be had: read when asked.
        }
    }
    return std::async(std::launch::deferred, [venv] { return load(venv); });
}

Status Journal::save(const fs::path& venv) const {
    nlohmann::json j;
    j["schema"] = k_journal_schema;
    j["recipe"] = recipe;
    if (!device.empty()) j["device"] = device;
    j["steps"] = nlohmann::json::object();
    for (const auto& [id, e] : steps) {
        nlohmann::json je{{"key", e.key},         {"status", to_string(e.status)},
                          {"run_id", e.run_id},   {"finished_at", e.finished_at},
                          {"seconds", e.seconds}, {"log", e.log}};
        if (!e.venv_state.empty()) je["venv_state"] = e.venv_state;
        if (!e.index_urls.empty()) je["index_urls"] = e.index_urls;
        if (!e.failure.empty()) je["failure"] = e.failure;
        if (!e.retry_can_help) je["permanent"] = true;
        if (!e.inputs.empty()) je["inputs"] = write_inputs(e.inputs);
        je["dists"] = nlohmann::json::object();
        for (const auto& [name, d] : e.dists)
            je["dists"][name] = {{"version", d.version},
                                 {"record_sha256", d.record_sha256},
                                 {"stamp", {d.stamp.size, d.stamp.mtime_ns, d.stamp.inode}}};
        j["steps"][id] = std::move(je);
    }
    return core::write_file_atomic(path_for(venv), j.dump(1) + "\n");
}

}  // namespace bootstrap::state
