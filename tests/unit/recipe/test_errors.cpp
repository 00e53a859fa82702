// Golden recipe error text: every message a user can see, pinned exactly, with its location.
#include <catch2/catch.hpp>

#include "core/strings.hpp"
#include "recipe/recipe.hpp"
#include "recipe_text.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
using namespace bootstrap::recipe;

namespace {

using testing::k_head;
using testing::problems;

}  // namespace

TEST_CASE("golden: a typo of a key gets a suggestion, not a missing-key error") {
    CHECK(problems(k_head + "[[step]]\nid = \"torch\"\nkind = \"install\"\npakages = [\"torch\"]\n") ==
          "r.toml:9:1: unknown key 'pakages' in step 'torch' (did you mean 'packages'?)");
}

TEST_CASE("golden: an install step takes exactly one of 'packages' and 'pylock'") {
    const std::string step = k_head + "[[step]]\nid = \"pinned\"\nkind = \"install\"\n";
    CHECK(problems(step + "packages = [\"torch\"]\npylock = \"pylock.toml\"\n") ==
          "r.toml:10:10: step 'pinned' takes 'packages' or 'pylock', not both (a pylock step installs exactly the "
          "lock's pins)");
    CHECK(problems(step) == "r.toml:6:1: step 'pinned' (kind install) is missing required key 'packages'");
    CHECK(problems(step + "pylock = \"\"\n") == "r.toml:9:10: 'pylock' must name a pylock.toml file");
    CHECK(problems(step + "pylock = \"pylock.toml\"\nupgrade = true\n") ==
          "r.toml:10:11: 'upgrade' does not apply with 'pylock': the step installs the lock's exact versions");
    CHECK(problems(step + "pylock = \"pylock.toml\"\nindex_url = \"https://i/simple\"\nreinstall = true\n") ==
          "<valid>");
    CHECK(problems(k_head + "[[step]]\nid = \"r\"\nkind = \"run\"\nargv = [\"true\"]\npylock = \"p.toml\"\n") ==
          "r.toml:10:1: key 'pylock' is not valid for a step of kind 'run'");
}

TEST_CASE("golden: wrong type") {
    CHECK(problems(k_head + "[[step]]\nid = \"torch\"\nkind = \"install\"\n"
                            "packages = [\"torch\"]\nupgrade = \"yes\"\n") ==
          "r.toml:10:11: 'upgrade' must be a boolean, not a string");
    CHECK(problems(k_head + "[network]\ntimeout = \"600\"\nretries = 1.5\n") ==
          "r.toml:7:11: 'network.timeout' must be an integer, not a string\n"
          "r.toml:8:11: 'network.retries' must be an integer, not a float");
    CHECK(problems(k_head + "[[step]]\nid = \"r\"\nkind = \"run\"\nargv = [\"a\", 2]\n") ==
          "r.toml:9:14: 'argv[1]' must be a string, not an integer");
}

TEST_CASE("golden: missing required key") {
    CHECK(problems(k_head + "[[step]]\nid = \"torch\"\nkind = \"install\"\n") ==
          "r.toml:6:1: step 'torch' (kind install) is missing required key 'packages'");
    CHECK(problems(k_head + "[[step]]\nkind = \"run\"\nargv = [\"true\"]\n") ==
          "r.toml:6:1: step #1 is missing required key 'id'");
    CHECK(problems(k_head + "[[step]]\nid = \"c\"\nkind = \"check\"\n") ==
          "r.toml:6:1: step 'c' (kind check) needs at least one verify clause");
    CHECK(problems("schema = 1\nname = \"t\"\n[venv]\npython = \"3.12\"\n") ==
          "r.toml:3:1: [venv] is missing required key 'path'");
    CHECK(problems("schema = 1\n") ==
          "r.toml:1:1: missing required key 'name'\n"
          "r.toml:1:1: missing required table [venv]");
}

