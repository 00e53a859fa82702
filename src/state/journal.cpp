#include "state/journal.hpp"

#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/json_fields.hpp"
#include "state/layout.hpp"

namespace bootstrap::state {

namespace {
constexpr int k_journal_schema = 1;

/// [["field", "value"], ["field", ["v1", "v2"]], ...]
std::vector<core::KeyInput> read_inputs(const nlohmann::json& j, const core::JsonFields& at) {
    std::vector<core::KeyInput> out;
    if (!j.is_array()) at.invalid("inputs", "expected an array");
    for (const auto& item : j) {
        if (!item.is_array() || item.size() != 2 || !item[0].is_string())
            at.invalid("inputs", "expected [field, value]");
        core::KeyInput in{item[0].get<std::string>(), {}, item[1].is_array()};
        if (item[1].is_string()) {
            in.values.push_back(item[1].get<std::string>());
        } else if (item[1].is_array()) {
            for (const auto& v : item[1]) {
                if (!v.is_string()) at.invalid("inputs", "expected strings");
                in.values.push_back(v.get<std::string>());
            }
        } else {
            at.invalid("inputs", "expected a string or a list of strings");
        }
        out.push_back(std::move(in));
    }
    return out;
}

nlohmann::json write_inputs(const std::vector<core::KeyInput>& inputs) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& in : inputs) {
        if (in.list) out.push_back(nlohmann::json::array({in.field, in.values}));
        else out.push_back(nlohmann::json::array({in.field, in.values.empty() ? std::string() : in.values.front()}));
    }
    return out;
}

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

fs::path Journal::path_for(const fs::path& venv) { return state::Layout(venv).journal(); }

Result<Journal> Journal::load(const fs::path& venv) {
    const auto path = path_for(venv);
    auto text = core::read_file(path);
    if (!text) {
        if (text.error().code == ErrorCode::not_found) return Journal{};
        return tl::unexpected(text.error());
    }
    auto corrupt = [&](const std::string& why) -> Result<Journal> {
        return fail(
            ErrorCode::io,
            fmt::format("{} is corrupt ({}); remove it to start over (every step then re-checks)", path.string(), why));
    };
    return core::read_json(
        *text,
        [&](const core::JsonFields& j) -> Result<Journal> {
            const auto schema = j.integer("schema", 0);
            if (schema != k_journal_schema)
                return fail(ErrorCode::io, fmt::format("{}: unsupported journal schema {} (expected {})", path.string(),
                                                       schema, k_journal_schema));
            if (!j.object("steps")) j.invalid("steps", "missing");
            Journal journal;
            journal.recipe = j.str("recipe");
            if (j.object("device")) journal.device = j.string_map("device");
            for (const auto& [id, e] : j.objects("steps")) {
                JournalEntry entry;
                if (!e.has("key") || !e.has("status")) e.invalid({}, "needs a key and a status");
                entry.key = e.str("key");
                entry.status = status_from(e.str("status"));
                entry.run_id = e.str("run_id");
                entry.finished_at = e.str("finished_at");
                entry.seconds = e.number("seconds");
                entry.log = e.str("log");
                entry.venv_state = e.str("venv_state");
                entry.index_urls = e.strings("index_urls");
                entry.failure = e.str("failure");
                entry.retry_can_help = !e.boolean("permanent", false);
                if (const nlohmann::json* inputs = e.find("inputs")) entry.inputs = read_inputs(*inputs, e);
                for (const auto& [name, d] : e.objects("dists")) {
                    DistRecord rec;
                    rec.version = d.str("version");
                    rec.record_sha256 = d.str("record_sha256");
                    const nlohmann::json* stamp = d.find("stamp");
                    if (!stamp || !stamp->is_array() || stamp->size() != 3 || !(*stamp)[0].is_number_unsigned() ||
                        !(*stamp)[1].is_number_integer() || !(*stamp)[2].is_number_unsigned())
                        d.invalid("stamp", "expected [size, mtime_ns, inode]");
                    rec.stamp.size = (*stamp)[0].get<std::uint64_t>();
                    rec.stamp.mtime_ns = (*stamp)[1].get<std::int64_t>();
                    rec.stamp.inode = (*stamp)[2].get<std::uint64_t>();
                    entry.dists[name] = rec;
                }
                journal.steps[id] = std::move(entry);
            }
            return journal;
        },
        corrupt);
}

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
