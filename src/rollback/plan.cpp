#include "rollback/plan.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "manifest/snapshot.hpp"
#include "pyenv/name.hpp"
#include "pyenv/version.hpp"
#include "pyenv/wheel_name.hpp"

namespace bootstrap::rollback {

using manifest::Manifest;
using manifest::Origin;
using manifest::OriginKind;
using manifest::Package;

namespace {

bool same_version(const std::string& a, const std::string& b) {
    if (a == b) return true;
    auto va = pyenv::Version::parse(a);
    auto vb = pyenv::Version::parse(b);
    return va && vb && *va == *vb;
}

/// The tags of a wheel file as its name spells them ("py3-none-any"; "" when it is not one).
std::string tag_triple(const fs::path& wheel) {
    auto w = pyenv::parse_wheel_name(wheel.filename().string());
    if (!w) return {};
    return fmt::format("{}-{}-{}", core::join(w->python_tags, "."), core::join(w->abi_tags, "."),
                       core::join(w->platform_tags, "."));
}

/// Every wheel of `name` at `version` in `dirs`, in directory order; within a directory the
/// one whose tag equals `tag` first, then by file name.
std::vector<fs::path> matching_wheels(const std::vector<fs::path>& dirs, const std::string& name,
                                      const std::string& version, const std::string& tag) {
    std::vector<fs::path> out;
    for (const auto& dir : dirs) {
        std::vector<fs::path> here;
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            auto parsed = pyenv::parse_wheel_name(entry.path().filename().string());
            if (!parsed || parsed->normalized_name != name || !same_version(parsed->version, version)) continue;
            if (entry.is_regular_file(ec)) here.push_back(entry.path());
        }
        std::sort(here.begin(), here.end(), [&](const fs::path& a, const fs::path& b) {
            bool ta = !tag.empty() && tag_triple(a) == tag;
            bool tb = !tag.empty() && tag_triple(b) == tag;
            if (ta != tb) return ta;
            return a.filename() < b.filename();
        });
        out.insert(out.end(), here.begin(), here.end());
    }
    return out;
}

std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

/// Chooses a source for one package, collecting why each rejected candidate did not do.
class SourceChooser {
public:
    SourceChooser(const Package& pkg, const RollbackSources& sources)
        : m_pkg(pkg), m_origin(pkg.origin), m_sources(sources) {}

    std::optional<InstallSource> choose() {
        const bool local = m_origin.kind == OriginKind::local || m_origin.kind == OriginKind::url ||
                           m_origin.kind == OriginKind::editable;
        std::optional<fs::path> local_path = file_url_path(m_origin.url);
        if (m_origin.kind == OriginKind::editable) return editable(local_path);
        if (local && local_path && !fs::is_directory(*local_path)) {
            if (auto s = original_file(*local_path)) return s;
        }
        if (auto s = artifact()) return s;
        if (auto s = find_links()) return s;
        if (local && local_path) {
            // A local source tree (not a wheel): rebuild it from the directory.
            if (fs::is_directory(*local_path))
                return InstallSource{InstallSource::Kind::direct_url, {}, {}, m_origin.url};
            if (m_origin.artifact_sha256.empty()) m_notes.push_back("no copy was kept in the artifact store");
            return std::nullopt;
        }
        if (m_origin.kind == OriginKind::vcs || (m_origin.kind == OriginKind::url && !m_origin.url.empty()))
            return InstallSource{InstallSource::Kind::direct_url, {}, {}, direct_requirement_url()};
        if (m_sources.index_url) return InstallSource{InstallSource::Kind::index, {}, {*m_sources.index_url}, {}};
        if (m_origin.kind == OriginKind::index && !m_origin.index_urls.empty())
            return InstallSource{InstallSource::Kind::index, {}, m_origin.index_urls, {}};
        m_notes.push_back(m_origin.kind == OriginKind::index
                              ? "it came from an index that was not recorded; give --index-url or --find-links"
                              : "its origin is unknown (no index or URL recorded); give --index-url or "
                                "--find-links");
        return std::nullopt;
    }

