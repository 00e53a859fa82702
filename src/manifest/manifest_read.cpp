// Reading a manifest without a DOM: nlohmann's parser (its lexer, its syntax errors) feeds a SAX
// handler that writes straight into the Manifest. A rollback reads two or three manifests of a
// few hundred KB; building nlohmann's tree of std::maps and copying it out again was a quarter of
// its time.
//
// The errors are the ones the tree reader gave (tests/unit/manifest/test_manifest_read.cpp keeps
// that reader as the oracle): a syntax error first, then the top is not an object, then the
// schema, then the first bad field in the order the tree reader looked at them (label, venv,
// packages by name, python, torch, host, build_env, recipe, device, run), whatever order the
// document has them in. A key given twice counts once, its last value, as in the tree.

#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/fs.hpp"
#include "core/json_sax.hpp"
#include "manifest/manifest.hpp"

namespace bootstrap::manifest {

namespace {

using Kind = core::JsonKind;

/// What a JSON object or array being read is, and so where its members go.
enum class Ctx : std::uint8_t {
    skip,  // an unknown key's value, or a value of the wrong type: its members are ignored
    top,
    packages,
    package,
    origin,
    index_urls,
    python,
    torch,
    host,
    build_env,
    recipe,
    device,
    run,
};

/// The tree reader's order of reading, so the first error is the one it would have thrown:
/// (section, package name, field, map key).
using ErrorRank = std::tuple<int, std::string, int, std::string>;

// Sections in read_manifest's order.
constexpr int k_label = 1, k_venv = 2, k_packages = 3, k_package = 4, k_python = 5, k_torch = 6, k_host = 7,
              k_build_env = 8, k_recipe = 9, k_device = 10, k_run = 11;
constexpr int k_no_version = 4, k_origin_object = 10, k_origin_last = 18;  // in a package's ranks

/// A string field of a package or an origin: its key, its rank, where it goes.
template <class Into>
struct TextField {
    std::string_view key;
    int rank;
    std::string Into::*member;
};

// A package's fields in read_package's order; its origin's after them in origin_from_json's.
// "requested" (6, a boolean), "origin" (10), its "kind" (11) and "index_urls" (15) are read apart.
constexpr int k_requested = 6, k_origin_kind = 11, k_index_urls = 15;
constexpr TextField<Package> k_package_text[] = {{"display_name", 1, &Package::display_name},
                                                 {"version", 2, &Package::version},
                                                 {"broken", 3, &Package::broken},
                                                 {"installer", 5, &Package::installer},
                                                 {"wheel_tag", 7, &Package::wheel_tag},
                                                 {"record_sha256", 8, &Package::record_sha256},
                                                 {"record_sha256_portable", 9, &Package::record_sha256_portable}};
constexpr TextField<Origin> k_origin_text[] = {{"url", 12, &Origin::url},
                                               {"vcs", 13, &Origin::vcs},
                                               {"commit", 14, &Origin::commit},
                                               {"step", 16, &Origin::step},
                                               {"artifact_sha256", 17, &Origin::artifact_sha256},
                                               {"archive_hash", 18, &Origin::archive_hash}};

template <class Into, std::size_t N>
const TextField<Into>* find_field(const TextField<Into> (&fields)[N], std::string_view key) {
    for (const auto& f : fields)
        if (f.key == key) return &f;
    return nullptr;
}

class ManifestSax : public core::JsonSaxReader<ManifestSax, Ctx> {
public:
    explicit ManifestSax(Manifest& m) : JsonSaxReader(Ctx::top), m_m(m) {}

    /// After the parse: the error the tree reader would give, or "" with the manifest filled in.
    /// A schema above ours is put in `out` as its own error (and "" returned).
    std::string finish(const std::string& source, Result<Manifest>& out) {
        if (!syntax_error().empty()) return syntax_error();
        if (not_object()) return "expected a JSON object";
        if (!m_schema_seen) return "no \"schema\" field";
        if (!m_schema_integer) return "\"schema\" is not an integer";
        const int version = m_schema > INT_MAX ? INT_MAX : m_schema < INT_MIN ? INT_MIN : static_cast<int>(m_schema);
        if (version > k_manifest_schema) {
            out = fail(ErrorCode::io, fmt::format("{}: manifest schema {} is newer than this bootstrap "
                                                  "understands ({}); upgrade bootstrap",
                                                  source, version, k_manifest_schema));
            return {};
        }
        if (version < 1) return fmt::format("unknown schema {}", version);
        if (!m_packages_seen) bad({k_packages, {}, 0, {}}, "no \"packages\" object");
        if (!m_errors.empty()) return m_errors.first().second;
        m_m.schema = version;
        return {};
    }

