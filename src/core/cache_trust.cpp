#include "core/cache_trust.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"

namespace bootstrap::core {

namespace {

constexpr const char* k_signature_file = "signature";
constexpr const char* k_canonical_scheme = "bootstrap-cache-entry-v1";

std::string user_of(uid_t uid) {
    const passwd* pw = ::getpwuid(uid);
    return pw != nullptr && pw->pw_name != nullptr ? fmt::format("uid {} ({})", uid, pw->pw_name)
                                                   : fmt::format("uid {}", uid);
}

std::string group_of(gid_t gid) {
    const group* gr = ::getgrgid(gid);
    return gr != nullptr && gr->gr_name != nullptr ? std::string(gr->gr_name) : fmt::format("gid {}", gid);
}

/// A user-private group (Debian's and Red Hat's USERGROUPS_ENAB: umask 002 for users whose group
/// bears their name): our primary group, named as we are, listing nobody else. Its write bit
/// lets in no other user.
bool own_private_group(gid_t gid) {
    const passwd* pw = ::getpwuid(::geteuid());
    if (pw == nullptr || pw->pw_gid != gid || pw->pw_name == nullptr) return false;
    const std::string me = pw->pw_name;
    const group* gr = ::getgrgid(gid);
    if (gr == nullptr || gr->gr_name == nullptr || me != gr->gr_name) return false;
    for (char** member = gr->gr_mem; member != nullptr && *member != nullptr; ++member)
        if (me != *member) return false;
    return true;
}

/// Who else could have written `path` given its own stat (the directories above are checked
/// by the caller). A directory with the sticky bit lets others add names, never replace ours.
std::optional<OtherWriter> writer_of(const fs::path& path, const struct stat& st) {
    const uid_t me = ::geteuid();
    if (st.st_uid != me && st.st_uid != 0) return OtherWriter{path, user_of(st.st_uid)};
    const bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0;
    if (sticky_dir) return std::nullopt;
    if ((st.st_mode & S_IWOTH) != 0 && !S_ISLNK(st.st_mode)) return OtherWriter{path, "anyone (world-writable)"};
    if ((st.st_mode & S_IWGRP) != 0 && !S_ISLNK(st.st_mode) && !own_private_group(st.st_gid))
        return OtherWriter{path, fmt::format("group {} (group-writable)", group_of(st.st_gid))};
    return std::nullopt;
}

/// "x.whl changed, y added": the files whose lines differ between the signed text and now.
std::string changed_files(const std::vector<std::string>& signed_lines, const std::string& now) {
    auto files = [](const std::vector<std::string>& lines) {
        std::map<std::string, std::string> out;
        for (const auto& line : lines)
            if (auto rest = after_prefix(line, "file ")) out[std::string(rest->substr(0, rest->find(' ')))] = line;
        return out;
    };
    const auto before = files(signed_lines);
    const auto after = files(split(now, '\n'));
    std::vector<std::string> changes;
    for (const auto& [name, line] : after) {
        auto it = before.find(name);
        if (it == before.end()) changes.push_back(name + " added");
        else if (it->second != line) changes.push_back(name + " changed");
    }
    for (const auto& [name, line] : before)
        if (after.count(name) == 0) changes.push_back(name + " removed");
    return changes.empty() ? std::string("the signed text differs") : join(changes, ", ");
}

}  // namespace

std::string OtherWriter::describe() const { return fmt::format("{}, through {}", who, path.string()); }

std::optional<OtherWriter> entry_other_writer(const fs::path& entry) {
    std::error_code ec;
    std::vector<fs::path> paths;
    for (const auto& e : fs::directory_iterator(entry, ec)) paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
    fs::path dir = fs::absolute(entry, ec).lexically_normal();
    if (!dir.has_filename()) dir = dir.parent_path();
    for (;;) {
        paths.push_back(dir);
        if (dir == dir.root_path() || dir.parent_path() == dir) break;
        dir = dir.parent_path();
    }
    // Another owner first: that names who wrote it, where group bits only say who could have.
    std::optional<OtherWriter> by_mode;
    for (const auto& p : paths) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) continue;
        auto w = writer_of(p, st);
        if (!w) continue;
        if (w->who.starts_with("uid ")) return w;
        if (!by_mode) by_mode = std::move(w);
    }
    return by_mode;
}

