// Fuzz target: an installed distribution's METADATA and RECORD, as pyenv reads them from a
// `*.dist-info` directory (scan_site_packages, read_requires_dist, record digests, and the
// is_satisfied walk over its Requires-Dist).
//
// Input: METADATA text, then optionally a line "-----RECORD-----" and the RECORD text.

#include <map>

#include "fuzz_support.hpp"
#include "pyenv/dist_info.hpp"

namespace {

constexpr std::string_view k_separator = "\n-----RECORD-----\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bootstrap;
    std::string_view input = fuzz::as_text(data, size);
    size_t cut = input.find(k_separator);
    std::string_view metadata = input.substr(0, cut);
    std::string_view record =
        cut == std::string_view::npos ? std::string_view{} : input.substr(cut + k_separator.size());

    static const std::filesystem::path site = [] {
        auto dir = fuzz::scratch_dir() / "site-packages";
        std::filesystem::create_directories(dir / "fuzzed_pkg-1.0.dist-info");
        return dir;
    }();
    const auto dist_info = site / "fuzzed_pkg-1.0.dist-info";
    fuzz::write_bytes(dist_info / "METADATA", metadata);
    fuzz::write_bytes(dist_info / "RECORD", record);

    auto installed = pyenv::scan_site_packages(site);
    if (!installed) return 0;
    const pyenv::MarkerEnv env{{"python_version", "3.11"},        {"python_full_version", "3.11.2"},
                               {"sys_platform", "linux"},         {"platform_system", "Linux"},
                               {"platform_machine", "x86_64"},    {"os_name", "posix"},
                               {"implementation_name", "cpython"}};
    for (const auto& [name, dist] : *installed) {
        (void)pyenv::read_requires_dist(dist);
        auto digests = pyenv::record_digests(dist);
        if (digests && digests->exact != pyenv::record_text_digest(record))
            fuzz::invariant_failed("record_digests differs from record_text_digest", record);
        // The walk a skip decision makes: the distribution itself, then its Requires-Dist.
        auto req = pyenv::Requirement::parse(dist.normalized_name + "[all]");
        if (!req) continue;
        std::string why_not;
        (void)pyenv::is_satisfied(*req, *installed, env, false, &why_not);
    }
    return 0;
}