    // ---- what JsonSaxReader calls ----
    Ctx on_value(Frame& f, Kind k) {
        switch (f.ctx) {
            case Ctx::skip: break;  // never a frame's: JsonSaxReader counts those
            case Ctx::top: return top_field(f.key, k);
            case Ctx::packages: return package_start(f.key, k);
            case Ctx::package: return package_field(f.key, k);
            case Ctx::origin: return origin_field(f.key, k);
            case Ctx::index_urls:
                if (k == Kind::string) {
                    m_pkg->origin.index_urls.push_back(str());
                } else {
                    index_urls_bad();
                }
                break;
            case Ctx::python: return python_field(f.key, k);
            case Ctx::torch: return torch_field(f.key, k);
            case Ctx::host: return host_field(f.key, k);
            case Ctx::recipe: return recipe_field(f.key, k);
            case Ctx::run: return run_field(f.key, k);
            case Ctx::build_env: map_entry(m_m.build_env, "build_env", k_build_env, f.key, k); break;
            case Ctx::device: map_entry(m_m.device, "device", k_device, f.key, k); break;
        }
        return Ctx::skip;
    }
    void on_end(Frame& f) {
        if (f.ctx == Ctx::package && m_pkg->version.empty() && m_pkg->broken.empty())
            bad({k_package, m_pkg->name, k_no_version, {}}, fmt::format("packages.{}: no version", m_pkg->name));
    }

private:
    Manifest& m_m;
    Package* m_pkg = nullptr;  // the package being read (Ctx::package, origin, index_urls)
    bool m_schema_seen = false, m_schema_integer = false;
    std::int64_t m_schema = 0;
    bool m_packages_seen = false;
    core::JsonFirstError<ErrorRank> m_errors;

    void bad(ErrorRank rank, std::string message) { m_errors.add(std::move(rank), std::move(message)); }
    /// A key given again: what its earlier value got wrong no longer counts.
    void forget(int section, const std::string& name = {}, int first = INT_MIN, int last = INT_MAX) {
        m_errors.forget({section, name, first, {}}, [&](const ErrorRank& r) {
            return std::get<0>(r) == section && std::get<1>(r) == name && std::get<2>(r) <= last;
        });
    }
    void forget_section(int section) {
        m_errors.forget({section, {}, INT_MIN, {}}, [&](const ErrorRank& r) { return std::get<0>(r) == section; });
    }

    /// A string field: the value, or `path()` (its dotted path, built only then) is an error
    /// of rank `rank()`. Returns what to push.
    template <class Rank, class Path>
    Ctx text(Kind k, std::string& into, Rank rank, Path path) {
        if (k == Kind::string) {
            into.assign(str());
        } else {
            bad(rank(), fmt::format("{}: expected a string", path()));
        }
        return Ctx::skip;
    }

    Ctx top_field(const std::string& key, Kind k) {
        if (key == "packages") return packages_start(k);
        if (key == "schema") {
            m_schema_seen = true;
            m_schema_integer = is_integer(k);
            m_schema = k == Kind::unsigned_integer && unsigned_integer() > static_cast<std::uint64_t>(INT64_MAX)
                           ? INT64_MAX
                           : integer();
            return Ctx::skip;
        }
        if (key == "label") {
            forget(k_label);
            return text(
                k, m_m.label,
                [] {
                return ErrorRank{k_label, {}, 0, {}};
                },
                [&] { return key; });
        }
        if (key == "venv") {
            forget(k_venv);
            return text(
                k, m_m.venv,
                [] {
                return ErrorRank{k_venv, {}, 0, {}};
                },
                [&] { return key; });
        }
        if (key == "python") return section(k, key, k_python, Ctx::python, [&] { m_m.python = {}; });
        if (key == "torch")
            return section(
                k, key, k_torch, Ctx::torch, [&] { m_m.torch.reset(); }, [&] { m_m.torch.emplace(); });
        if (key == "host") return section(k, key, k_host, Ctx::host, [&] { m_m.host = {}; });
        if (key == "recipe")
            return section(k, key, k_recipe, Ctx::recipe, [&] {
                m_m.recipe_name.clear();
                m_m.recipe_digest.clear();
            });
        if (key == "run")
            return section(
                k, key, k_run, Ctx::run, [&] { m_m.run.reset(); }, [&] { m_m.run.emplace(); });
        if (key == "build_env") return section(k, key, k_build_env, Ctx::build_env, [&] { m_m.build_env.clear(); });
        if (key == "device") return section(k, key, k_device, Ctx::device, [&] { m_m.device.clear(); });
        return Ctx::skip;  // a newer bootstrap's field
    }