Result<std::string> entry_canonical_text(const fs::path& entry, const std::string& key) {
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(entry, ec)) {
        const std::string name = e.path().filename().string();
        if (name == k_signature_file) continue;
        struct stat st {};
        if (::lstat(e.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode))
            return fail(ErrorCode::io, fmt::format("{} is {}, not a file: a cache entry holds files only",
                                                   e.path().string(), describe_file_type(st.st_mode)));
        if (name.find_first_of(" \t\r\n") != std::string::npos)
            return fail(ErrorCode::io,
                        fmt::format("{}: a file name with white space cannot be signed", e.path().string()));
        names.push_back(name);
    }
    if (ec) return fail(ErrorCode::io, fmt::format("cannot list {}: {}", entry.string(), ec.message()));
    std::sort(names.begin(), names.end());
    std::string text = fmt::format("{}\nkey {}\n", k_canonical_scheme, key);
    for (const auto& name : names) {
        BS_TRY(auto digest, sha256_file(entry / name));
        auto size = fs::file_size(entry / name, ec);
        if (ec) return fail(ErrorCode::io, fmt::format("cannot stat {}: {}", (entry / name).string(), ec.message()));
        text += fmt::format("file {} {} {}\n", name, size, digest);
    }
    return text;
}

Status sign_entry(const fs::path& entry, const std::string& key, const SigningKey& signer) {
    BS_TRY(auto text, entry_canonical_text(entry, key));
    BS_TRY(auto signature, sign(signer, text));
    // The signed text follows the signature line, so that a mismatch can name the files that
    // changed (only the recomputed text is ever verified).
    return write_file_atomic(entry / k_signature_file,
                             fmt::format("ed25519 {} {}\n{}", signer.public_key.id, signature, text));
}

std::string EntryTrust::describe() const {
    const std::string by = writer ? "another user could have written it: " + writer->describe() : "";
    switch (state) {
        case State::ours: return "written by you alone";
        case State::trusted: return fmt::format("{}; signed by trusted key '{}'", by, signer);
        case State::unsigned_entry: return fmt::format("{}; it is not signed", by);
        case State::unknown_key: return fmt::format("{}; signed by key {}, which you do not trust", by, signer);
        case State::bad_signature: return fmt::format("{}; its signature does not match: {}", by, why);
    }
    return {};
}

Result<EntryTrust> check_entry(const fs::path& entry, const std::string& key,
                               const std::function<Result<const TrustedKeys*>()>& trusted, const fs::path& files_at) {
    EntryTrust out;
    out.writer = entry_other_writer(entry);
    if (!out.writer) return out;
    const fs::path files = files_at.empty() ? entry : files_at;
    auto text = read_regular_file(files / k_signature_file, 1 << 20);
    if (!text) {
        out.state = EntryTrust::State::unsigned_entry;
        return out;
    }
    const auto lines = split(*text, '\n');
    auto fields = split(std::string(trim(lines.front())), ' ');
    if (fields.size() != 3 || fields[0] != "ed25519") {
        out.state = EntryTrust::State::bad_signature;
        out.why = fmt::format("{} is not \"ed25519 KEYID SIGNATURE\"", (entry / k_signature_file).string());
        return out;
    }
    BS_TRY(const TrustedKeys* keys, trusted());
    auto it = keys->by_id.find(fields[1]);
    if (it == keys->by_id.end()) {
        out.state = EntryTrust::State::unknown_key;
        out.signer = fields[1];
        return out;
    }
    out.signer = it->second.name;
    auto canonical = entry_canonical_text(files, key);
    if (!canonical) {
        out.state = EntryTrust::State::bad_signature;
        out.why = canonical.error().message;
        return out;
    }
    BS_TRY(bool good, verify(it->second, *canonical, fields[2]));
    if (good) {
        out.state = EntryTrust::State::trusted;
        return out;
    }
    out.state = EntryTrust::State::bad_signature;
    out.why = fmt::format("its files are not the ones key '{}' signed ({})", it->second.name,
                          changed_files(std::vector<std::string>(lines.begin() + 1, lines.end()), *canonical));
    return out;
}

}  // namespace bootstrap::core
