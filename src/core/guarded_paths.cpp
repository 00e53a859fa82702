#include "core/guarded_paths.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <system_error>

namespace bootstrap::core {

fs::path resolved_path(const fs::path& p) {
    std::error_code ec;
    fs::path out = fs::weakly_canonical(p, ec);
    out = (ec ? p : out).lexically_normal();
    // "/a/b/" and "/a/b" are the same directory.
    if (out.has_filename() || out == out.root_path()) return out;
    return out.parent_path();
}

bool is_same_or_ancestor(const fs::path& a, const fs::path& b) {
    auto ai = a.begin(), bi = b.begin();
    for (; ai != a.end(); ++ai, ++bi) {
        if (ai->empty()) continue;  // a trailing separator
        if (bi == b.end() || *ai != *bi) return false;
    }
    return true;
}

std::optional<std::string> whole_directory_refusal(const fs::path& dir, const fs::path& home) {
    const fs::path target = resolved_path(dir);
    if (target == target.root_path()) return "the root of the file system";
    // The system's own trees: a recipe names a checkout or a directory of its own inside them,
    // never one of them (the home directory of root among them).
    static constexpr std::array<std::string_view, 8> k_system = {"/etc",  "/usr", "/var", "/root",
                                                                 "/proc", "/sys", "/dev", "/boot"};
    for (auto sys : k_system)
        if (target == fs::path(sys) || target == resolved_path(fs::path(sys)))
            return "a system directory (" + std::string(sys) + ")";
    if (!home.empty()) {
        const fs::path h = resolved_path(home);
        if (target == h) return "the home directory";
        if (is_same_or_ancestor(target, h)) return "an ancestor of the home directory (" + h.string() + ")";
    }
    return std::nullopt;
}

std::optional<std::string> credential_file_rule(const fs::path& path) {
    const std::string name = path.filename().string();
    const std::string parent = path.parent_path().filename().string();
    if (parent == ".ssh" && name.starts_with("id_") && !name.ends_with(".pub")) return "an SSH private key (.ssh/id_*)";
    if (name == ".netrc" || name == "_netrc") return ".netrc";
    if (name == ".pypirc") return ".pypirc";
    if (name == ".git-credentials") return ".git-credentials";
    if (parent == ".aws" && name == "credentials") return ".aws/credentials";
    if (parent == ".docker" && name == "config.json") return ".docker/config.json";
    if (name.ends_with(".keyring")) return "a keyring (*.keyring)";
    std::string before;  // the directory above `part`
    for (const auto& part : path.parent_path()) {
        const auto s = part.string();
        if (s == "python_keyring" || (s == "keyrings" && before == "share"))
            return "a keyring (" + (s == "keyrings" ? std::string("share/keyrings") : s) + "/)";
        if (s == "private-keys-v1.d" && before == ".gnupg") return "a GnuPG private key (.gnupg/private-keys-v1.d/)";
        before = s;
    }
    if (parent == ".gnupg" && name == "secring.gpg") return "a GnuPG private key (.gnupg/secring.gpg)";
    return std::nullopt;
}

}  // namespace bootstrap::core
