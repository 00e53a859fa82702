#pragma once
// The host's C compiler for unit tests that need a real shared object (ELF readers, the
// import-probe rule): run it with the given arguments, failing the test on a compile error.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "exec/environment.hpp"
#include "exec/process.hpp"

namespace bs_test {

/// Run `cc ARGS...` from PATH; false (nothing run) when there is no cc.
inline bool cc(const std::vector<std::string>& args) {
    auto env = bootstrap::exec::current_environment();
    auto compiler = bootstrap::exec::find_program("cc", env["PATH"]);
    if (compiler.empty()) return false;
    bootstrap::exec::ProcessSpec spec;
    spec.argv = {compiler.string()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env = env;
    spec.capture = true;
    auto ran = bootstrap::exec::run_process(spec);
    REQUIRE(ran);
    INFO(ran->output);
    REQUIRE(ran->ok());
    return true;
}

}  // namespace bs_test