    /// An object-valued section: null reads as absent (`reset`), an object is read from empty
    /// (`reset`, then `open`), anything else is an error.
    template <class Reset, class Open = void (*)()>
    Ctx section(
        Kind k, const std::string& key, int rank, Ctx ctx, Reset reset, Open open = [] {}) {
        forget_section(rank);
        reset();
        if (k == Kind::null) return Ctx::skip;
        if (k != Kind::object) {
            bad({rank, {}, 0, {}}, fmt::format("{}: expected an object", key));
            return Ctx::skip;
        }
        open();
        return ctx;
    }

    Ctx packages_start(Kind k) {
        forget_section(k_packages);
        forget_section(k_package);
        m_m.packages.clear();
        m_packages_seen = k != Kind::null;
        if (k == Kind::null) return Ctx::skip;
        if (k != Kind::object) {
            bad({k_packages, {}, 0, {}}, "packages: expected an object");
            return Ctx::skip;
        }
        return Ctx::packages;
    }

    Ctx package_start(const std::string& name, Kind k) {
        forget(k_package, name);
        forget(k_packages, name);
        if (k != Kind::object) {
            m_m.packages.erase(name);
            // The tree reader took every package's object before reading any of them.
            bad({k_packages, name, 1, {}}, fmt::format("packages.{}: expected an object", name));
            return Ctx::skip;
        }
        // Written sorted: the new name goes at the end, where the hint points.
        auto it = m_m.packages.try_emplace(m_m.packages.end(), name);
        it->second = Package{};
        it->second.name = name;
        m_pkg = &it->second;
        return Ctx::package;
    }

    Ctx package_field(const std::string& key, Kind k) {
        Package& p = *m_pkg;
        if (key == "origin") {
            forget(k_package, p.name, k_origin_object, k_origin_last);
            p.origin = {};
            if (k == Kind::null) return Ctx::skip;
            if (k != Kind::object) {
                bad({k_package, p.name, k_origin_object, {}},
                    fmt::format("packages.{}.origin: expected an object", p.name));
                return Ctx::skip;
            }
            return Ctx::origin;
        }
        if (key == "requested") {
            forget(k_package, p.name, k_requested, k_requested);
            if (k == Kind::boolean) {
                p.requested = boolean_value();
            } else {
                bad({k_package, p.name, k_requested, {}},
                    fmt::format("packages.{}.requested: expected true or false", p.name));
            }
            return Ctx::skip;
        }
        const auto* field = find_field(k_package_text, key);
        if (!field) return Ctx::skip;
        forget(k_package, p.name, field->rank, field->rank);
        return text(
            k, p.*field->member,
            [&] {
            return ErrorRank{k_package, p.name, field->rank, {}};
            },
            [&] { return fmt::format("packages.{}.{}", p.name, key); });
    }

    void index_urls_bad() {
        const std::string& name = m_pkg->name;
        bad({k_package, name, k_index_urls, {}},
            fmt::format("packages.{}.origin.index_urls: expected a list of strings", name));
    }

