// The import probe's output parser on what a hostile or broken package can print.
#include <catch2/catch.hpp>

#include <string>

#include "pyenv/import_probe.hpp"

using bootstrap::pyenv::parse_import_probe;

TEST_CASE("parse_import_probe reads the probe lines") {
    auto f = parse_import_probe(
        "Traceback (most recent call last):\n"
        "bootstrap-verify: import a.b failed: NameError: name 'X' is not defined\n"
        "bootstrap-verify: root cause: ModuleNotFoundError: No module named 'regex._regex'\n");
    CHECK(f.error == "NameError: name 'X' is not defined");
    CHECK(f.root_cause == "ModuleNotFoundError: No module named 'regex._regex'");
    CHECK(f.missing_module == "regex");
    CHECK_FALSE(f.missing_attribute);

    // Not the probe's forms: no module, no " failed: ", a quote inside the name.
    CHECK(parse_import_probe("bootstrap-verify: import  failed: x\n").error.empty());
    CHECK(parse_import_probe("bootstrap-verify: import a broke: x\n").error.empty());
    CHECK(parse_import_probe("bootstrap-verify: import a failed: ModuleNotFoundError: No module "
                             "named 'a'b'\n")
              .missing_module.empty());
    CHECK(parse_import_probe("bootstrap-verify: import a failed: ModuleNotFoundError: No module "
                             "named '.rel'\n")
              .missing_module.empty());
}

TEST_CASE("parse_import_probe takes an exception message of any length") {
    // A 40,000-character message segfaulted doctor and launch (std::regex_match recursed once
    // per character).
    std::string message(40'000, 'x');
    auto f = parse_import_probe("bootstrap-verify: import bad failed: ImportError: " + message +
                                "\nbootstrap-verify: root cause: ModuleNotFoundError: No module "
                                "named '" +
                                std::string(40'000, 'm') + ".sub'\n");
    CHECK(f.error == "ImportError: " + message);
    CHECK(f.missing_module == std::string(40'000, 'm'));
}
