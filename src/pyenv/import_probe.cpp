#include "pyenv/import_probe.hpp"

#include <optional>

#include "core/strings.hpp"

namespace bootstrap::pyenv {

const char *import_probe_script() {
    return R"PY(
import importlib, sys, traceback
mod, attr = sys.argv[1], sys.argv[2]
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
    sys.exit(3)
if attr and not hasattr(m, attr):
    print("bootstrap-verify: module %s (%s) has no attribute %r" % (mod, getattr(m, "__file__", "?"), attr))
    sys.exit(4)
print("bootstrap-verify: import %s%s ok (%s)" % (mod, "." + attr if attr else "", getattr(m, "__file__", "built-in")))
)PY";
}

exec::ProcessSpec import_probe_spec(const std::filesystem::path& python, const std::string& module,
                                    const std::string& attr, exec::EnvMap env, bool preload_torch) {
    static constexpr const char* k_preload_torch = "try:\n    import torch\nexcept BaseException:\n    pass\n";
    exec::ProcessSpec spec;
    std::string script = import_probe_script();
    if (preload_torch && module != "torch") script = k_preload_torch + script;
    spec.argv = {python.string(), "-c", std::move(script), module, attr};
    spec.cwd = "/";
    spec.env = std::move(env);
    spec.capture = true;
    return spec;
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
    if (!core::starts_with(text, k_prefix) || text.size() < k_prefix.size() + 1 ||
        text.back() != '\'')
        return {};
    std::string_view name = text.substr(k_prefix.size(), text.size() - k_prefix.size() - 1);
    if (name.find('\'') != std::string_view::npos) return {};
    std::string_view top = name.substr(0, name.find('.'));
    return std::string(top);
}

} // namespace

// Plain string scanning, no std::regex: an exception message can be any length (a 40,000
// character one overflowed the stack of libstdc++'s recursive regex matcher).
ImportFailure parse_import_probe(std::string_view output) {
    ImportFailure f;
    constexpr std::string_view k_root = "root cause: ";
    for (const auto &raw : core::split(output, '\n')) {
        std::string_view line = core::trim(raw);
        if (!core::starts_with(line, k_probe_prefix))
            continue;
        line.remove_prefix(k_probe_prefix.size());
        f.summary += (f.summary.empty() ? "" : "; ") + std::string(line);
        if (auto message = failed_message(line))
            f.error = *message;
        else if (core::starts_with(line, k_root))
            f.root_cause = line.substr(k_root.size());
        else if (line.find(" has no attribute ") != std::string_view::npos)
            f.missing_attribute = true;
    }
    if (f.root_cause.empty())
        f.root_cause = f.error;
    f.missing_module = missing_top_module(f.root_cause);
    return f;
}

} // namespace bootstrap::pyenv
