// Fuzz target: PEP 508 requirements and environment markers (pyenv::Requirement, Marker),
// parsed, printed, parsed again, and evaluated against a fixed Linux CPython 3.11.

#include "fuzz_support.hpp"
#include "pyenv/marker.hpp"
#include "pyenv/requirement.hpp"

namespace {

const bootstrap::pyenv::MarkerEnv& marker_env() {
    static const bootstrap::pyenv::MarkerEnv env{{"python_version", "3.11"},
                                                 {"python_full_version", "3.11.2"},
                                                 {"os_name", "posix"},
                                                 {"sys_platform", "linux"},
                                                 {"platform_machine", "x86_64"},
                                                 {"platform_system", "Linux"},
                                                 {"platform_release", "6.1.0"},
                                                 {"platform_version", "#1 SMP"},
                                                 {"platform_python_implementation", "CPython"},
                                                 {"implementation_name", "cpython"},
                                                 {"implementation_version", "3.11.2"},
                                                 {"extra", ""}};
    return env;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bootstrap;
    std::string_view input = fuzz::as_text(data, size);

    if (auto req = pyenv::Requirement::parse(input)) {
        std::string canonical = req->str();
        if (!pyenv::Requirement::parse(canonical))
            fuzz::invariant_failed("Requirement::str() does not parse", canonical);
        if (req->marker) (void)req->marker->evaluate(marker_env());
    }
    if (auto marker = pyenv::Marker::parse(input)) {
        bool value = marker->evaluate(marker_env());
        auto again = pyenv::Marker::parse(marker->str());
        if (!again) fuzz::invariant_failed("Marker::str() does not parse", marker->str());
        if (again->evaluate(marker_env()) != value)
            fuzz::invariant_failed("Marker::str() evaluates differently", marker->str());
    }
    return 0;
}