TEST_CASE("golden: duplicate step id") {
    CHECK(problems(k_head + "[[step]]\nid = \"torch\"\nkind = \"venv\"\n"
                            "[[step]]\nid = \"torch\"\nkind = \"venv\"\n") ==
          "r.toml:10:6: duplicate step id 'torch' (first defined at r.toml:7:6)");
}

TEST_CASE("golden: unknown placeholder with a suggestion") {
    CHECK(problems(k_head + "[[step]]\nid = \"r\"\nkind = \"run\"\n"
                            "argv = [\"python{pyhton.version}\"]\n") ==
          "r.toml:9:9: unknown placeholder '{pyhton.version}' (did you mean '{python.version}'?)");
    CHECK(problems(k_head + "[env]\nset = { A = \"{foo.bar}\" }\n") ==
          "r.toml:7:13: unknown placeholder '{foo.bar}' (known: {env.NAME}, {vars.NAME}, "
          "{venv.path}, {venv.python}, {python.version}, {python.ext_suffix}, {python.site_packages}, {host.cpus}, "
          "{device.arch}, {device.torch_arch_list}, {device.nvte_archs}, {device.cmake_archs}); for the literal "
          "text, as in a Python f-string, double the braces: '{{foo.bar}}'");
    // A Python f-string in argv: no namespace of bootstrap's, so the doubled form, never `{env.__version__}`.
    CHECK(problems(k_head + "[[step]]\nid = \"r\"\nkind = \"run\"\n"
                            "argv = [\"python\", \"-c\", \"print(f'{x.__version__}')\"]\n")
              .find("double the braces: '{{x.__version__}}'") != std::string::npos);
    CHECK(problems(k_head + "[env]\nset = { A = \"{evn.HOME}\" }\n") ==
          "r.toml:7:13: unknown placeholder '{evn.HOME}' (did you mean '{env.HOME}'?)");
}

TEST_CASE("golden: unsupported schema stops before anything else") {
    CHECK(problems("schema = 2\nname = \"t\"\nfrobnicate = true\n") ==
          "r.toml:1:10: unsupported schema version 2 (this bootstrap reads schema 1)");
    CHECK(problems("name = \"t\"\n[venv]\npath = \"/v\"\npython = \"3.12\"\n") ==
          "r.toml:1:1: missing required key 'schema' (this bootstrap reads schema 1)");
}

TEST_CASE("golden: step kinds from later releases and typos of kinds") {
    CHECK(problems(k_head + "[[step]]\nid = \"f\"\nkind = \"fetch\"\n") ==
          "r.toml:8:8: step kind 'fetch' is not supported by this version of bootstrap");
    CHECK(problems(k_head + "[[step]]\nid = \"x\"\nkind = \"instal\"\n") ==
          "r.toml:8:8: unknown step kind 'instal' (did you mean 'install'?)");
    CHECK(problems(k_head + "[[step]]\nid = \"x\"\nkind = \"compile\"\n") ==
          "r.toml:8:8: unknown step kind 'compile' (expected one of venv, install, sync, run, "
          "check, pybind11, build)");
}

