#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "core/json_fields.hpp"

using namespace bootstrap;
using core::JsonFields;

namespace {

struct Thing {
    std::string name;
    std::int64_t size = 0;
    std::vector<std::string> tags;
};

Result<Thing> read_thing(std::string_view text) {
    return core::read_json(text, "thing.json", "thing", [](const JsonFields& top) -> Result<Thing> {
        Thing t;
        t.name = top.str("name", "unnamed");
        if (auto inner = top.object("inner")) t.size = inner->integer("size");
        t.tags = top.strings("tags");
        if (auto raw = top.find("raw")) t.size = raw->get<int>();  // nlohmann may throw here
        return t;
    });
}

std::string error_of(std::string_view text) {
    auto r = read_thing(text);
    REQUIRE_FALSE(r);
    return r.error().message;
}

}  // namespace

TEST_CASE("read_json: checked getters, fallbacks, and errors naming the file and the key") {
    auto ok = read_thing(R"({"inner": {"size": 7}, "tags": ["a", "b"]})");
    REQUIRE(ok);
    CHECK(ok->name == "unnamed");
    CHECK(ok->size == 7);
    CHECK(ok->tags == std::vector<std::string>{"a", "b"});

    CHECK(error_of(R"({"name": 3})") == "thing.json: not a valid thing: name: expected a string");
    CHECK(error_of(R"({"inner": {"size": "7"}})") == "thing.json: not a valid thing: inner.size: expected an integer");
    CHECK(error_of(R"({"inner": []})") == "thing.json: not a valid thing: inner: expected an object");
    CHECK(error_of(R"({"tags": ["a", 1]})") == "thing.json: not a valid thing: tags: expected a list of strings");
    CHECK(error_of(R"({"inner": {"size": 18446744073709551615}})") ==
          "thing.json: not a valid thing: inner.size: integer out of range");
    CHECK(error_of("[1]") == "thing.json: not a valid thing: expected a JSON object");
    CHECK_THAT(error_of("{\"name\": "),
               Catch::StartsWith("thing.json: not a valid thing: [json.exception.parse_error"));
    // An exception nlohmann throws inside the reader is an error too, never an escape.
    CHECK_THAT(error_of(R"({"raw": "x"})"),
               Catch::StartsWith("thing.json: not a valid thing: [json.exception.type_error"));
}

TEST_CASE("JsonFields: counts, numbers, maps, objects and null") {
    auto j =
        nlohmann::json::parse(R"({"n": 2.5, "c": 3, "neg": -1, "m": {"a": "x"}, "o": {"p": {"q": 1}}, "z": null})");
    JsonFields f(j, "top");
    CHECK(f.number("n") == 2.5);
    CHECK(f.number("c") == 3);
    CHECK(f.count("c") == 3u);
    CHECK_THROWS_WITH(f.count("neg"), "top.neg: expected a non-negative integer");
    CHECK(f.string_map("m") == std::map<std::string, std::string>{{"a", "x"}});
    CHECK(f.string_map("z").empty());  // null: absent
    CHECK_FALSE(f.object("z"));
    CHECK_THROWS_WITH(f.str("z"), "top.z: expected a string");  // null is not a string
    auto objects = f.objects("o");
    REQUIRE(objects.size() == 1);
    CHECK(objects[0].first == "p");
    CHECK(objects[0].second.integer("q") == 1);
    CHECK_THROWS_WITH(objects[0].second.str("q"), "top.o.p.q: expected a string");
    CHECK(f.has("c"));
    CHECK_FALSE(f.has("nope"));
    CHECK(f.str("nope", "fallback") == "fallback");
}
