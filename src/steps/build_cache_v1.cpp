// Entries of the build-cache scheme before (bootstrap-build-v1), whose git keys held the URL or
// clone path: found from the inputs a v2 key has and re-keyed under it, so that a cached build
// (apex: ~45 min) is never orphaned by the scheme moving on. Nothing is trusted that the current
// rules would not trust: the v1 entry's key is recomputed from our own inputs (its inputs.txt
// only says which URL to try), and the entry is checked like any other (find_trusted).
#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/redact.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "steps/build_cache.hpp"

namespace bootstrap::steps {

namespace {

/// The source line of a v1 entry's inputs.txt ("source: git URL@REV"), when it is one.
std::optional<std::string> v1_source_of(const fs::path& entry) {
    auto text = core::read_regular_file(entry / "inputs.txt", 1 << 20);
    if (!text) return std::nullopt;
    const auto lines = core::split(*text, '\n');
    if (lines.size() < 2 || lines[0] != fmt::format("scheme: {}", k_build_key_scheme_v1)) return std::nullopt;
    auto source = core::after_prefix(lines[1], "source: ");
    if (!source) return std::nullopt;
    return std::string(*source);
}

Status copy_into(const fs::path& file, const fs::path& dir) {
    std::error_code ec;
    fs::copy_file(file, dir / file.filename(), fs::copy_options::overwrite_existing, ec);
    if (ec)
        return fail(ErrorCode::io, fmt::format("cannot copy {} to {}: {}", file.string(), dir.string(), ec.message()));
    return {};
}

}  // namespace

std::optional<std::string> BuildCache::find_v1(const BuildInputs& inputs) const {
    std::error_code ec;
    const bool git = inputs.source.starts_with("git ");
    // The place it was fetched from this time first: the entry a v1 run here would have hit.
    std::string here = inputs.source;
    if (git && !inputs.source_from.empty())
        here = core::redact_text(fmt::format("git {}@{}", inputs.source_from, inputs.source.substr(4)));
    const std::string direct = make_build_key_v1(inputs, here).digest;
    if (fs::is_directory(m_root / direct, ec)) return direct;
    if (!git) return std::nullopt;  // an archive's or a tree's v1 key held no place
    // The same commit from another clone path, mirror or fork: the URL its inputs.txt names.
    size_t examined = 0;
    for (auto it = fs::directory_iterator(m_root, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        std::error_code entry_ec;  // one unreadable entry does not end the scan
        if (!core::is_sha256_hex(name) || name == direct || it->is_symlink(entry_ec) || !it->is_directory(entry_ec))
            continue;
        if (++examined > k_v1_entries_examined) break;
        auto source = v1_source_of(it->path());
        if (!source || content_source(*source) != inputs.source) continue;
        if (make_build_key_v1(inputs, *source).digest == name) return name;
    }
    return std::nullopt;
}

Result<std::optional<BuildCache::Entry>> BuildCache::adopt_v1(
    const BuildKey& key, const fs::path& private_dir,
    const std::function<Result<const core::TrustedKeys*>()>& trusted_keys, std::optional<core::EntryTrust>* passed_over,
    bool publish_it, const core::SigningKey* signer) const {
    auto v1 = find_v1(key.inputs);
    if (!v1) return std::optional<Entry>();
    BS_TRY(auto old, find_trusted(*v1, private_dir, trusted_keys, passed_over));
    if (!old) return std::optional<Entry>();
    old->rekeyed_from = fmt::format("{} {}", k_build_key_scheme_v1, *v1);
    if (!publish_it) return old;
    BS_TRY(fs::path staging_dir, staging(key.digest));
    std::error_code ec;
    const fs::path files = old->wheel.parent_path();  // the entry, or its checked private copy
    auto copied = copy_into(old->wheel, staging_dir);
    if (copied && fs::is_regular_file(files / "build.log", ec)) copied = copy_into(files / "build.log", staging_dir);
    if (!copied) {
        fs::remove_all(staging_dir, ec);
        return tl::unexpected(copied.error());
    }
    BS_TRY(auto entry, publish(key.digest, staging_dir, key.explain, old->build_seconds, signer, &*old));
    if (files != old->dir) fs::remove_all(files, ec);  // the wheel installed is the new entry's
    return std::optional<Entry>(std::move(entry));
}

}  // namespace bootstrap::steps
