// Reading the journal without a DOM: nlohmann's parser feeds a SAX handler that writes straight
// into the Journal. A bootstrap-managed venv of 3,000 packages has a journal of 700 KB (each
// owned distribution's version, RECORD digest and stamp); building nlohmann's tree for it was a
// third of a snapshot's CPU.
//
// The errors are the ones the tree reader gave (tests/unit/state/test_journal_read.cpp keeps it
// as the oracle): a syntax error first, then the top is not an object, the schema, then the
// first bad field in the order the tree reader looked at them (steps, recipe, device, every
// step's object, then each step by id: key and status, their fields, inputs, dists). A key
// given twice counts once, its last value, as in the tree.

#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/json_sax.hpp"
#include "state/journal.hpp"

namespace bootstrap::state {

namespace {

using Kind = core::JsonKind;

enum class Ctx : std::uint8_t {
    skip,
    top,
    device,
    steps,
    step,
    index_urls,
    inputs,
    input,         // one [field, value]
    input_values,  // its value's list
    dists,
    dist,
    stamp,
};

/// The tree reader's order of reading: (section, step id, field, dist name, dist field).
using ErrorRank = std::tuple<int, std::string, int, std::string, int>;

// Sections, in Journal::load's order of reading.
constexpr int k_schema = 1, k_steps = 2, k_recipe = 3, k_device = 4, k_step_object = 5, k_step = 6;
// A step's fields, in the same order.
constexpr int k_key_and_status = 0, k_seconds = 5, k_index_urls = 8, k_permanent = 10, k_inputs = 11,
              k_dists_object = 12, k_dist_object = 13, k_dist = 14;
// A distribution's.
constexpr int k_dist_version = 1, k_dist_record = 2, k_dist_stamp = 3;

struct TextField {
    std::string_view key;
    int rank;
    std::string JournalEntry::*member;
};
constexpr TextField k_step_text[] = {{"key", 1, &JournalEntry::key},
                                     {"run_id", 3, &JournalEntry::run_id},
                                     {"finished_at", 4, &JournalEntry::finished_at},
                                     {"log", 6, &JournalEntry::log},
                                     {"venv_state", 7, &JournalEntry::venv_state},
                                     {"failure", 9, &JournalEntry::failure}};
constexpr int k_status = 2;

class JournalSax : public core::JsonSaxReader<JournalSax, Ctx> {
public:
    explicit JournalSax(Journal& j) : JsonSaxReader(Ctx::top), m_j(j) {}

    /// After the parse: why the file is corrupt ("" when it is whole). A schema other than ours
    /// is put in `unsupported` instead (its error is worded apart).
    std::string finish(std::optional<std::int64_t>& unsupported) {
        if (!syntax_error().empty()) return syntax_error();
        if (not_object()) return "expected a JSON object";
        if (!m_errors.empty() && std::get<0>(m_errors.first().first) == k_schema) return m_errors.first().second;
        if (m_schema != k_journal_schema) {
            unsupported = m_schema;
            return {};
        }
        if (!m_steps_seen) bad({k_steps, {}, 0, {}, 0}, "steps: missing");
        if (!m_errors.empty()) return m_errors.first().second;
        return {};
    }

