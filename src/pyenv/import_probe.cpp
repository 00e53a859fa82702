#include "pyenv/import_probe.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/strings.hpp"
#include "inspect/elf_needed.hpp"

namespace bootstrap::pyenv {

namespace fs = std::filesystem;

namespace {

// The probe proper, shared by the one-shot script and the server (probe_server.cpp).
constexpr const char* k_probe_function = R"PY(
import importlib, os, sys, traceback
def _bs_probe(mod, attr, equals=None):
    try:
        m = importlib.import_module(mod)
    except BaseException as e:
        traceback.print_exc()
        chain, seen = [], set()
        while e is not None and id(e) not in seen:
            seen.add(id(e))
            chain.append(e)
            e = e.__cause__ or e.__context__
        root = chain[-1]
        print("bootstrap-verify: import %s failed: %s: %s" % (mod, type(chain[0]).__name__, chain[0]))
        if root is not chain[0]:
            print("bootstrap-verify: root cause: %s: %s" % (type(root).__name__, root))
        tb = root.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is not None:
            print("bootstrap-verify: root cause at: %s:%d" % (tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        return 3
    if attr and not hasattr(m, attr):
        print("bootstrap-verify: module %s (%s) has no attribute %r" % (mod, getattr(m, "__file__", "?"), attr))
        return 4
    if equals is not None and str(getattr(m, attr)) != equals:
        print("bootstrap-verify: %s.%s is %r, the recipe wants %r" % (mod, attr, str(getattr(m, attr)), equals))
        return 5
    print("bootstrap-verify: import %s%s ok (%s)" % (mod, "." + attr if attr else "", getattr(m, "__file__", "built-in")))
    return 0
)PY";

// argv[3], when given: modules to import first, comma-separated; their failures are left to
// the module's own import to show. argv[4], when given: the value str(MOD.ATTR) must have.
constexpr const char* k_probe_main = R"PY(
for _p in (sys.argv[3].split(",") if len(sys.argv) > 3 else []):
    if _p:
        try:
            importlib.import_module(_p)
        except BaseException:
            pass
sys.exit(_bs_probe(sys.argv[1], sys.argv[2], sys.argv[4] if len(sys.argv) > 4 else None))
)PY";

bool is_torch_library(const std::string& needed) {
    return core::starts_with(needed, "libc10") || core::starts_with(needed, "libtorch");
}

}  // namespace

const char* import_probe_function() { return k_probe_function; }

const char* import_probe_script() {
    static const std::string script = std::string(k_probe_function) + k_probe_main;
    return script.c_str();
}

fs::path find_extension_module(const std::string& module, const std::vector<fs::path>& search_dirs) {
    auto parts = core::split(module, '.');
    if (module.empty() || parts.empty()) return {};
    const std::string last = std::string(parts.back());
    for (const auto& dir : search_dirs) {
        fs::path parent = dir;
        for (size_t i = 0; i + 1 < parts.size(); ++i) parent /= std::string(parts[i]);
        std::error_code ec;
        if (fs::is_directory(parent / last, ec) || fs::exists(parent / (last + ".py"), ec))
            return {};  // Python comes first here: a package or a module file
        fs::directory_iterator it(parent, ec), end;
        std::vector<fs::path> found;
        for (; !ec && it != end; it.increment(ec)) {
            std::string name = it->path().filename().string();
            if (core::starts_with(name, last + ".") && name.ends_with(".so") &&
                (name == last + ".so" || name.find('.', last.size() + 1) != std::string::npos))
                found.push_back(it->path());
        }
        if (!found.empty()) {
            std::sort(found.begin(), found.end());
            return found.front();
        }
    }
    return {};
}

std::vector<fs::path> module_search_dirs(const fs::path& site_packages) {
    std::vector<fs::path> out;
    if (site_packages.empty()) return out;
    out.push_back(site_packages);
    std::error_code ec;
    std::vector<fs::path> pth;
    for (fs::directory_iterator it(site_packages, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".pth") pth.push_back(it->path());
    std::sort(pth.begin(), pth.end());
    for (const auto& file : pth) {
        auto text = core::read_file(file);
        if (!text) continue;
        for (const auto& raw : core::split(*text, '\n')) {
            std::string_view line = core::trim(raw);
            if (line.empty() || line.front() == '#' || core::starts_with(line, "import ")) continue;
            fs::path dir = fs::path(std::string(line));
            if (dir.is_relative()) dir = site_packages / dir;
            if (fs::is_directory(dir, ec)) out.push_back(dir);
        }
    }
    return out;
}

ProbePreload probe_preload(const std::string& module, const std::vector<fs::path>& search_dirs,
                           const std::vector<std::string>& declared) {
    ProbePreload out;
    for (const auto& m : declared)
        if (m != module && std::find(out.modules.begin(), out.modules.end(), m) == out.modules.end())
            out.modules.push_back(m);
    if (!declared.empty()) out.reason = "the recipe asks for it";
    if (module == "torch" || core::starts_with(module, "torch.") ||
        std::find(out.modules.begin(), out.modules.end(), "torch") != out.modules.end())
        return out;
    fs::path so = find_extension_module(module, search_dirs);
    if (so.empty()) return out;
    auto needed = inspect::read_needed_libraries(so);
    if (!needed) return out;  // not ours to judge: the import will say what is wrong
    for (const auto& lib : *needed)
        if (is_torch_library(lib)) {
            out.modules.insert(out.modules.begin(), "torch");
            out.reason = fmt::format("{} needs {}", so.filename().string(), lib);
            break;
        }
    return out;
}

exec::ProcessSpec import_probe_spec(const fs::path& python, const std::string& module, const std::string& attr,
                                    exec::EnvMap env, const std::vector<std::string>& preload,
                                    const std::optional<std::string>& equals) {
    exec::ProcessSpec spec;
    spec.argv = {python.string(), "-c", import_probe_script(), module, attr};
    if (!preload.empty() || equals) spec.argv.push_back(core::join(preload, ","));
    if (equals) spec.argv.push_back(*equals);
    spec.cwd = "/";
    spec.env = std::move(env);
    spec.capture = true;
    return spec;
}

std::string describe_probe(const fs::path& python, const std::string& module, const std::string& attr,
                           const std::vector<std::string>& preload, const std::optional<std::string>& equals) {
    std::string out =
        fmt::format("{} -c <import probe>: import {}{}", python.string(), module, attr.empty() ? "" : "." + attr);
    if (equals) out += fmt::format(" == '{}'", *equals);
    if (!preload.empty()) out += " after import " + core::join(preload, ", ");
    return out;
}

namespace {

/// "import MOD failed: REST" -> REST (MOD: no whitespace).
std::optional<std::string_view> failed_message(std::string_view line) {
    constexpr std::string_view k_import = "import ", k_failed = " failed: ";
    if (!core::starts_with(line, k_import)) return std::nullopt;
    size_t module_end = line.find_first_of(" \t\r\f\v", k_import.size());
    if (module_end == k_import.size() || module_end == std::string_view::npos ||
        line.substr(module_end, k_failed.size()) != k_failed)
        return std::nullopt;
    return line.substr(module_end + k_failed.size());
}

/// "ModuleNotFoundError: No module named 'a.b'" -> "a" (the top-level module), else "".
std::string missing_top_module(std::string_view text) {
    constexpr std::string_view k_prefix = "ModuleNotFoundError: No module named '";
    if (!core::starts_with(text, k_prefix) || text.size() < k_prefix.size() + 1 || text.back() != '\'') return {};
    std::string_view name = text.substr(k_prefix.size(), text.size() - k_prefix.size() - 1);
    if (name.find('\'') != std::string_view::npos) return {};
    std::string_view top = name.substr(0, name.find('.'));
    return std::string(top);
}

/// The module named by "ImportError: cannot import name 'X' from 'M' (FILE)" or
/// "AttributeError: module 'M' has no attribute 'X'", else "".
std::string blamed_module(std::string_view text) {
    auto quoted_after = [&](std::string_view marker) -> std::string {
        size_t at = text.find(marker);
        if (at == std::string_view::npos) return {};
        size_t begin = at + marker.size();
        size_t end = text.find('\'', begin);
        if (end == std::string_view::npos) return {};
        return std::string(text.substr(begin, end - begin));
    };
    if (core::starts_with(text, "ImportError: cannot import name '")) return quoted_after("' from '");
    if (core::starts_with(text, "AttributeError: module '") &&
        text.find("' has no attribute '") != std::string_view::npos)
        return quoted_after("AttributeError: module '");
    return {};
}

}  // namespace

// Plain string scanning, no std::regex: an exception message can be any length (a 40,000
// character one overflowed the stack of libstdc++'s recursive regex matcher).
ImportFailure parse_import_probe(std::string_view output) {
    ImportFailure f;
    constexpr std::string_view k_root = "root cause: ", k_root_at = "root cause at: ";
    for (const auto& raw : core::split(output, '\n')) {
        std::string_view line = core::trim(raw);
        if (!core::starts_with(line, k_probe_prefix)) continue;
        line.remove_prefix(k_probe_prefix.size());
        if (core::starts_with(line, k_root_at)) {  // a location, not part of the message
            f.root_cause_at = line.substr(k_root_at.size());
            continue;
        }
        f.summary += (f.summary.empty() ? "" : "; ") + std::string(line);
        if (auto message = failed_message(line)) f.error = *message;
        else if (core::starts_with(line, k_root)) f.root_cause = line.substr(k_root.size());
        else if (line.find(" has no attribute ") != std::string_view::npos) f.missing_attribute = true;
    }
    if (f.root_cause.empty()) f.root_cause = f.error;
    f.missing_module = missing_top_module(f.root_cause);
    f.blamed_module = blamed_module(f.root_cause);
    return f;
}

}  // namespace bootstrap::pyenv