    [[nodiscard]] std::string why() const {
        return m_notes.empty() ? std::string("no source found") : core::join(m_notes, "; ");
    }

private:
    std::optional<InstallSource> editable(const std::optional<fs::path>& dir) {
        if (dir && fs::is_directory(*dir)) return InstallSource{InstallSource::Kind::editable, {}, {}, dir->string()};
        m_notes.push_back(fmt::format("editable source {} no longer exists", dir ? dir->string() : m_origin.url));
        return std::nullopt;
    }

    /// Does `wheel` hold the recorded bytes? True when nothing was recorded to compare with.
    bool matches_recorded(const fs::path& wheel) {
        if (m_origin.artifact_sha256.empty()) return true;
        auto digest = core::sha256_file(wheel);
        if (digest && *digest == m_origin.artifact_sha256) return true;
        m_notes.push_back(fmt::format("{} is not the recorded wheel (sha256 {}, recorded {})", wheel.string(),
                                      digest ? short_sha(*digest) : "unreadable", short_sha(m_origin.artifact_sha256)));
        return false;
    }

    std::optional<InstallSource> original_file(const fs::path& wheel) {
        if (!fs::is_regular_file(wheel)) {
            m_notes.push_back(fmt::format("{} no longer exists", wheel.string()));
            return std::nullopt;
        }
        if (!matches_recorded(wheel)) return std::nullopt;
        return InstallSource{InstallSource::Kind::original_file, wheel, {}, {}};
    }

    std::optional<InstallSource> artifact() {
        const auto& sha = m_origin.artifact_sha256;
        if (sha.empty()) return std::nullopt;
        if (m_sources.store) {
            if (auto wheel = m_sources.store->find(sha))
                return InstallSource{InstallSource::Kind::artifact, *wheel, {}, {}};
            m_notes.push_back(fmt::format("artifact sha256:{} is not in the store {}", short_sha(sha),
                                          m_sources.store->root().string()));
        } else {
            m_notes.push_back(fmt::format("artifact sha256:{} recorded but no artifact store given", short_sha(sha)));
        }
        return std::nullopt;
    }

    std::optional<InstallSource> find_links() {
        if (m_sources.find_links.empty()) return std::nullopt;
        auto wheels = matching_wheels(m_sources.find_links, m_pkg.name, m_pkg.version, m_pkg.wheel_tag);
        for (const auto& wheel : wheels) {
            if (matches_recorded(wheel)) return InstallSource{InstallSource::Kind::find_links, wheel, {}, {}};
        }
        if (wheels.empty()) {
            std::vector<std::string> dirs;
            for (const auto& d : m_sources.find_links) dirs.push_back(d.string());
            m_notes.push_back(
                fmt::format("no wheel of {} {} in --find-links {}", m_pkg.name, m_pkg.version, core::join(dirs, ", ")));
        }
        return std::nullopt;
    }

    std::string direct_requirement_url() const {
        if (m_origin.kind != OriginKind::vcs || m_origin.vcs.empty() ||
            core::starts_with(m_origin.url, m_origin.vcs + "+"))
            return m_origin.url;
        std::string url = m_origin.vcs + "+" + m_origin.url;
        if (!m_origin.commit.empty()) url += "@" + m_origin.commit;
        return url;
    }