    // ---- what JsonSaxReader calls ----
    Ctx on_value(Frame& f, Kind k) {
        switch (f.ctx) {
            case Ctx::skip: break;  // never a frame's: JsonSaxReader counts those
            case Ctx::top: return top_field(f.key, k);
            case Ctx::device:
                m_errors.erase({k_device, {}, 1, f.key, 0});
                if (k == Kind::string) {
                    m_j.device.insert_or_assign(f.key, str());
                } else {
                    m_j.device.erase(f.key);
                    bad({k_device, {}, 1, f.key, 0}, fmt::format("device.{}: expected a string", f.key));
                }
                break;
            case Ctx::steps: return step_start(f.key, k);
            case Ctx::step: return step_field(f.key, k);
            case Ctx::index_urls:
                if (k == Kind::string) {
                    m_step->index_urls.push_back(str());
                } else {
                    step_bad(k_index_urls, "index_urls", "expected a list of strings");
                }
                break;
            case Ctx::inputs: return input_start(k);
            case Ctx::input: return input_item(f, k);
            case Ctx::input_values:
                if (k == Kind::string) {
                    m_inputs.back().values.push_back(str());
                } else if (m_input_value_error.empty()) {
                    m_input_value_error = "expected strings";
                }
                break;
            case Ctx::dists: return dist_start(f.key, k);
            case Ctx::dist: return dist_field(f.key, k);
            case Ctx::stamp: stamp_item(f, k); break;
        }
        return Ctx::skip;
    }
    void on_end(Frame& f) {
        switch (f.ctx) {
            case Ctx::step:
                if (!m_has_key || !m_has_status)
                    bad({k_step, m_step_id, k_key_and_status, {}, 0},
                        fmt::format("steps.{}: needs a key and a status", m_step_id));
                break;
            case Ctx::input: input_end(f); break;
            case Ctx::inputs:
                if (!has_inputs_error()) m_step->inputs = std::move(m_inputs);
                break;
            case Ctx::stamp:
                if (!m_stamp_ok || f.count != 3) stamp_bad();
                break;
            case Ctx::dist:
                if (!m_dist_stamp_seen) stamp_bad();
                break;
            default: break;
        }
    }

private:
    Journal& m_j;
    // The step, distribution and input being read.
    std::string m_step_id;
    JournalEntry* m_step = nullptr;
    bool m_has_key = false, m_has_status = false;
    std::string m_dist_name;
    DistRecord* m_dist = nullptr;
    bool m_stamp_ok = false;
    std::vector<core::KeyInput> m_inputs;
    bool m_input_field = false;  // its first item was a string
    std::string m_input_value_error;

    std::int64_t m_schema = 0;
    bool m_steps_seen = false;
    core::JsonFirstError<ErrorRank> m_errors;

    void bad(ErrorRank rank, std::string message) { m_errors.add(std::move(rank), std::move(message)); }
    /// A key given again: what its earlier value got wrong no longer counts. Forgets the
    /// errors from `from` on while `within` holds.
    template <class Within>
    void forget(const ErrorRank& from, Within within) {
        m_errors.forget(from, within);
    }
    void forget_section(int section) {
        forget({section, {}, INT_MIN, {}, INT_MIN}, [&](const ErrorRank& r) { return std::get<0>(r) == section; });
    }
    void forget_step_field(int first, int last) {
        forget({k_step, m_step_id, first, {}, INT_MIN}, [&](const ErrorRank& r) {
            return std::get<0>(r) == k_step && std::get<1>(r) == m_step_id && std::get<2>(r) <= last;
        });
    }
    void step_bad(int field, std::string_view key, std::string_view what) {
        bad({k_step, m_step_id, field, {}, 0}, fmt::format("steps.{}.{}: {}", m_step_id, key, what));
    }

    Ctx top_field(const std::string& key, Kind k) {
        if (key == "schema") {
            forget_section(k_schema);
            if (is_integer(k)) {
                if (k == Kind::unsigned_integer && unsigned_integer() > static_cast<std::uint64_t>(INT64_MAX))
                    bad({k_schema, {}, 0, {}, 0}, "schema: integer out of range");
                m_schema = integer();
            } else {
                bad({k_schema, {}, 0, {}, 0}, "schema: expected an integer");
            }
            return Ctx::skip;
        }
        if (key == "steps") {
            forget_section(k_steps);
            forget_section(k_step_object);
            forget_section(k_step);
            m_j.steps.clear();
            m_steps_seen = k != Kind::null;
            if (k == Kind::object) return Ctx::steps;
            if (k != Kind::null) bad({k_steps, {}, 0, {}, 0}, "steps: expected an object");
            return Ctx::skip;
        }
        if (key == "recipe") {
            forget_section(k_recipe);
            if (k == Kind::string) {
                m_j.recipe.assign(str());
            } else {
                bad({k_recipe, {}, 0, {}, 0}, "recipe: expected a string");
            }
            return Ctx::skip;
        }
        if (key == "device") {
            forget_section(k_device);
            m_j.device.clear();
            if (k == Kind::object) return Ctx::device;
            if (k != Kind::null) bad({k_device, {}, 0, {}, 0}, "device: expected an object");
            return Ctx::skip;
        }
        return Ctx::skip;  // a newer bootstrap's field
    }

