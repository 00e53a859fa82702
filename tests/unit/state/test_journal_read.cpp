// Journal::load reads without a DOM (SAX). The reader it replaced, which built nlohmann's tree
// and read it through core::JsonFields, is kept here as the oracle: on a whole journal and on
// thousands of damaged ones (every value replaced by every JSON type, removed, given twice,
// every prefix of the text) both give the same journal or the same error message.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../json_damage.hpp"

#include "core/fs.hpp"
#include "core/json_fields.hpp"
#include "state/journal.hpp"

using namespace bootstrap;
using namespace bootstrap::state;
using nlohmann::json;

namespace {

// ---- the oracle: the tree reader as it was ----------------------------------------------------

std::vector<core::KeyInput> oracle_inputs(const json& j, const core::JsonFields& at) {
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

StepStatus oracle_status(const std::string& s) {
    if (s == "ok") return StepStatus::ok;
    if (s == "interrupted") return StepStatus::interrupted;
    return StepStatus::failed;
}

Result<Journal> oracle(const std::string& text, const std::string& path) {
    auto corrupt = [&](const std::string& why) -> Result<Journal> {
        return fail(ErrorCode::io,
                    fmt::format("{} is corrupt ({}); remove it to start over (every step then re-checks)", path, why));
    };
    return core::read_json(
        text,
        [&](const core::JsonFields& j) -> Result<Journal> {
            const auto schema = j.integer("schema", 0);
            if (schema != k_journal_schema)
                return fail(ErrorCode::io, fmt::format("{}: unsupported journal schema {} (expected {})", path, schema,
                                                       k_journal_schema));
            if (!j.object("steps")) j.invalid("steps", "missing");
            Journal journal;
            journal.recipe = j.str("recipe");
            if (j.object("device")) journal.device = j.string_map("device");
            for (const auto& [id, e] : j.objects("steps")) {
                JournalEntry entry;
                if (!e.has("key") || !e.has("status")) e.invalid({}, "needs a key and a status");
                entry.key = e.str("key");
                entry.status = oracle_status(e.str("status"));
                entry.run_id = e.str("run_id");
                entry.finished_at = e.str("finished_at");
                entry.seconds = e.number("seconds");
                entry.log = e.str("log");
                entry.venv_state = e.str("venv_state");
                entry.index_urls = e.strings("index_urls");
                entry.failure = e.str("failure");
                entry.retry_can_help = !e.boolean("permanent", false);
                if (const json* inputs = e.find("inputs")) entry.inputs = oracle_inputs(*inputs, e);
                for (const auto& [name, d] : e.objects("dists")) {
                    DistRecord rec;
                    rec.version = d.str("version");
                    rec.record_sha256 = d.str("record_sha256");
                    const json* stamp = d.find("stamp");
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

// ---- documents ---------------------------------------------------------------------------------

const json& base_document() {
    static const json doc = json::parse(R"({
      "device": {"cuda_archs": "9.0", "gpus": "1"},
      "recipe": "h200",
      "schema": 1,
      "steps": {
        "deps": {"dists": {"a": {"record_sha256": "r1", "stamp": [10, -5, 7], "version": "1.0"},
                           "b": {"record_sha256": "r2", "stamp": [11, 1796311875528560896, 8], "version": "2"}},
                 "finished_at": "2026-12-01T00:00:00Z", "index_urls": ["https://x/simple", "https://y/simple"],
                 "inputs": [["argv", ["uv", "pip"]], ["python", "3.11.7"], ["empty", []]],
                 "key": "k1", "log": "logs/deps.log", "run_id": "r", "seconds": 1.5, "status": "ok",
                 "venv_state": "vs"},
        "apex": {"failure": "no nvcc", "key": "k2", "permanent": true, "seconds": 3, "status": "failed",
                 "dists": {}},
        "venv": {"key": "k3", "status": "interrupted", "dists": null, "zz-newer": [1, {"x": null}]}
      },
      "zz-newer": {"a": 1}
    })");
    return doc;
}

class Venv {
public:
    Venv() : m_dir("bs-journal-read") { fs::create_directories(Journal::path_for(m_dir.path()).parent_path()); }
    const fs::path& path() const { return m_dir.path(); }
    std::string journal() const { return Journal::path_for(m_dir.path()).string(); }

private:
    core::TempDir m_dir;
};

bool same(const Venv& venv, const std::string& text) {
    INFO(text);
    REQUIRE(core::write_file_atomic(venv.journal(), text));
    auto ours = Journal::load(venv.path());
    auto theirs = oracle(text, venv.journal());
    REQUIRE(ours.has_value() == theirs.has_value());
    if (!ours) {
        CHECK(ours.error().message == theirs.error().message);
        return false;
    }
    CHECK(ours->recipe == theirs->recipe);
    CHECK(ours->device == theirs->device);
    REQUIRE(ours->steps.size() == theirs->steps.size());
    for (const auto& [id, a] : ours->steps) {
        INFO(id);
        const auto& b = theirs->steps.at(id);
        CHECK(a.key == b.key);
        CHECK(a.status == b.status);
        CHECK(a.run_id == b.run_id);
        CHECK(a.finished_at == b.finished_at);
        CHECK(a.seconds == b.seconds);
        CHECK(a.log == b.log);
        CHECK(a.venv_state == b.venv_state);
        CHECK(a.index_urls == b.index_urls);
        CHECK(a.failure == b.failure);
        CHECK(a.retry_can_help == b.retry_can_help);
        REQUIRE(a.inputs.size() == b.inputs.size());
        for (std::size_t i = 0; i < a.inputs.size(); ++i) {
            CHECK(a.inputs[i].field == b.inputs[i].field);
            CHECK(a.inputs[i].values == b.inputs[i].values);
            CHECK(a.inputs[i].list == b.inputs[i].list);
        }
        REQUIRE(a.dists.size() == b.dists.size());
        for (const auto& [name, d] : a.dists) {
            const auto& e = b.dists.at(name);
            CHECK(d.version == e.version);
            CHECK(d.record_sha256 == e.record_sha256);
            CHECK(d.stamp.size == e.stamp.size);
            CHECK(d.stamp.mtime_ns == e.stamp.mtime_ns);
            CHECK(d.stamp.inode == e.stamp.inode);
        }
    }
    return true;
}

}  // namespace

TEST_CASE("the SAX reader reads a whole journal as the tree reader did, and what save writes") {
    Venv venv;
    CHECK(same(venv, base_document().dump()));
    CHECK(same(venv, base_document().dump(1)));
    auto j = Journal::load(venv.path());
    REQUIRE(j);
    CHECK(j->steps.at("deps").dists.at("b").stamp.mtime_ns == 1796311875528560896);
    CHECK(j->steps.at("deps").inputs.size() == 3);
    CHECK(j->steps.at("deps").inputs[0].list);
    CHECK_FALSE(j->steps.at("apex").retry_can_help);
    REQUIRE(j->save(venv.path()));
    auto back = Journal::load(venv.path());
    REQUIRE(back);
    CHECK(back->steps.at("deps").inputs[1].values == std::vector<std::string>{"3.11.7"});
    CHECK(back->device.at("cuda_archs") == "9.0");
}

TEST_CASE("every journal value replaced by each JSON type, or removed: the same journal or the same error") {
    Venv venv;
    const auto all = bs_test::json_pointers(base_document());
    REQUIRE(all.size() > 50);
    std::size_t errors = 0;
    for (const auto& ptr : all) {
        for (const auto& value : bs_test::json_replacements()) {
            json doc = base_document();
            doc[ptr] = value;
            errors += same(venv, doc.dump()) ? 0 : 1;
        }
        if (ptr.empty()) continue;
        json removed = bs_test::json_without(base_document(), ptr);
        same(venv, removed.dump());
    }
    CHECK(errors > 100);  // the damage was seen, not only tolerated
}

TEST_CASE("a journal key given twice counts once, with its last value") {
    Venv venv;
    const auto all = bs_test::json_pointers(base_document());
    for (const auto& ptr : all) {
        if (ptr.empty() || !base_document()[ptr.parent_pointer()].is_object()) continue;
        for (const auto& value : bs_test::json_replacements()) {
            same(venv, bs_test::json_dump_twice(base_document(), ptr, value, true));
            same(venv, bs_test::json_dump_twice(base_document(), ptr, value, false));
        }
    }
}

TEST_CASE("every prefix of a journal is the same syntax error") {
    Venv venv;
    const std::string text = base_document().dump();
    for (std::size_t n = 0; n < text.size(); n += 3) same(venv, text.substr(0, n));
    same(venv, text + "x");
    same(venv, "[" + text + "]");
}

TEST_CASE("two errors in a journal at once: the one the tree reader met first") {
    Venv venv;
    json doc = base_document();
    doc["zz-newer"] = 1;
    doc["recipe"] = 1;
    doc["device"]["gpus"] = 1;
    doc["steps"]["venv"] = 1;
    doc["steps"]["deps"].erase("status");
    doc["steps"]["deps"]["run_id"] = 1;
    doc["steps"]["deps"]["dists"]["a"]["stamp"] = json::array({1, 2});
    doc["steps"]["deps"]["dists"]["b"] = 1;
    doc["steps"]["deps"]["inputs"][0][1] = json::array({1});
    doc["steps"]["deps"]["inputs"][1] = json::array({1, "x"});
    doc["steps"]["apex"]["seconds"] = "3";
    std::size_t fixed = 0;
    for (const char* fix : {"recipe", "device", "venv", "apex", "deps-status", "run_id", "input0", "input1", "b", ""}) {
        CHECK_FALSE(same(venv, doc.dump()));
        std::string f = fix;
        if (f == "recipe") doc["recipe"] = "r";
        if (f == "device") doc["device"]["gpus"] = "1";
        if (f == "venv") doc["steps"]["venv"] = json::object({{"key", "k"}, {"status", "ok"}});
        if (f == "deps-status") doc["steps"]["deps"]["status"] = "ok";
        if (f == "apex") doc["steps"]["apex"]["seconds"] = 3;
        if (f == "run_id") doc["steps"]["deps"]["run_id"] = "r";
        if (f == "input0") doc["steps"]["deps"]["inputs"][0][1] = "v";
        if (f == "input1") doc["steps"]["deps"]["inputs"][1] = json::array({"f", "x"});
        if (f == "b") doc["steps"]["deps"]["dists"]["b"] = json::object({{"stamp", {1, 2, 3}}});
        fixed += f.empty() ? 0 : 1;
    }
    doc["steps"]["deps"]["dists"]["a"]["stamp"] = json::array({1, 2, 3});
    CHECK(same(venv, doc.dump()));
    CHECK(fixed == 9);
}
