// An image's defaults file (/etc/bootstrap/env): written by `containerfile`, read by plan, run
// and doctor in the container; the container's own environment wins.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "recipe/image_defaults.hpp"

using namespace bootstrap;

TEST_CASE("image defaults round-trip through their text, quotes and spaces included", "[image_defaults]") {
    recipe::ImageDefaults d;
    d.recipe_digest = std::string(64, 'a');
    d.env = {{"MEGATRON_DIR", "/opt/megatron lm"}, {"QUOTE", "it's $HOME `x` \"y\""}, {"EMPTY", ""}};
    d.secrets = {{"HF_TOKEN", {"download", "train"}}, {"WANDB_API_KEY", {}}};
    d.venv = "/opt/venv";
    d.arch = "9.0";
    d.skip = {"apex", "te-torch"};
    const auto text = recipe::image_defaults_text(d);
    CHECK(text.find("MEGATRON_DIR='/opt/megatron lm'\n") != std::string::npos);
    CHECK(text.find("QUOTE='it'\\''s $HOME `x` \"y\"'\n") != std::string::npos);
    CHECK(text.find("secret HF_TOKEN download train\n") != std::string::npos);
    CHECK(text.find("skip apex te-torch\n") != std::string::npos);
    auto parsed = recipe::parse_image_defaults(text, "env");
    REQUIRE(parsed);
    CHECK(*parsed == d);
}

TEST_CASE("an image default applies only where the environment does not set the variable", "[image_defaults]") {
    recipe::ImageDefaults d;
    d.env = {{"MEGATRON_DIR", "/opt/megatron"}, {"NCCL_ALGO", "Tree"}};
    d.secrets = {{"HF_TOKEN", {"download"}}, {"GIVEN_TOKEN", {"x"}}};
    std::map<std::string, std::string> env{{"NCCL_ALGO", "Ring"}, {"GIVEN_TOKEN", "t"}};
    const auto set = recipe::apply_image_env(d, env);
    CHECK(set == std::vector<std::string>{"MEGATRON_DIR"});
    CHECK(env.at("MEGATRON_DIR") == "/opt/megatron");
    CHECK(env.at("NCCL_ALGO") == "Ring");  // the container's own value wins
    CHECK_FALSE(env.count("HF_TOKEN"));    // a secret's value is never a default
    const auto missing = recipe::missing_image_secrets(d, env);
    REQUIRE(missing.size() == 1);
    CHECK(missing[0].name == "HF_TOKEN");
    CHECK(missing[0].steps == std::vector<std::string>{"download"});
}

TEST_CASE("a malformed image defaults line is an error naming the file and line", "[image_defaults]") {
    auto unquoted = recipe::parse_image_defaults("# c\nrecipe abc\nX=plain\n", "/etc/bootstrap/env");
    REQUIRE_FALSE(unquoted);
    CHECK(unquoted.error().message == "/etc/bootstrap/env:3: the value of X is not single-quoted ('...')");
    auto open = recipe::parse_image_defaults("X='never closed\n", "env");
    REQUIRE_FALSE(open);
    CHECK(open.error().message.find("env:1:") == 0);
    auto name = recipe::parse_image_defaults("1X='v'\n", "env");
    REQUIRE_FALSE(name);
    CHECK(name.error().message.find("'1X' is not a variable name") != std::string::npos);
    auto unknown = recipe::parse_image_defaults("\n\nfrobnicate now\n", "env");
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().message == "env:3: not a line of an image's defaults: 'frobnicate now'");
    auto bare_secret = recipe::parse_image_defaults("secret\n", "env");
    CHECK_FALSE(bare_secret);
}
