#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/key.hpp"

using namespace bootstrap;
using Lines = std::vector<std::string>;

namespace {

core::KeyBuilder step(const std::vector<std::string>& argv, const std::vector<std::string>& set,
                      const std::vector<std::string>& inherited, const std::string& installer) {
    core::KeyBuilder key("scheme-test");
    key.add("id", "core");
    key.add("argv", argv);
    key.add("env.set", set);
    key.add("env.inherited", inherited);
    key.add("installer", installer);
    return key;
}

}  // namespace

TEST_CASE("a key keeps its inputs and numbers a field added twice") {
    core::KeyBuilder key("s");
    key.add("locked", "a");
    key.add("locked", "b");
    key.add("list", std::vector<std::string>{"x", "y"});
    const auto& in = key.inputs();
    REQUIRE(in.size() == 4);
    CHECK(in[0] == core::KeyInput{"scheme", {"s"}, false});
    CHECK(in[1].field == "locked");
    CHECK(in[2].field == "locked#2");
    CHECK(in[3] == core::KeyInput{"list", {"x", "y"}, true});
}

TEST_CASE("explain_change names each changed input") {
    auto a = step({"uv", "pip", "install", "attrs"}, {"UV_NO_PROGRESS=1"}, {}, "uv 0.13.9");
    CHECK(core::explain_change(a.inputs(), a.inputs()).empty());

    auto b = step({"uv", "pip", "install", "rich", "attrs"}, {"UV_NO_PROGRESS=1"}, {"NCCL_ALGO=Tree"}, "uv 0.14.0");
    CHECK(core::explain_change(a.inputs(), b.inputs()) ==
          Lines{"argv: +rich", "env NCCL_ALGO: unset → Tree", "installer: uv 0.13.9 → uv 0.14.0"});

    // A variable the recipe now sets to the value it inherited before: no change of value.
    auto c = step({"uv", "pip", "install", "attrs"}, {"UV_NO_PROGRESS=1", "X=1"}, {}, "uv 0.13.9");
    auto d = step({"uv", "pip", "install", "attrs"}, {"UV_NO_PROGRESS=1"}, {"X=1"}, "uv 0.13.9");
    CHECK(core::explain_change(c.inputs(), d.inputs()).empty());
    auto e = step({"uv", "pip", "install", "attrs"}, {"UV_NO_PROGRESS=1"}, {"X=2"}, "uv 0.13.9");
    CHECK(core::explain_change(c.inputs(), e.inputs()) == Lines{"env X: 1 → 2"});

    auto reordered = step({"uv", "pip", "install", "attrs"}, {"UV_NO_PROGRESS=1"}, {}, "uv 0.13.9");
    core::KeyBuilder f("scheme-test");
    f.add("id", "core");
    f.add("argv", std::vector<std::string>{"install", "uv", "pip", "attrs"});
    f.add("env.set", std::vector<std::string>{"UV_NO_PROGRESS=1"});
    f.add("env.inherited", std::vector<std::string>{});
    f.add("installer", "uv 0.13.9");
    f.add("creates", "/x");
    CHECK(core::explain_change(reordered.inputs(), f.inputs()) ==
          Lines{"argv: same values, another order", "creates: added (/x)"});
    CHECK(core::explain_change(f.inputs(), reordered.inputs()) ==
          Lines{"argv: same values, another order", "creates: removed (was /x)"});
}

TEST_CASE("explain_change shortens long values in the middle") {
    auto a = step({}, {}, {"CXXFLAGS=" + std::string(300, 'a')}, "uv");
    auto b = step({}, {}, {"CXXFLAGS=" + std::string(300, 'b')}, "uv");
    auto lines = core::explain_change(a.inputs(), b.inputs(), 20);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == "env CXXFLAGS: aaaaaaaaa…aaaaaaaaaa → bbbbbbbbb…bbbbbbbbbb");
}
