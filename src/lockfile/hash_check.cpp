#include "lockfile/hash_check.hpp"

#include <fmt/format.h>

#include "core/redact.hpp"
#include "pyenv/name.hpp"
#include "pyenv/uv_cache.hpp"

namespace bootstrap::lockfile {

Result<std::string> check_index_hash(const BytesAtHand& at_hand, const manifest::Package& pkg, const IndexFile& file,
                                     const std::string& page_url) {
    if (at_hand.store != nullptr)
        if (auto stored = at_hand.store->find(file.sha256); stored && stored->filename() == file.filename)
            return std::string(k_hash_from_artifact_store);  // published under the digest of its bytes
    if (!at_hand.uv_cache) return std::string(k_hash_from_index);
    std::optional<pyenv::UvWheelRecord> other;
    for (auto& record : pyenv::uv_wheel_records(*at_hand.uv_cache, pyenv::normalize_name(pkg.name), pkg.version)) {
        if (record.filename != file.filename) continue;
        if (record.sha256 == file.sha256) return std::string(k_hash_from_uv_cache);
        if (!other) other = std::move(record);
    }
    if (!other) return std::string(k_hash_from_index);
    return fail(ErrorCode::step_failed,
                core::redact_text(fmt::format("{} {}: {} lists {} with sha256 {}, but uv hashed the {} it downloaded "
                                              "and installed to {} ({})",
                                              pkg.name, pkg.version, page_url, file.filename, file.sha256,
                                              file.filename, other->sha256, other->pointer.string())),
                "the index now serves other bytes under that name than the venv was installed from (a replaced or "
                "tampered file): a lock of it would not match the venv. Lock from the index the wheel came from; or, "
                "to take the index's file, drop uv's copy (`uv cache clean " +
                    pyenv::normalize_name(pkg.name) + "`), build the venv anew from the index and lock that");
}

}  // namespace bootstrap::lockfile
