// Fuzz target: a Megatron training config as `bootstrap lint` reads it (doctor::parse_config):
// a launch script / argument list, or --yaml-cfg YAML (flat or nested, through yaml-cpp).

#include "doctor/flags.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bootstrap;
    std::string_view text = fuzz::as_text(data, size);
    (void)doctor::parse_config(text, "train.sh");
    (void)doctor::parse_config(text, "config.yaml");
    (void)doctor::parse_args(text, "args.txt");
    return 0;
}
