#include <catch2/catch.hpp>

#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "core/json_writer.hpp"

using bootstrap::core::append_json_string;
using bootstrap::core::JsonWriter;
using nlohmann::json;

namespace {

std::string nlohmann_text(const json& j, int indent) {
    return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

std::string writer_string(std::string_view s) {
    std::string out;
    append_json_string(out, s);
    return out;
}

/// A random string over bytes that matter to escaping: controls, quote, backslash, DEL, ASCII,
/// valid 2-4 byte UTF-8, and stray/overlong/surrogate bytes.
std::string random_string(std::mt19937& rng) {
    static const std::vector<std::string> pieces = {"a",
                                                    "Z",
                                                    " ",
                                                    "\"",
                                                    "\\",
                                                    "/",
                                                    "\b",
                                                    "\f",
                                                    "\n",
                                                    "\r",
                                                    "\t",
                                                    std::string(1, '\0'),
                                                    "\x01",
                                                    "\x1f",
                                                    "\x7f",
                                                    "\xc3\xa9",
                                                    "\xe2\x82\xac",
                                                    "\xf0\x9f\x98\x80",
                                                    "\xed\x9f\xbf",
                                                    "\xef\xbf\xbd",
                                                    "\x80",
                                                    "\xc0\xaf",
                                                    "\xed\xa0\x80",
                                                    "\xf4\x90\x80\x80",
                                                    "\xe2\x82",
                                                    "\xff",
                                                    "\xc3"};
    std::uniform_int_distribution<size_t> len(0, 8), pick(0, pieces.size() - 1);
    std::string s;
    for (size_t n = len(rng); n > 0; --n) s += pieces[pick(rng)];
    return s;
}

/// The same random document written with JsonWriter and built as nlohmann JSON (keys given
/// sorted, as the writer's callers do).
void random_document(std::mt19937& rng, int depth, JsonWriter& w, json& j) {
    std::uniform_int_distribution<int> kind(0, depth > 2 ? 3 : 5), count(0, 4);
    switch (kind(rng)) {
        case 0: {
            std::string s = random_string(rng);
            w.string(s);
            j = s;
            break;
        }
        case 1: {
            bool b = (rng() & 1) != 0;
            w.boolean(b);
            j = b;
            break;
        }
        case 2: {
            auto v = static_cast<std::int64_t>(rng()) - (1LL << 31);
            w.integer(v);
            j = v;
            break;
        }
        case 3:
            w.null();
            j = nullptr;
            break;
        case 4: {
            w.begin_array();
            j = json::array();
            for (int n = count(rng); n > 0; --n) {
                json e;
                random_document(rng, depth + 1, w, e);
                j.push_back(std::move(e));
            }
            w.end_array();
            break;
        }
        default: {
            std::map<std::string, int> keys;  // sorted, unique
            for (int n = count(rng); n > 0; --n) keys.emplace("k" + std::to_string(rng() % 50), 0);
            w.begin_object();
            j = json::object();
            for (const auto& [k, _] : keys) {
                w.key(k);
                random_document(rng, depth + 1, w, j[k]);
            }
            w.end_object();
        }
    }
}

}  // namespace

TEST_CASE("json writer: strings escape as nlohmann's dump does, bad UTF-8 replaced the same way") {
    CHECK(writer_string("plain") == "\"plain\"");
    CHECK(writer_string("a\"b\\c\n\t\x01\x7f") == "\"a\\\"b\\\\c\\n\\t\\u0001\x7f\"");
    CHECK(writer_string("caf\xc3\xa9") == "\"caf\xc3\xa9\"");
    std::mt19937 rng(20261203);
    for (int i = 0; i < 20000; ++i) {
        std::string s = random_string(rng);
        INFO("case " << i << ": " << json(s).dump(-1, ' ', true, json::error_handler_t::replace));
        REQUIRE(writer_string(s) == nlohmann_text(json(s), -1));
    }
}

TEST_CASE("json writer: documents are byte for byte nlohmann's dump at indent 1 and 2") {
    std::mt19937 rng(7);
    for (int indent : {1, 2}) {
        for (int i = 0; i < 3000; ++i) {
            std::string out;
            JsonWriter w(out, indent);
            json j;
            random_document(rng, 0, w, j);
            INFO("indent " << indent << ", case " << i);
            REQUIRE(out == nlohmann_text(j, indent));
        }
    }
    std::string out;
    JsonWriter w(out, 2);
    w.begin_object().key("a").begin_array().end_array().key("b").begin_object().end_object().end_object();
    CHECK(out == "{\n  \"a\": [],\n  \"b\": {}\n}");
}