    Ctx step_start(const std::string& id, Kind k) {
        forget({k_step_object, id, INT_MIN, {}, INT_MIN},
               [&](const ErrorRank& r) { return std::get<0>(r) == k_step_object && std::get<1>(r) == id; });
        forget({k_step, id, INT_MIN, {}, INT_MIN},
               [&](const ErrorRank& r) { return std::get<0>(r) == k_step && std::get<1>(r) == id; });
        if (k != Kind::object) {
            m_j.steps.erase(id);
            // The tree reader took every step's object before reading any of them.
            bad({k_step_object, id, 0, {}, 0}, fmt::format("steps.{}: expected an object", id));
            return Ctx::skip;
        }
        auto it = m_j.steps.try_emplace(m_j.steps.end(), id);
        it->second = JournalEntry{};
        m_step = &it->second;
        m_step_id = id;
        m_has_key = m_has_status = false;
        return Ctx::step;
    }

    Ctx step_field(const std::string& key, Kind k) {
        JournalEntry& e = *m_step;
        if (key == "status") {
            m_has_status = true;
            forget_step_field(k_status, k_status);
            if (k == Kind::string) {
                e.status = status_from(str());
            } else {
                step_bad(k_status, key, "expected a string");
            }
            return Ctx::skip;
        }
        for (const auto& f : k_step_text) {
            if (f.key != key) continue;
            if (f.rank == 1) m_has_key = true;
            forget_step_field(f.rank, f.rank);
            if (k == Kind::string) {
                (e.*f.member).assign(str());
            } else {
                step_bad(f.rank, key, "expected a string");
            }
            return Ctx::skip;
        }
        if (key == "seconds") {
            forget_step_field(k_seconds, k_seconds);
            if (is_integer(k) || k == Kind::number) {
                e.seconds = number();
            } else {
                step_bad(k_seconds, key, "expected a number");
            }
            return Ctx::skip;
        }
        if (key == "permanent") {
            forget_step_field(k_permanent, k_permanent);
            if (k == Kind::boolean) {
                e.retry_can_help = !boolean_value();
            } else {
                step_bad(k_permanent, key, "expected true or false");
            }
            return Ctx::skip;
        }
        if (key == "index_urls") {
            forget_step_field(k_index_urls, k_index_urls);
            e.index_urls.clear();
            if (k == Kind::array) return Ctx::index_urls;
            step_bad(k_index_urls, key, "expected a list of strings");
            return Ctx::skip;
        }
        if (key == "inputs") {
            forget_step_field(k_inputs, k_inputs);
            e.inputs.clear();
            m_inputs.clear();
            if (k == Kind::array) return Ctx::inputs;
            step_bad(k_inputs, key, "expected an array");
            return Ctx::skip;
        }
        if (key == "dists") {
            forget_step_field(k_dists_object, k_dist);
            e.dists.clear();
            if (k == Kind::object) return Ctx::dists;
            if (k != Kind::null) step_bad(k_dists_object, key, "expected an object");
            return Ctx::skip;
        }
        return Ctx::skip;
    }

    // ---- inputs: [["field", "value"], ["field", ["v1", "v2"]], ...] ----
    bool has_inputs_error() const { return m_errors.contains({k_step, m_step_id, k_inputs, {}, 0}); }
    void inputs_bad(std::string_view what) {
        if (!has_inputs_error()) step_bad(k_inputs, "inputs", what);  // the first item's error
    }
    Ctx input_start(Kind k) {
        if (k != Kind::array) {
            inputs_bad("expected [field, value]");
            return Ctx::skip;
        }
        m_inputs.emplace_back();
        m_input_field = false;
        m_input_value_error.clear();
        return Ctx::input;
    }
    Ctx input_item(const Frame& f, Kind k) {
        core::KeyInput& in = m_inputs.back();
        if (f.count == 0) {
            m_input_field = k == Kind::string;
            if (m_input_field) in.field.assign(str());
        } else if (f.count == 1) {
            if (k == Kind::string) {
                in.values.push_back(str());
            } else if (k == Kind::array) {
                in.list = true;
                return Ctx::input_values;
            } else {
                m_input_value_error = "expected a string or a list of strings";
            }
        }
        return Ctx::skip;
    }
    void input_end(const Frame& f) {
        if (f.count != 2 || !m_input_field) {
            inputs_bad("expected [field, value]");
        } else if (!m_input_value_error.empty()) {
            inputs_bad(m_input_value_error);
        }
    }

