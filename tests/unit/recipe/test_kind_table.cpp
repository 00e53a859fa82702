// recipe/ knows no step kind: the kinds come in as a KindTable. These tests use kinds of their
// own (no steps/), so they pin what the parser does for any kind: the common keys, the kind's
// keys through its parse function, and the generic reports for keys nobody asked for.

#include <catch2/catch.hpp>

#include "recipe/recipe.hpp"
#include "recipe/step_reader.hpp"

using namespace bootstrap;
using namespace bootstrap::recipe;

namespace {

struct GreetFields : KindFields {
    Text who;
    bool loud = false;
    std::vector<Text> also;
};

std::shared_ptr<const KindFields> parse_greet(StepReader& rd) {
    auto f = std::make_shared<GreetFields>();
    if (auto who = rd.text("who")) f->who = std::move(*who);
    rd.require("who");
    f->loud = rd.flag("loud");
    f->also = rd.texts("also", true);
    return f;
}

struct WaveFields : KindFields {
    std::optional<Text> hand;
};

std::shared_ptr<const KindFields> parse_wave(StepReader& rd) {
    auto f = std::make_shared<WaveFields>();
    f->hand = rd.text("hand");
    return f;
}

const KindTable k_kinds{{"greet", parse_greet}, {"wave", parse_wave}};

const std::string k_head =
    "schema = 1\nname = \"t\"\n[venv]\npath = \"/v\"\npython = \"3.12\"\n"
    "[[step]]\nid = \"g\"\n";  // the step starts on line 6

std::string problems(const std::string& text) {
    auto r = parse_recipe(text, "r.toml", k_kinds);
    REQUIRE_FALSE(r);
    return r.error().detail;
}

}  // namespace

TEST_CASE("a kind from the table reads its own keys into its own fields") {
    auto r = parse_recipe(k_head +
                              "kind = \"greet\"\nwho = \"world\"\nloud = true\nalso = \"x\"\n"
                              "timeout = 5\n",
                          "r.toml", k_kinds);
    REQUIRE(r);
    const Step& s = r->steps.at(0);
    CHECK(s.kind == "greet");
    CHECK(s.timeout == 5.0);
    const auto* f = s.fields_as<GreetFields>();
    REQUIRE(f);
    CHECK(f->who.value == "world");
    CHECK(f->who.loc.str() == "r.toml:9:7");
    CHECK(f->loud);
    REQUIRE(f->also.size() == 1);  // one string stands for a one-element list
    CHECK(s.fields_as<WaveFields>() == nullptr);
    REQUIRE(s.texts.size() == 2);  // for the placeholder check
    CHECK(s.texts[0].value == "world");
}

TEST_CASE("an unknown kind lists the table's kinds, in its order") {
    CHECK(problems(k_head + "kind = \"shout\"\n") ==
          "r.toml:8:8: unknown step kind 'shout' (expected one of greet, wave)");
    CHECK(problems(k_head + "kind = \"grete\"\n") == "r.toml:8:8: unknown step kind 'grete' (did you mean 'greet'?)");
}

TEST_CASE("keys the kind does not ask for are reported generically") {
    // Another kind's key.
    CHECK(problems(k_head + "kind = \"greet\"\nwho = \"a\"\nhand = \"left\"\n") ==
          "r.toml:10:1: key 'hand' is not valid for a step of kind 'greet'");
    // A typo: suggested from the kind's keys; a typo of a required key does not also say it
    // is missing.
    CHECK(problems(k_head + "kind = \"greet\"\nwoh = \"a\"\n") ==
          "r.toml:9:1: unknown key 'woh' in step 'g' (did you mean 'who'?)");
    // Nothing near: no suggestion, and the required key is missing.
    CHECK(problems(k_head + "kind = \"greet\"\nzzzzzz = 1\n") ==
          "r.toml:6:1: step 'g' (kind greet) is missing required key 'who'\n"
          "r.toml:9:1: unknown key 'zzzzzz' in step 'g'");
    // A typo of a common key, on a kind with no required keys.
    CHECK(problems(k_head + "kind = \"wave\"\ntimeot = 3\n") ==
          "r.toml:9:1: unknown key 'timeot' in step 'g' (did you mean 'timeout'?)");
}

TEST_CASE("a kind's values get the placeholder check and typed errors") {
    CHECK(problems(k_head + "kind = \"greet\"\nwho = \"{vars.nope}\"\n") ==
          "r.toml:9:7: unknown variable '{vars.nope}' (not defined in [vars])");
    CHECK(problems(k_head + "kind = \"greet\"\nwho = 3\nloud = \"yes\"\n") ==
          "r.toml:9:7: 'who' must be a string, not an integer\n"
          "r.toml:10:8: 'loud' must be a boolean, not a string");
}