    Ctx origin_field(const std::string& key, Kind k) {
        Origin& o = m_pkg->origin;
        const std::string& name = m_pkg->name;
        if (key == "index_urls") {
            forget(k_package, name, k_index_urls, k_index_urls);
            o.index_urls.clear();
            if (k == Kind::array) return Ctx::index_urls;
            index_urls_bad();
            return Ctx::skip;
        }
        if (key == "kind") {
            forget(k_package, name, k_origin_kind, k_origin_kind);
            std::string kind;
            Ctx c = text(
                k, kind,
                [&] {
                return ErrorRank{k_package, name, k_origin_kind, {}};
                },
                [&] { return fmt::format("packages.{}.origin.kind", name); });
            o.kind = parse_origin_kind(kind);
            return c;
        }
        const auto* field = find_field(k_origin_text, key);
        if (!field) return Ctx::skip;
        forget(k_package, name, field->rank, field->rank);
        return text(
            k, o.*field->member,
            [&] {
            return ErrorRank{k_package, name, field->rank, {}};
            },
            [&] { return fmt::format("packages.{}.origin.{}", name, key); });
    }

    /// A section's string field, by its place in the section's list of fields (from 1).
    Ctx listed(std::string_view section, int rank, const std::string& key, Kind k,
               std::initializer_list<std::pair<std::string_view, std::string*>> fields) {
        int i = 1;
        for (const auto& [name, into] : fields) {
            if (name == key) {
                forget(rank, {}, i, i);
                return text(
                    k, *into,
                    [&] {
                    return ErrorRank{rank, {}, i, {}};
                    },
                    [&] { return fmt::format("{}.{}", section, key); });
            }
            ++i;
        }
        return Ctx::skip;
    }

    Ctx python_field(const std::string& key, Kind k) {
        auto& p = m_m.python;
        return listed("python", k_python, key, k,
                      {{"version", &p.version},
                       {"implementation", &p.implementation},
                       {"ext_suffix", &p.ext_suffix},
                       {"soabi", &p.soabi},
                       {"platform", &p.platform}});
    }
    Ctx torch_field(const std::string& key, Kind k) {
        auto& t = *m_m.torch;
        return listed("torch", k_torch, key, k,
                      {{"version", &t.version}, {"cuda", &t.cuda}, {"cxx11_abi", &t.cxx11_abi}});
    }
    Ctx host_field(const std::string& key, Kind k) {
        auto& h = m_m.host;
        return listed(
            "host", k_host, key, k,
            {{"glibc", &h.glibc}, {"glibcxx", &h.glibcxx}, {"gcc", &h.gcc}, {"nvcc", &h.nvcc}, {"driver", &h.driver}});
    }
    Ctx recipe_field(const std::string& key, Kind k) {
        return listed("recipe", k_recipe, key, k, {{"name", &m_m.recipe_name}, {"digest", &m_m.recipe_digest}});
    }
    Ctx run_field(const std::string& key, Kind k) {
        auto& r = *m_m.run;
        if (key == "ok") {
            forget(k_run, {}, 4, 4);
            if (k == Kind::boolean) {
                r.ok = boolean_value();
            } else {
                bad({k_run, {}, 4, {}}, "run.ok: expected true or false");
            }
            return Ctx::skip;
        }
        return listed("run", k_run, key, k, {{"run_id", &r.run_id}, {"phase", &r.phase}, {"time", &r.time}});
    }

    void map_entry(std::map<std::string, std::string>& into, std::string_view section, int rank, const std::string& key,
                   Kind k) {
        m_errors.erase({rank, {}, 1, key});
        if (k == Kind::string) {
            into.insert_or_assign(key, str());
        } else {
            into.erase(key);
            bad({rank, {}, 1, key}, fmt::format("{}.{}: expected a string", section, key));
        }
    }
};

}  // namespace

Result<Manifest> from_json(std::string_view text, const std::string& source) {
    Result<Manifest> out = Manifest{};
    ManifestSax sax(*out);
    try {
        nlohmann::json::sax_parse(text.data(), text.data() + text.size(), &sax);
    } catch (const std::exception& e) {  // bad_alloc, or anything nlohmann throws past parse_error
        return fail(ErrorCode::io, fmt::format("{}: not a valid manifest: {}", source, e.what()));
    }
    std::string why = sax.finish(source, out);
    if (!why.empty()) return fail(ErrorCode::io, fmt::format("{}: not a valid manifest: {}", source, why));
    return out;
}

Result<Manifest> load_manifest(const fs::path& file) {
    BS_TRY(std::string text, core::read_regular_file(file, core::k_max_user_input));
    return from_json(text, file.string());
}

}  // namespace bootstrap::manifest