TEST_CASE("golden: build sources") {
    const std::string step = k_head + "[[step]]\nid = \"apex\"\nkind = \"build\"\n";
    CHECK(problems(step + "no_build_isolation = true\n"
                          "source = { git = \"https://github.com/NVIDIA/apex.git\" }\n") ==
          "r.toml:10:10: a git source needs 'rev', the full commit id to build");
    CHECK(problems(step + "source = { git = \"https://x/apex.git\", rev = \"master\" }\n") ==
          "r.toml:9:46: 'source.rev' must be a full commit id (40 hex digits), not 'master': a branch "
          "or tag can move, and a build must be reproducible");
    CHECK(problems(step + "source = { url = \"https://x/a.tar.gz\" }\n") ==
          "r.toml:9:10: a url source needs 'sha256': an archive is never built unchecked");
    CHECK(problems(step + "source = { url = \"https://x/a.tar.gz\", sha256 = \"abc\" }\n") ==
          "r.toml:9:49: 'source.sha256' must be 64 hex digits, not 'abc'");
    CHECK(problems(step + "source = { path = \"a\", git = \"b\" }\n") ==
          "r.toml:9:10: 'source' takes only one of 'git', 'url' and 'path'");
    CHECK(problems(step + "source = { path = \"a\", rev = \"b\" }\n") ==
          "r.toml:9:30: 'rev' is valid only with 'git' in 'source'");
    CHECK(problems(step + "source = { pth = \"a\" }\n") ==
          "r.toml:9:12: unknown key 'pth' in 'source' (did you mean 'path'?)");
    CHECK(problems(step + "source = \"a\"\n") ==
          "r.toml:9:10: 'source' must be a table: { git = URL, rev = COMMIT }, { url = URL, sha256 = HEX } "
          "or { path = DIR }, not a string");
    CHECK(problems(step) == "r.toml:6:1: step 'apex' (kind build) is missing required key 'source'");
    CHECK(problems(step + "source = { path = \"a\" }\nconfig_settings = { x = 1 }\nargv = [\"x\"]\n") ==
          "r.toml:10:25: 'config_settings.x' must be a string, not an integer\n"
          "r.toml:11:1: key 'argv' is not valid for a step of kind 'build'");
}

TEST_CASE("golden: TOML syntax error") {
    CHECK(problems("schema = 1\nname = \"t\nx = 1\n") ==
          "r.toml:2:10: Error while parsing string: unescaped control characters other than TAB "
          "(U+0009) are explicitly prohibited");
    CHECK(problems("schema = 1\nschema = 1\n") ==
          "r.toml:2:10: Error while parsing key-value pair: cannot redefine existing integer "
          "'schema'");
}

TEST_CASE("golden: a key valid for another kind") {
    CHECK(problems(k_head + "[[step]]\nid = \"r\"\nkind = \"run\"\nargv = [\"true\"]\n"
                            "packages = [\"torch\"]\n") ==
          "r.toml:10:1: key 'packages' is not valid for a step of kind 'run'");
}

TEST_CASE("golden: verify clauses") {
    CHECK(problems(k_head + "[[step]]\nid = \"c\"\nkind = \"check\"\n"
                            "verify = [\"torch\", { imprt = \"torch\" }, { file = \"/x\", attr = "
                            "\"y\" },\n  { import = \"a\", file = \"b\" },\n"
                            "  { elf_symbol = \"f\" },\n"
                            "  { module = \"m\" }]\n") ==
          "r.toml:9:11: 'verify[0]' must be a table, not a string\n"
          "r.toml:9:22: unknown key 'imprt' in verify clause (did you mean 'import'?)\n"
          "r.toml:9:63: 'attr' is valid only with 'import' in a verify clause\n"
          "r.toml:10:3: a verify clause takes 'import' or 'file', not both\n"
          "r.toml:11:3: an 'elf_symbol' verify clause needs 'library' (a glob under "
          "site-packages such as \"nvidia/**/libcublasLt.so.13\", or an absolute path)\n"
          "r.toml:12:3: a verify clause needs 'import', 'file', 'cuda_arch' or 'elf_symbol'\n"
          "r.toml:12:5: unknown key 'module' in verify clause");
}

TEST_CASE("golden: an elf_symbol verify clause") {
    CHECK(problems(k_head + "[[step]]\nid = \"c\"\nkind = \"check\"\n"
                            "verify = [{ elf_symbol = \"f\", libary = \"x.so\" },\n"
                            "  { elf_symbol = \"a b\", library = \"\" },\n"
                            "  { library = \"x.so\" },\n"
                            "  { elf_symbol = 3, library = \"x.so\" }]\n") ==
          "r.toml:9:31: unknown key 'libary' in verify clause (did you mean 'library'?)\n"
          "r.toml:10:18: 'verify[1].elf_symbol' must be a symbol name without spaces, not \"a b\"\n"
          "r.toml:10:35: 'verify[1].library' must name a library file, not be empty\n"
          "r.toml:11:3: 'library' is valid only with 'elf_symbol' in a verify clause\n"
          "r.toml:12:18: 'verify[3].elf_symbol' must be a string, not an integer");
    auto recipe = steps::parse_recipe(k_head +
                                          "[[step]]\nid = \"c\"\nkind = \"check\"\n"
                                          "verify = [{ elf_symbol = \"cublasLtX\", library = "
                                          "\"nvidia/**/libcublasLt.so.13\" }]\n",
                                      "r.toml");
    REQUIRE(recipe);
    REQUIRE(recipe->steps[0].verify.size() == 1);
    const auto& clause = recipe->steps[0].verify[0];
    CHECK(clause.kind == bootstrap::recipe::VerifyClause::Kind::elf_symbol);
    CHECK(clause.target.value == "cublasLtX");
    CHECK(clause.library->value == "nvidia/**/libcublasLt.so.13");
}

