// Editable installs whose source directory is gone (pyenv/local_sources.hpp): a venv copied,
// unpacked or baked into an image without the checkout it imports from (megatron-core installed
// with `-e $MEGATRON_DIR`). The distribution's metadata is still there, so every other check
// calls it installed; only its modules fail to import.

#include <fmt/format.h>

#include "core/strings.hpp"
#include "doctor/checks.hpp"
#include "doctor/checks_util.hpp"
#include "pyenv/local_sources.hpp"

namespace bootstrap::doctor {

size_t check_editable_sources(const DoctorOptions& options, std::vector<Finding>& out) {
    const fs::path site = find_site_packages(options.venv);
    if (site.empty()) return 0;
    auto sources = pyenv::find_local_sources(site);
    if (!sources) return 0;
    size_t missing = 0;
    for (const auto& s : *sources) {
        std::error_code ec;
        if (fs::is_directory(s.path, ec)) continue;
        ++missing;
        std::vector<std::string> evidence;
        for (const auto& f : s.files) evidence.push_back((site / f).string());
        out.push_back(detail::make_finding(
            "editable-source", recipe::Severity::error,
            fmt::format("{} {} is an editable install from {}, which does not exist on this host: its modules do "
                        "not import",
                        s.name, s.version, s.path.string()),
            std::move(evidence),
            fmt::format("make the checkout available at {} (clone or mount it there), or unpack a pack made with "
                        "`bootstrap pack --carry-editable`",
                        s.path.string()),
            "an editable install keeps only a pointer in site-packages (a .pth file or an __editable__ finder); "
            "the code stays in the source directory, which a copied, unpacked or imaged venv does not bring along"));
    }
    return missing;
}

}  // namespace bootstrap::doctor
