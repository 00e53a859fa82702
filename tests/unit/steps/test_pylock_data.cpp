// A pylock.toml as plain data (steps/pylock_data.hpp) and the pins an install step with
// `pylock` installs from it.
#include <catch2/catch.hpp>

#include "steps/pylock_data.hpp"

using namespace bootstrap;

namespace {

const std::string k_a(64, 'a');
const std::string k_b(64, 'b');
const std::string k_head = "lock-version = \"1.0\"\ncreated-by = \"uv\"\n";

steps::PylockData read(const std::string& text) {
    auto lock = steps::read_pylock(text, "/l/pylock.toml");
    if (!lock) FAIL(lock.error().message + "\n" + lock.error().detail);
    return *lock;
}

/// The error of pins that must be refused: message and detail.
std::string refused_pins(const std::string& text) {
    auto pins = steps::pylock_pins(read(text));
    REQUIRE_FALSE(pins.has_value());
    return pins.error().message + "\n" + pins.error().detail;
}

}  // namespace

TEST_CASE("pylock data: names normalised, markers, indexes and wheels with relative paths made absolute") {
    const auto lock = read(k_head +
                           "requires-python = \">=3.11\"\n"
                           "[[packages]]\nname = \"Demo_Utils\"\nversion = \"1.0.0\"\n"
                           "marker = \"sys_platform == 'linux'\"\nindex = \"https://i/simple\"\n"
                           "wheels = [{ url = \"https://i/f/demo_utils-1.0.0-py3-none-any.whl\", "
                           "hashes = { sha256 = \"" +
                           std::string(64, 'A') +
                           "\" } },\n"
                           "  { path = \"w/demo_utils-1.0.0-cp311-cp311-linux_x86_64.whl\", hashes = { sha256 = \"" +
                           k_b + "\" } }]\n");
    CHECK(lock.created_by == "uv");
    CHECK(lock.requires_python == ">=3.11");
    REQUIRE(lock.packages.size() == 1);
    const auto& p = lock.packages[0];
    CHECK(p.name == "demo-utils");
    CHECK(p.marker == "sys_platform == 'linux'");
    CHECK(p.index == "https://i/simple");
    CHECK(p.loc.line == 4);
    REQUIRE(p.wheels.size() == 2);
    CHECK(p.wheels[0].file_name == "demo_utils-1.0.0-py3-none-any.whl");
    CHECK(p.wheels[0].sha256 == k_a);  // lower case
    CHECK(p.wheels[1].path == "/l/w/demo_utils-1.0.0-cp311-cp311-linux_x86_64.whl");
}

TEST_CASE("pylock pins: a pin per package with its marker and every wheel's hash, a path-only wheel by file") {
    const auto pins = steps::pylock_pins(
        read(k_head +
             "[[packages]]\nname = \"demo-core\"\nversion = \"2.0.0\"\n"
             "wheels = [{ url = \"https://i/f/demo_core-2.0.0-py3-none-any.whl\", hashes = { sha256 = \"" +
             k_a +
             "\" } },\n"
             "  { url = \"https://i/f/demo_core-2.0.0-cp311-none-any.whl\", hashes = { sha256 = \"" +
             k_b +
             "\" } }]\n"
             "[[packages]]\nname = \"demo-torch\"\nversion = \"2.10.0\"\nmarker = \"sys_platform == 'win32'\"\n"
             "wheels = [{ url = \"https://i/f/demo_torch-2.10.0-py3-none-any.whl\", hashes = { sha256 = \"" +
             k_a +
             "\" } }]\n"
             "[[packages]]\nname = \"mine\"\nversion = \"0.1\"\n"
             "wheels = [{ path = \"dist/mine-0.1-py3-none-any.whl\", hashes = { sha256 = \"" +
             k_b + "\" } }]\n"));
    if (!pins) FAIL(pins.error().message);
    REQUIRE(pins->requirements.size() == 3);
    CHECK(pins->requirements[0].str() == "demo-core==2.0.0");
    CHECK(pins->requirements[1].normalized_name == "demo-torch");
    REQUIRE(pins->requirements[1].marker);
    CHECK(pins->requirements[1].marker->str() == "sys_platform == \"win32\"");
    CHECK(pins->requirements[2].str() == "mine==0.1");
    CHECK(pins->text == "demo-core==2.0.0 --hash=sha256:" + k_a + " --hash=sha256:" + k_b +
                            "\n"
                            "demo-torch==2.10.0 ; sys_platform == \"win32\" --hash=sha256:" +
                            k_a +
                            "\n"
                            "/l/dist/mine-0.1-py3-none-any.whl --hash=sha256:" +
                            k_b + "\n");
    REQUIRE(pins->files.size() == 1);
    CHECK(pins->files[0] == "/l/dist/mine-0.1-py3-none-any.whl");
}

TEST_CASE("pylock pins: a source tree or several wheel files of one package are refused at its line") {
    const auto error =
        refused_pins(k_head + "[[packages]]\nname = \"mine\"\ndirectory = { path = \"src/mine\", editable = true }\n" +
                     "[[packages]]\nname = \"two\"\nversion = \"1.0\"\nwheels = [\n"
                     "  { path = \"two-1.0-cp311-cp311-linux_x86_64.whl\", hashes = { sha256 = \"" +
                     k_a +
                     "\" } },\n"
                     "  { path = \"two-1.0-cp312-cp312-linux_x86_64.whl\", hashes = { sha256 = \"" +
                     k_b + "\" } }]\n");
    INFO(error);
    CHECK(error.rfind("/l/pylock.toml:3:1: package mine is a source tree (directory /l/src/mine), not a built wheel: "
                      "build it with a `build` step, or name it in a step's packages (and 1 more problem(s))\n",
                      0) == 0);
    CHECK(error.find("\n/l/pylock.toml:6:1: package two has 2 wheels by 'path' and none by 'url': bootstrap "
                     "installs one wheel file per package") != std::string::npos);
}