TEST_CASE("golden: a verify clause's version") {
    CHECK(problems(k_head + "[[step]]\nid = \"c\"\nkind = \"check\"\n"
                            "verify = [{ file = \"/x\", version = \">=1\" },\n"
                            "  { import = \"a\", version = \"\" },\n"
                            "  { import = \"b\", version = 2 },\n"
                            "  { cuda_arch = \"9.0\", module = \"te\", version = \">=1\" },\n"
                            "  { import = \"c\", versoin = \">=1\" },\n"
                            "  { import = \"d\", version = \">={vars.nope}\" }]\n") ==
          "r.toml:9:36: 'version' is valid only with 'import' in a verify clause\n"
          "r.toml:10:29: 'verify[1].version' must be a version specifier such as '>=2.1', not empty\n"
          "r.toml:11:29: 'verify[2].version' must be a string, not an integer\n"
          "r.toml:12:49: 'version' is valid only with 'import' in a verify clause\n"
          "r.toml:13:19: unknown key 'versoin' in verify clause (did you mean 'version'?)\n"
          "r.toml:14:29: unknown variable '{vars.nope}' (not defined in [vars])");
    CHECK(problems(k_head + "[[step]]\nid = \"c\"\nkind = \"check\"\n"
                            "verify = [{ import = \"torch\", version = \">=2.1, <3\" }]\n") == "<valid>");
}

TEST_CASE("golden: variables may use only variables defined before them") {
    CHECK(problems("schema = 1\nname = \"t\"\n[vars]\nb = \"{vars.a}/x\"\na = \"{vars.a}\"\n"
                   "c = \"{vars.megatorn}\"\n[venv]\npath = \"/v\"\npython = \"3.12\"\n") ==
          "r.toml:4:5: '{vars.a}' refers to a variable defined later in [vars] (a variable may "
          "use only those defined before it)\n"
          "r.toml:5:5: variable 'a' refers to itself\n"
          "r.toml:6:5: unknown variable '{vars.megatorn}' (not defined in [vars])");
    CHECK(problems("schema = 1\nname = \"t\"\n[vars]\nmegatron = \"/m\"\n[venv]\n"
                   "path = \"{vars.megatorn}/v\"\npython = \"3.12\"\n") ==
          "r.toml:6:8: unknown variable '{vars.megatorn}' (did you mean '{vars.megatron}'?)");
}

TEST_CASE("golden: venv.path may not depend on the venv") {
    CHECK(problems("schema = 1\nname = \"t\"\n[vars]\nsite = \"{venv.path}/lib\"\n[venv]\n"
                   "path = \"/v/{python.version}/{vars.site}\"\npython = \"3.12\"\n") ==
          "r.toml:6:8: 'venv.path' may not use '{python.version}' (circular: the venv's path "
          "cannot depend on the venv)\n"
          "r.toml:6:8: 'venv.path' may not use '{vars.site}', which uses '{venv.path}' "
          "(circular: the venv's path cannot depend on the venv)");
}

