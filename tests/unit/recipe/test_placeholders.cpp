#include <catch2/catch.hpp>

#include "recipe/placeholders.hpp"

using namespace bootstrap;
using namespace bootstrap::recipe;

namespace {

Text text(std::string value) { return Text{std::move(value), SourceLoc{"r.toml", 4, 9}}; }

/// Resolves env.HOME, vars.*, host.cpus; python.* is not known yet; anything else fails.
Result<std::optional<std::string>> fake_resolve(const Placeholder& p) {
    if (p.ns == "env" && p.name == "HOME") return std::optional<std::string>("/home/u");
    if (p.ns == "env" && p.default_value) return std::optional<std::string>(*p.default_value);
    if (p.ns == "vars") return std::optional<std::string>("<" + p.name + ">");
    if (p.ns == "host") return std::optional<std::string>("16");
    if (p.ns == "python") return std::optional<std::string>();
    return fail(ErrorCode::usage, "environment variable " + p.name + " is not set");
}

}  // namespace

TEST_CASE("find_placeholders splits out namespaces, names and defaults") {
    auto r = find_placeholders("{vars.megatron}/x-{env.CUDA_HOME:-/usr/local/cuda}{host.cpus}");
    REQUIRE(r);
    REQUIRE(r->size() == 3);
    CHECK((*r)[0].ns == "vars");
    CHECK((*r)[0].name == "megatron");
    CHECK((*r)[0].offset == 0);
    CHECK_FALSE((*r)[0].default_value);
    CHECK((*r)[1].ns == "env");
    CHECK((*r)[1].name == "CUDA_HOME");
    CHECK((*r)[1].default_value == "/usr/local/cuda");
    CHECK((*r)[1].offset == 18);
    CHECK((*r)[2].ns == "host");
    CHECK((*r)[2].name == "cpus");
}

TEST_CASE("doubled braces are literal, not placeholders") {
    auto r = find_placeholders("for x in {{a,b}}; do {{{env.HOME}}}");
    REQUIRE(r);
    REQUIRE(r->size() == 1);
    CHECK((*r)[0].name == "HOME");
    CHECK((*r)[0].offset == 23);
    auto none = find_placeholders("plain text");
    REQUIRE(none);
    CHECK(none->empty());
}

TEST_CASE("an empty default is a default") {
    auto r = find_placeholders("{env.X:-}");
    REQUIRE(r);
    REQUIRE(r->size() == 1);
    CHECK((*r)[0].default_value == "");
}

TEST_CASE("malformed placeholders are errors with exact messages") {
    auto unterminated = find_placeholders("{env.HOME/x");
    REQUIRE_FALSE(unterminated);
    CHECK(unterminated.error().code == ErrorCode::invalid_recipe);
    CHECK(unterminated.error().message == "unterminated placeholder '{env.HOME/x' (write '{{' for a literal '{')");

    auto nested = find_placeholders("{env.{x}}");
    REQUIRE_FALSE(nested);
    CHECK(nested.error().message == "unterminated placeholder '{env.' (write '{{' for a literal '{')");

    auto lone = find_placeholders("a}b");
    REQUIRE_FALSE(lone);
    CHECK(lone.error().message == "unmatched '}' (write '}}' for a literal '}')");

    for (const char* bad : {"{}", "{env.}", "{.x}", "{a,b}", "{env X}", "{1ns.x}"}) {
        INFO(bad);
        auto r = find_placeholders(bad);
        REQUIRE_FALSE(r);
        std::string body(bad);
        CHECK(r.error().message == "'" + body +
                                       "' is not a valid placeholder (expected "
                                       "'{namespace.name}'; write '{{' and '}}' for literal "
                                       "braces)");
    }
}

TEST_CASE("to_string shows a placeholder as written") {
    auto r = find_placeholders("{env.A:-b}{vars.c}");
    REQUIRE(r);
    CHECK(to_string((*r)[0]) == "{env.A:-b}");
    CHECK(to_string((*r)[1]) == "{vars.c}");
}

TEST_CASE("known_placeholders lists the closed namespaces") {
    const auto& known = known_placeholders();
    CHECK(known == std::vector<std::string>{"venv.path", "venv.python", "python.version", "python.ext_suffix",
                                            "python.site_packages", "host.cpus", "device.arch",
                                            "device.torch_arch_list", "device.nvte_archs", "device.cmake_archs"});
}

TEST_CASE("expand substitutes values and unescapes braces") {
    auto r = expand(text("{env.HOME}/{vars.x}-j{host.cpus} {{ok}} {env.NOPE:-dflt}"), fake_resolve);
    REQUIRE(r);
    CHECK(r->value == "/home/u/<x>-j16 {ok} dflt");
    CHECK(r->complete);
}

TEST_CASE("expand marks values not known yet and stays incomplete") {
    auto r = expand(text("mhc{python.ext_suffix}"), fake_resolve);
    REQUIRE(r);
    CHECK_FALSE(r->complete);
    CHECK(r->value == "mhc<python.ext_suffix: known after the venv exists>");
}

TEST_CASE("expand prefixes resolver errors with the text's location") {
    auto r = expand(text("{env.MEGATRON_DIR}/.venv"), fake_resolve);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::usage);
    CHECK(r.error().message == "r.toml:4:9: environment variable MEGATRON_DIR is not set");

    auto bad = expand(text("{oops"), fake_resolve);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == ErrorCode::invalid_recipe);
    CHECK(bad.error().message == "r.toml:4:9: unterminated placeholder '{oops' (write '{{' for a literal '{')");
}

TEST_CASE("expand leaves text without placeholders alone") {
    int calls = 0;
    auto r = expand(text("torch==2.11.0+cu130"), [&](const Placeholder&) {
        ++calls;
        return Result<std::optional<std::string>>(std::nullopt);
    });
    REQUIRE(r);
    CHECK(r->value == "torch==2.11.0+cu130");
    CHECK(r->complete);
    CHECK(calls == 0);
}