TEST_CASE("pylock data: the reader's errors are located, and lockfile/'s messages") {
    auto lock = steps::read_pylock(k_head +
                                       "[[packages]]\nname = \"x\"\nversion = \"1.0\"\n"
                                       "wheels = [{ url = \"https://h/x-1.0-py3-none-any.whl\", "
                                       "hashes = { sha256 = \"nothex\" } }]\n",
                                   "/l/pylock.toml");
    REQUIRE_FALSE(lock);
    CHECK(lock.error().code == ErrorCode::usage);
    CHECK(lock.error().message ==
          "not a valid pylock.toml: /l/pylock.toml:6:75: package x: wheel x-1.0-py3-none-any.whl: hashes.sha256 "
          "is not 64 hex digits");
    // A [tool] table is another tool's business here.
    CHECK(steps::read_pylock(k_head + "packages = []\n[tool.bootstrap]\nschema = 99\n", "/l/pylock.toml"));
}

TEST_CASE("pylock data: requires-python and environments are checked against the venv's interpreter") {
    pyenv::InterpreterFacts python;
    python.version = "3.12.1";
    python.markers = {{"sys_platform", "linux"}, {"platform_machine", "x86_64"}};
    auto fits = [&](const std::string& header) {
        return steps::check_pylock_interpreter(read(k_head + header + "packages = []\n"), python);
    };
    CHECK(fits(""));
    CHECK(fits("requires-python = \">=3.11\"\nenvironments = [\"sys_platform == 'linux'\"]\n"));
    auto old = fits("requires-python = \"==3.11.*\"\n");
    REQUIRE_FALSE(old);
    CHECK(old.error().message == "/l/pylock.toml requires Python ==3.11.*; the venv's is 3.12.1");
    auto other = fits("environments = [\"sys_platform == 'darwin'\"]\n");
    REQUIRE_FALSE(other);
    CHECK(other.error().message ==
          "/l/pylock.toml is for sys_platform == 'darwin'; the venv's interpreter is "
          "sys_platform 'linux', platform_machine 'x86_64'");
}

TEST_CASE("pylock data: a path, url, name or index that would be more than one requirement line is refused") {
    // The attack: a wheel path whose newline starts another requirement and an option.
    const std::string path = "w/x-1.0-py3-none-any.whl\\ndemo-utils==1.0.0\\n--extra-index-url http://evil/";
    auto lock =
        steps::read_pylock(k_head + "[[packages]]\nname = \"x\"\nversion = \"1.0\"\n" + "wheels = [{ path = \"" + path +
                               "\", hashes = { sha256 = \"" + k_a + "\" } }]\n",
                           "/l/pylock.toml");
    REQUIRE_FALSE(lock);
    INFO(lock.error().message + "\n" + lock.error().detail);
    CHECK(lock.error().message.rfind("not a valid pylock.toml: /l/pylock.toml:6:20: package x: 'path' holds a "
                                     "control character (U+000A at byte 24): refused",
                                     0) == 0);
    CHECK(lock.error().message.ends_with("(write it on one line; a relative path that starts with '-' as ./-...)"));
    // A leading '-' (an option to the installer), in every field that reaches it.
    for (const std::string& entry : std::vector<std::string>{
             "name = \"x\"\nversion = \"1.0\"\nwheels = [{ path = \"--index-url=http://evil/x-1.0-py3-none-any.whl\", "
             "hashes = { sha256 = \"" +
                 k_a + "\" } }]\n",
             "name = \"x\"\nversion = \"1.0\"\nwheels = [{ url = \"-ehttp://evil/x-1.0-py3-none-any.whl\", "
             "hashes = { sha256 = \"" +
                 k_a + "\" } }]\n",
             "name = \"x\"\nversion = \"1.0\"\nindex = \"--trusted-host=evil\"\nwheels = [{ url = "
             "\"https://i/x-1.0-py3-none-any.whl\", hashes = { sha256 = \"" +
                 k_a + "\" } }]\n",
             "name = \"x\"\nversion = \"1.0\\r\"\nwheels = [{ url = \"https://i/x-1.0-py3-none-any.whl\", "
             "hashes = { sha256 = \"" +
                 k_a + "\" } }]\n",
             "name = \"-x\"\nversion = \"1.0\"\nwheels = [{ url = \"https://i/x-1.0-py3-none-any.whl\", hashes = "
             "{ sha256 = \"" +
                 k_a + "\" } }]\n",
             "name = \"x\"\ndirectory = { path = \"src\\u0001x\" }\n"}) {
        auto bad = steps::read_pylock(k_head + "[[packages]]\n" + entry, "/l/pylock.toml");
        INFO(entry);
        REQUIRE_FALSE(bad);
        CHECK(bad.error().message.rfind("not a valid pylock.toml: /l/pylock.toml:", 0) == 0);
    }
}

TEST_CASE("pylock pins: a wheel path with spaces, '#' or quotes is written as a file URL pip and uv read") {
    const auto pins = steps::pylock_pins(
        read(k_head + "[[packages]]\nname = \"x\"\nversion = \"1.0\"\n" +
             "wheels = [{ path = \"a b#c;d'q/x-1.0-py3-none-any.whl\", hashes = { sha256 = \"" + k_a + "\" } }]\n"));
    if (!pins) FAIL(pins.error().message);
    CHECK(pins->text == "x @ file:///l/a%20b%23c%3Bd%27q/x-1.0-py3-none-any.whl --hash=sha256:" + k_a + "\n");
}