TEST_CASE("golden: placeholder forms") {
    CHECK(problems(k_head + "[env]\nset = { A = \"{env.1X}\", B = \"{vars.x:-y}\", C = \"{a,b}\" "
                            "}\n") ==
          "r.toml:7:13: invalid environment variable name in '{env.1X}'\n"
          "r.toml:7:29: a default (':-') is allowed only in '{env.NAME:-default}', not in "
          "'{vars.x:-y}'\n"
          "r.toml:7:48: '{a,b}' is not a valid placeholder (expected '{namespace.name}'; write "
          "'{{' and '}}' for literal braces)");
}

TEST_CASE("golden: section values") {
    CHECK(problems("schema = 1\nname = \"t\"\n[venv]\npath = \"/v\"\npython = \"python3\"\n"
                   "installer = \"conda\"\n[network]\nattempts = 0\n[device]\n"
                   "probes = [\"torch\", \"nvml2\", \"lspci\"]\nfallback_arch = \"sm_90\"\n"
                   "[env]\nunset = [\"A B\"]\nset = { \"X-Y\" = \"1\" }\n") ==
          "r.toml:5:10: 'venv.python' must be a Python version like \"3.12\" or an "
          "interpreter's path like \"/usr/bin/python3.12\", not \"python3\"\n"
          "r.toml:6:13: 'venv.installer' must be \"uv\" or \"pip\", not \"conda\"\n"
          "r.toml:8:12: 'network.attempts' must be at least 1, not 0\n"
          "r.toml:10:20: unknown device probe 'nvml2' (did you mean 'nvml'?)\n"
          "r.toml:10:29: unknown device probe 'lspci' (expected one of torch, driver, nvml, "
          "nvidia-smi)\n"
          "r.toml:11:17: 'device.fallback_arch' must be a compute capability like \"9.0\", not "
          "\"sm_90\"\n"
          "r.toml:13:10: 'A B' is not a valid environment variable name\n"
          "r.toml:14:9: 'X-Y' is not a valid environment variable name");
}

TEST_CASE("golden: multiple problems are reported together, in file order") {
    std::string text =
        "schema = 1\n"
        "nmae = \"t\"\n"
        "[venv]\n"
        "path = \"/v\"\n"
        "pyton = \"3.12\"\n"
        "[[step]]\n"
        "id = \"torch\"\n"
        "kind = \"install\"\n"
        "packages = [\"torch{venv.pth}\"]\n"
        "upgrade = 1\n"
        "[[step]]\n"
        "id = \"torch\"\n"
        "kind = \"run\"\n"
        "timeout = 0\n";
    auto r = steps::parse_recipe(text, "r.toml");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::invalid_recipe);
    CHECK(r.error().message == "r.toml:2:1: unknown key 'nmae' at top level (did you mean 'name'?)");
    CHECK(r.error().detail ==
          "r.toml:2:1: unknown key 'nmae' at top level (did you mean 'name'?)\n"
          "r.toml:5:1: unknown key 'pyton' in [venv] (did you mean 'python'?)\n"
          "r.toml:9:13: unknown placeholder '{venv.pth}' (did you mean '{venv.path}'?)\n"
          "r.toml:10:11: 'upgrade' must be a boolean, not an integer\n"
          "r.toml:11:1: step 'torch' (kind run) is missing required key 'argv'\n"
          "r.toml:12:6: duplicate step id 'torch' (first defined at r.toml:7:6)\n"
          "r.toml:14:11: 'timeout' must be a number greater than 0, not 0");
}

TEST_CASE("golden: 'step' must be an array of tables") {
    CHECK(problems(k_head + "[step]\nid = \"x\"\n") ==
          "r.toml:6:1: 'step' must be an array of tables (write [[step]]), not a table");
}