    const Package& m_pkg;
    const Origin& m_origin;
    const RollbackSources& m_sources;
    std::vector<std::string> m_notes;
};

/// Why `want` must be (re)installed over `have` (null when missing); "" when it need not be.
std::string install_reason(const Package& want, const Package* have) {
    if (!have) return "missing";
    if (!same_version(have->version, want.version)) return fmt::format("{} -> {}", have->version, want.version);
    if (have->version != want.version)  // same PEP 440 version, spelt differently
        return fmt::format("reinstall: version spelt {} (recorded {})", have->version, want.version);
    if (!want.record_sha256.empty() && !have->record_sha256.empty() && want.record_sha256 != have->record_sha256)
        return "reinstall: RECORD differs";
    return {};
}

bool has_blank(const std::string& s) {
    return std::any_of(s.begin(), s.end(),
                       [](char c) { return c == ' ' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

}  // namespace

std::vector<std::string> target_problems(const Manifest& target) {
    std::vector<std::string> out;
    for (const auto& entry : target.packages) {
        const std::string& key = entry.first;  // a plain reference: clang 14 cannot capture a binding
        const Package& p = entry.second;
        auto bad = [&](const std::string& what) { out.push_back(fmt::format("{}: {}", key, what)); };
        if (!pyenv::is_valid_name(key) || pyenv::normalize_name(key) != key) {
            bad("not a normalised PEP 503 project name");
            continue;  // the other fields cannot be trusted to belong to anything
        }
        if (!p.name.empty() && p.name != key) bad(fmt::format("listed under another name '{}'", p.name));
        if (!p.display_name.empty() &&
            (!pyenv::is_valid_name(p.display_name) || pyenv::normalize_name(p.display_name) != key))
            bad(fmt::format("display name '{}' is not a spelling of {}", p.display_name, key));
        if (auto v = pyenv::Version::parse(p.version); !v)
            bad(fmt::format("version '{}' is not a PEP 440 version", p.version));
        if (!p.record_sha256.empty() && !core::is_sha256_hex(p.record_sha256))
            bad(fmt::format("record_sha256 '{}' is not a sha256 digest (64 lower-case hex digits)", p.record_sha256));
        if (!p.origin.artifact_sha256.empty() && !core::is_sha256_hex(p.origin.artifact_sha256))
            bad(
                fmt::format("origin.artifact_sha256 '{}' is not a sha256 digest (64 lower-case hex "
                            "digits)",
                            p.origin.artifact_sha256));
        // URLs go onto the command line as one argument each (`name @ url`, `--index-url url`):
        // a blank would let the rest read as a marker or another requirement.
        if (has_blank(p.origin.url)) bad(fmt::format("origin.url '{}' contains blanks", p.origin.url));
        for (const auto& url : p.origin.index_urls)
            if (url.empty() || has_blank(url)) bad(fmt::format("origin.index_urls entry '{}' is not a URL", url));
    }
    return out;
}

Result<Package> read_installed_package(const pyenv::Distribution& dist) { return manifest::read_package(dist); }

const char* to_string(InstallSource::Kind kind) {
    switch (kind) {
        case InstallSource::Kind::original_file: return "original-file";
        case InstallSource::Kind::artifact: return "artifact";
        case InstallSource::Kind::find_links: return "find-links";
        case InstallSource::Kind::index: return "index";
        case InstallSource::Kind::direct_url: return "url";
        case InstallSource::Kind::editable: return "editable";
    }
    return "?";
}

std::string InstallSource::describe() const {
    switch (kind) {
        case Kind::original_file: return "local wheel " + wheel.string();
        case Kind::artifact: return "artifact store " + wheel.string();
        case Kind::find_links: return "find-links " + wheel.string();
        case Kind::index: return "index " + core::join(index_urls, " + ");
        case Kind::direct_url: return "url " + url;
        case Kind::editable: return "editable " + url;
    }
    return "?";
}

std::string RollbackPlan::format() const {
    std::string out;
    for (const auto& r : remove) out += fmt::format("  - {} {} (remove)\n", r.name, r.version);
    for (const auto& i : install) {
        const char* mark = i.current.empty() ? "+" : "~";
        out += fmt::format("  {} {} {} ({}) from {}\n", mark, i.name, i.version, i.reason, i.source.describe());
    }
    for (const auto& u : unreachable)
        out += fmt::format("  ! {} {}: cannot be restored: {}\n", u.name, u.version, u.why);
    return out;
}

std::string RollbackPlan::summary() const {
    if (empty() && unreachable.empty()) return "nothing to do";
    std::vector<std::string> parts;
    if (!remove.empty()) parts.push_back(fmt::format("{} to remove", remove.size()));
    if (!install.empty()) parts.push_back(fmt::format("{} to install", install.size()));
    if (!unreachable.empty()) parts.push_back(fmt::format("{} unreachable", unreachable.size()));
    return core::join(parts, ", ");
}

RollbackPlan plan_rollback(const Manifest& target, const Manifest& current, const RollbackSources& sources) {
    RollbackPlan plan;
    for (const auto& [name, have] : current.packages) {
        if (!target.packages.count(name)) plan.remove.push_back({name, have.version});
    }
    for (const auto& [name, want] : target.packages) {
        auto it = current.packages.find(name);
        const Package* have = it == current.packages.end() ? nullptr : &it->second;
        std::string reason = install_reason(want, have);
        if (reason.empty()) continue;
        SourceChooser chooser(want, sources);
        auto source = chooser.choose();
        if (!source) {
            plan.unreachable.push_back({name, want.version, chooser.why()});
            continue;
        }
        RollbackInstall step;
        step.name = name;
        step.display_name = want.display_name.empty() ? name : want.display_name;
        step.version = want.version;
        step.current = have ? have->version : "";
        step.reinstall = have && same_version(have->version, want.version);
        step.reason = std::move(reason);
        step.source = std::move(*source);
        step.target = want;
        plan.install.push_back(std::move(step));
    }
    return plan;  // std::map iteration keeps every list sorted by name
}

std::vector<std::string> package_mismatches(const Manifest& target, const Manifest& actual) {
    std::map<std::string, std::string> lines;
    for (const auto& [name, want] : target.packages) {
        auto it = actual.packages.find(name);
        if (it == actual.packages.end()) {
            lines[name] = fmt::format("{} {}: missing", name, want.version);
        } else if (it->second.version != want.version) {
            lines[name] = fmt::format("{}: {} installed, expected {}", name, it->second.version, want.version);
        } else if (!want.record_sha256.empty() && it->second.record_sha256 != want.record_sha256) {
            lines[name] = fmt::format("{} {}: RECORD differs (sha256 {}, expected {})", name, want.version,
                                      short_sha(it->second.record_sha256), short_sha(want.record_sha256));
        }
    }
    for (const auto& [name, have] : actual.packages) {
        if (!target.packages.count(name)) lines[name] = fmt::format("{} {}: not in the target", name, have.version);
    }
    std::vector<std::string> out;
    for (auto& [name, line] : lines) out.push_back(std::move(line));
    return out;
}

std::optional<fs::path> find_wheel(const std::vector<fs::path>& dirs, const std::string& name,
                                   const std::string& version, const std::string& tag) {
    auto wheels = matching_wheels(dirs, name, version, tag);
    if (wheels.empty()) return std::nullopt;
    return wheels.front();
}

std::optional<fs::path> file_url_path(const std::string& url) {
    auto after_scheme = core::after_prefix(url, "file://");
    if (!after_scheme) return std::nullopt;
    std::string_view rest = *after_scheme;
    // file://localhost/p and file:///p name the same path; other hosts are not local.
    // ("file://localhostX/p" then starts with 'X' and is refused below.)
    (void)core::consume_prefix(rest, "localhost");
    if (rest.empty() || rest[0] != '/') return std::nullopt;
    std::string out;
    for (size_t i = 0; i < rest.size(); ++i) {
        auto hex = [](char c) -> int {
            if (c >= '0' && c <= '9') return c - '0';
            if (c >= 'a' && c <= 'f') return c - 'a' + 10;
            if (c >= 'A' && c <= 'F') return c - 'A' + 10;
            return -1;
        };
        if (rest[i] == '%' && i + 2 < rest.size() && hex(rest[i + 1]) >= 0 && hex(rest[i + 2]) >= 0) {
            out += static_cast<char>(hex(rest[i + 1]) * 16 + hex(rest[i + 2]));
            i += 2;
        } else {
            out += rest[i];
        }
    }
    return fs::path(out);
}

}  // namespace bootstrap::rollback
