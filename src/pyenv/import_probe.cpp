#include "pyenv/import_probe.hpp"

#include <regex>

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

ImportFailure parse_import_probe(std::string_view output) {
    ImportFailure f;
    static const std::regex failed(R"(^import \S+ failed: (.*)$)");
    static const std::regex root(R"(^root cause: (.*)$)");
    static const std::regex missing(R"(^ModuleNotFoundError: No module named '([^'.]+)[^']*'$)");
    for (const auto &raw : core::split(output, '\n')) {
        std::string line(core::trim(raw));
        if (!core::starts_with(line, k_probe_prefix))
            continue;
        line = line.substr(k_probe_prefix.size());
        f.summary += (f.summary.empty() ? "" : "; ") + line;
        std::smatch m;
        if (std::regex_match(line, m, failed))
            f.error = m[1];
        else if (std::regex_match(line, m, root))
            f.root_cause = m[1];
        else if (line.find(" has no attribute ") != std::string::npos)
            f.missing_attribute = true;
    }
    if (f.root_cause.empty())
        f.root_cause = f.error;
    std::smatch m;
    if (std::regex_match(f.root_cause, m, missing))
        f.missing_module = m[1];
    return f;
}

} // namespace bootstrap::pyenv
