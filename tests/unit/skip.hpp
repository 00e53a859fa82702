#pragma once
// A real skip for Catch2 v2, which has none. BS_SKIP("no nvcc on PATH") prints the reason and
// ends the process with exit status 77, which ctest reports as "Skipped" (CMakeLists.txt:
// catch_discover_tests(... PROPERTIES SKIP_RETURN_CODE 77)), never as passed. ctest runs each
// TEST_CASE in its own process, so only that case ends. Run by hand with several cases, the
// binary stops at the first skip and exits 77, which is not a pass either.
//
// Call it before any SECTION: a skip inside one would end the cases' other sections too.

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

namespace bootstrap::test {

/// The exit status ctest counts as a skip (the SKIP_RETURN_CODE of every unit test).
inline constexpr int k_skip_exit_code = 77;

/// Print "SKIPPED: <test case>: <why>" and end the process with k_skip_exit_code.
[[noreturn]] inline void skip_test_case(const std::string& why) {
    std::cout.flush();
    std::cerr.flush();
    std::cout << "SKIPPED: " << Catch::getResultCapture().getCurrentTestName() << ": " << why << std::endl;
    std::fflush(nullptr);
    std::_Exit(k_skip_exit_code);
}

}  // namespace bootstrap::test

/// Skip the running test case; the argument streams like Catch's INFO/WARN ("why: " << x).
#define BS_SKIP(reason)                                           \
    do {                                                          \
        std::ostringstream bs_skip_reason_;                       \
        bs_skip_reason_ << reason;                                \
        ::bootstrap::test::skip_test_case(bs_skip_reason_.str()); \
    } while (false)