TEST_CASE("placeholders in every string field are checked") {
    for (std::string field : {"packages = [\"{x.y}\"]", "index_url = \"{x.y}\"", "extra_index_urls = [\"{x.y}\"]",
                              "find_links = [\"{x.y}\"]", "env = { A = \"{x.y}\" }",
                              "verify = [{ import = \"{x.y}\" }]", "verify = [{ import = \"m\", attr = \"{x.y}\" }]"}) {
        INFO(field);
        std::string text = k_head + "[[step]]\nid = \"s\"\nkind = \"install\"\n" +
                           (field.starts_with("packages") ? "" : "packages = [\"p\"]\n") + field + "\n";
        CHECK(problems(text).find("unknown placeholder '{x.y}'") != std::string::npos);
    }
    for (std::string field : {"argv = [\"{x.y}\"]", "cwd = \"{x.y}\"", "creates = \"{x.y}\"", "unless = [\"{x.y}\"]"}) {
        INFO(field);
        std::string text = k_head + "[[step]]\nid = \"s\"\nkind = \"run\"\n" +
                           (field.starts_with("argv") ? "" : "argv = [\"p\"]\n") + field + "\n";
        CHECK(problems(text).find("unknown placeholder '{x.y}'") != std::string::npos);
    }
    for (std::string field : {"project = \"{x.y}\"", "args = [\"{x.y}\"]"}) {
        INFO(field);
        std::string text = k_head + "[[step]]\nid = \"s\"\nkind = \"sync\"\n" +
                           (field.starts_with("project") ? "" : "project = \"p\"\n") + field + "\n";
        CHECK(problems(text).find("unknown placeholder '{x.y}'") != std::string::npos);
    }
    CHECK(problems("schema = 1\nname = \"t\"\n[vars]\na = \"{x.y}\"\n[venv]\npath = \"/v\"\n"
                   "python = \"3.12\"\n")
              .find("unknown placeholder '{x.y}'") != std::string::npos);
}

TEST_CASE("[venv] python: a version or an interpreter's path, whose place is kept") {
    for (const char* python : {"/usr/bin/python3.12", "~/py/bin/python3", "py/bin/python3"}) {
        auto r = steps::parse_recipe(std::string("schema = 1\nname = \"t\"\n[venv]\npath = \"/v\"\n"
                                                 "python = \"") +
                                         python + "\"\n",
                                     "r.toml");
        REQUIRE(r);
        CHECK(r->venv.python == python);
        CHECK(r->venv.python_is_path());
        CHECK(r->venv.python_loc.str() == "r.toml:5:10");
    }
    auto version = steps::parse_recipe(k_head, "r.toml");
    REQUIRE(version);
    CHECK_FALSE(version->venv.python_is_path());
    CHECK(problems("schema = 1\nname = \"t\"\n[venv]\npath = \"/v\"\npython = \"3.x\"\n") ==
          "r.toml:5:10: 'venv.python' must be a Python version like \"3.12\" or an interpreter's "
          "path like \"/usr/bin/python3.12\", not \"3.x\"");
}

TEST_CASE("a step timeout is a finite number of seconds up to 30 days") {
    const std::string step = k_head + "[[step]]\nid = \"r\"\nkind = \"run\"\nargv = [\"true\"]\n";
    CHECK(problems(step + "timeout = inf\n").find("'timeout' must be a number greater than 0, not inf") !=
          std::string::npos);
    CHECK(problems(step + "timeout = nan\n").find("'timeout' must be a number greater than 0, not nan") !=
          std::string::npos);
    CHECK(problems(step + "timeout = 1e308\n").find("'timeout' must be at most 2592000 (30 days), not 1e+308") !=
          std::string::npos);
    CHECK(problems(step + "timeout = 1e10\n").find("'timeout' must be at most 2592000 (30 days)") != std::string::npos);
    CHECK(problems(step + "timeout = 2592000\n") == "<valid>");
    CHECK(problems(step + "timeout = 0.5\n") == "<valid>");
}

TEST_CASE("a recipe with thousands of problems prints the first fifty and a count") {
    std::string text = k_head;
    for (int i = 0; i < 5000; ++i) text += "unknown_" + std::to_string(i) + " = 1\n";
    auto r = steps::parse_recipe(text, "r.toml");
    REQUIRE_FALSE(r);
    const auto lines = core::split(r.error().detail, '\n');
    CHECK(lines.size() == 51);
    CHECK(lines.back() == "... and 4950 more problem(s) not shown");
    CHECK(r.error().detail.size() < 10000);
}