    // ---- dists: {"name": {"version": ..., "record_sha256": ..., "stamp": [size, mtime_ns, inode]}} ----
    bool m_dist_stamp_seen = false;

    void dist_bad(int field, std::string_view what) {
        bad({k_step, m_step_id, k_dist, m_dist_name, field},
            fmt::format("steps.{}.dists.{}.{}", m_step_id, m_dist_name, what));
    }
    Ctx dist_start(const std::string& name, Kind k) {
        forget({k_step, m_step_id, k_dist_object, name, INT_MIN}, [&](const ErrorRank& r) {
            return std::get<0>(r) == k_step && std::get<1>(r) == m_step_id && std::get<2>(r) == k_dist_object &&
                   std::get<3>(r) == name;
        });
        forget({k_step, m_step_id, k_dist, name, INT_MIN}, [&](const ErrorRank& r) {
            return std::get<0>(r) == k_step && std::get<1>(r) == m_step_id && std::get<2>(r) == k_dist &&
                   std::get<3>(r) == name;
        });
        if (k != Kind::object) {
            m_step->dists.erase(name);
            bad({k_step, m_step_id, k_dist_object, name, 0},
                fmt::format("steps.{}.dists.{}: expected an object", m_step_id, name));
            return Ctx::skip;
        }
        auto it = m_step->dists.try_emplace(m_step->dists.end(), name);
        it->second = DistRecord{};
        m_dist = &it->second;
        m_dist_name = name;
        m_dist_stamp_seen = false;
        return Ctx::dist;
    }
    Ctx dist_field(const std::string& key, Kind k) {
        const int field = key == "version"         ? k_dist_version
                          : key == "record_sha256" ? k_dist_record
                          : key == "stamp"         ? k_dist_stamp
                                                   : 0;
        if (field == 0) return Ctx::skip;
        m_errors.erase({k_step, m_step_id, k_dist, m_dist_name, field});
        if (field == k_dist_stamp) {
            m_dist_stamp_seen = true;
            m_stamp_ok = true;
            if (k == Kind::array) return Ctx::stamp;
            stamp_bad();
            return Ctx::skip;
        }
        if (k == Kind::string) {
            (field == k_dist_version ? m_dist->version : m_dist->record_sha256).assign(str());
        } else {
            dist_bad(field, key + ": expected a string");
        }
        return Ctx::skip;
    }
    void stamp_item(const Frame& f, Kind k) {
        // [0] and [2] non-negative (what nlohmann reads as unsigned), [1] any integer.
        const bool ok = f.count == 1 ? is_integer(k) : k == Kind::unsigned_integer;
        if (!ok || f.count > 2) {
            m_stamp_ok = false;
            return;
        }
        if (f.count == 0) m_dist->stamp.size = unsigned_integer();
        if (f.count == 1) m_dist->stamp.mtime_ns = integer();
        if (f.count == 2) m_dist->stamp.inode = unsigned_integer();
    }
    void stamp_bad() { dist_bad(k_dist_stamp, "stamp: expected [size, mtime_ns, inode]"); }

    static StepStatus status_from(const std::string& s) {
        if (s == "ok") return StepStatus::ok;
        if (s == "interrupted") return StepStatus::interrupted;
        return StepStatus::failed;
    }
};

}  // namespace

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
    Journal journal;
    JournalSax sax(journal);
    try {
        nlohmann::json::sax_parse(text->data(), text->data() + text->size(), &sax);
    } catch (const std::exception& e) {  // bad_alloc, or anything nlohmann throws past parse_error
        return corrupt(e.what());
    }
    std::optional<std::int64_t> unsupported;
    std::string why = sax.finish(unsupported);
    if (unsupported)
        return fail(ErrorCode::io, fmt::format("{}: unsupported journal schema {} (expected {})", path.string(),
                                               *unsupported, k_journal_schema));
    if (!why.empty()) return corrupt(why);
    return journal;
}

}  // namespace bootstrap::state
