#include "core/lockfile_limit.hpp"

#include <fmt/format.h>

#include "core/fs.hpp"

namespace bootstrap::core {

Result<std::string> read_lockfile_text(const std::filesystem::path& file) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);  // an error: read_regular_file names it
    if (!ec && size > k_max_lockfile)
        return fail(ErrorCode::usage,
                    fmt::format("{} is {}: larger than any lockfile bootstrap reads (at most {})", file.string(),
                                format_size(size), format_size(k_max_lockfile)),
                    "a lockfile bootstrap or uv writes is well under that: name the lockfile `bootstrap lock` "
                    "wrote (lockfiles/<recipe>.lock.json or pylock.<recipe>.toml)");
    return read_regular_file(file, k_max_lockfile);
}

}  // namespace bootstrap::core
