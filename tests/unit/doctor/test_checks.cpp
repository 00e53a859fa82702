// doctor's checks that need no interpreter: venv integrity and relocate (README pitfall P4), the
// import probe's parsing (P11/P21), PyPI's apex, pip, forbidden variables.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "core/fs.hpp"
#include "doctor/checks.hpp"
#include "pyenv/import_probe.hpp"
#include "pyenv/relocate.hpp"
#include "recipe/recipe.hpp"
#include "steps/recipe_kinds.hpp"

using namespace bootstrap;
using namespace bootstrap::doctor;
using bootstrap::pyenv::detect_venv_origin;
using bootstrap::pyenv::relocate_venv;
using recipe::Severity;

namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text, mode_t mode = 0644) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
}

/// A venv made at `made_at` whose files now lie in `dir` (a copy).
void fake_venv(const fs::path& dir, const std::string& made_at) {
    write(dir / "pyvenv.cfg", "home = /usr/bin\nversion_info = 3.11.7\n");
    write(dir / "bin" / "activate", "# comment\nVIRTUAL_ENV='" + made_at + "'\nexport VIRTUAL_ENV\n");
    write(dir / "bin" / "activate.fish", "set -gx VIRTUAL_ENV '" + made_at + "'\n");
    write(dir / "bin" / "demo-core",
          "#!" + made_at + "/bin/python\nimport sys\nfrom demo_core import main\nsys.exit(main())\n", 0755);
    // A sibling venv with a longer name must not be rewritten.
    write(dir / "bin" / "other", "#!" + made_at + "2/bin/python\n", 0750);
    write(dir / "lib" / "python3.11" / "site-packages" / ".keep", "");
}

const Finding* find_rule(const std::vector<Finding>& fs, const std::string& rule) {
    for (const auto& f : fs)
        if (f.rule == rule) return &f;
    return nullptr;
}

}  // namespace

TEST_CASE("a copied venv is found stale and relocate rewrites it", "[doctor][venv]") {
    core::TempDir tmp("doctor");
    fs::path venv = fs::weakly_canonical(tmp.path()) / "copy";
    fake_venv(venv, "/old/place/venv");

    auto origin = detect_venv_origin(venv);
    REQUIRE(origin);
    CHECK(*origin == "/old/place/venv");

    DoctorOptions options;
    options.venv = venv;
    auto findings = check_venv_integrity(options);
    const auto* stale = find_rule(findings, "venv");
    REQUIRE(stale != nullptr);
    CHECK(stale->severity == Severity::error);
    CHECK(stale->message.find("/old/place/venv") != std::string::npos);
    CHECK(stale->fix.find("bootstrap relocate --venv") != std::string::npos);
    bool names_script = false;
    for (const auto& e : stale->evidence)
        names_script = names_script || e.find("bin/demo-core: #!/old/place/venv/bin/python") == 0;
    CHECK(names_script);

    auto report = relocate_venv(venv, {});
    REQUIRE(report);
    CHECK(report->rewritten.size() == 3);  // activate, activate.fish, demo-core
    auto script = core::read_file(venv / "bin" / "demo-core");
    REQUIRE(script);
    CHECK(script->rfind("#!" + venv.string() + "/bin/python\n", 0) == 0);
    struct stat st {};
    REQUIRE(::stat((venv / "bin" / "demo-core").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0755);
    CHECK(*core::read_file(venv / "bin" / "other") == "#!/old/place/venv2/bin/python\n");
    CHECK(*detect_venv_origin(venv) == venv);
    CHECK(find_rule(check_venv_integrity(options), "venv") == nullptr);
    // Nothing half-written is left behind.
    for (const auto& e : fs::directory_iterator(venv / "bin"))
        CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
    // A second relocate has nothing to do.
    auto again = relocate_venv(venv, {});
    REQUIRE(again);
    CHECK(again->rewritten.empty());
}

TEST_CASE("a venv whose base interpreter is gone is an error", "[doctor][venv]") {
    core::TempDir tmp("doctor");
    fs::path venv = tmp.path() / "v";
    fake_venv(venv, (tmp.path() / "v").string());
    write(venv / "pyvenv.cfg", "home = /nonexistent/python/bin\n");
    DoctorOptions options;
    options.venv = venv;
    auto findings = check_venv_integrity(options);
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].message.find("/nonexistent/python/bin") != std::string::npos);
    CHECK(findings[0].fix.find("--recreate") != std::string::npos);
    options.venv = tmp.path() / "missing";
    auto none = check_venv_integrity(options);
    REQUIRE(none.size() == 1);
    CHECK(none[0].message.find("is not a venv") != std::string::npos);
}

TEST_CASE("relocate without a VIRTUAL_ENV line needs --from", "[doctor][venv]") {
    core::TempDir tmp("doctor");
    write(tmp.path() / "pyvenv.cfg", "home = /usr/bin\n");
    write(tmp.path() / "bin" / "tool", "#!/old/bin/python\n", 0755);
    auto r = relocate_venv(tmp.path(), {});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::not_found);
    auto ok = relocate_venv(tmp.path(), "/old");
    REQUIRE(ok);
    CHECK(ok->rewritten.size() == 1);
}

TEST_CASE("the import probe's output names the missing module", "[doctor][imports]") {
    std::string out =
        "Traceback (most recent call last):\n  ...\n"
        "bootstrap-verify: import transformers failed: ModuleNotFoundError: No module named "
        "'regex'\n";
    auto f = pyenv::parse_import_probe(out);
    CHECK(f.error == "ModuleNotFoundError: No module named 'regex'");
    CHECK(f.root_cause == f.error);
    CHECK(f.missing_module == "regex");

    auto chained = pyenv::parse_import_probe(
        "bootstrap-verify: import megatron.training failed: NameError: name 'AutoTokenizer' is "
        "not defined\nbootstrap-verify: root cause: ModuleNotFoundError: No module named "
        "'regex._regex'\n");
    CHECK(chained.error.rfind("NameError", 0) == 0);
    CHECK(chained.missing_module == "regex");
    CHECK(chained.summary.find("; root cause: ") != std::string::npos);

    auto attr =
        pyenv::parse_import_probe("bootstrap-verify: module nvidia_cublas (/x/__init__.py) has no attribute 'X'\n");
    CHECK(attr.missing_attribute);
    CHECK(attr.missing_module.empty());
}

TEST_CASE("PyPI's apex, missing pip and forbidden variables", "[doctor][packages]") {
    core::TempDir tmp("doctor");
    fs::path venv = tmp.path() / "v";
    fake_venv(venv, venv.string());
    fs::path site = venv / "lib" / "python3.11" / "site-packages";
    write(site / "apex-0.9.10.dev0.dist-info" / "METADATA",
          "Metadata-Version: 2.1\nName: apex\nVersion: 0.9.10dev\nSummary: Pyramid toolkit\n\n");
    write(site / "apex-0.9.10.dev0.dist-info" / "RECORD", "apex/__init__.py,,\n");
    auto recipe = steps::parse_recipe(
        "schema = 1\nname = \"t\"\n[venv]\npath = \"v\"\npython = \"3.11\"\n"
        "[[step]]\nid = \"apex\"\nkind = \"run\"\nargv = [\"python\", \"-m\", \"pip\", "
        "\"install\", \".\"]\n",
        "t.toml");
    REQUIRE(recipe);
    DoctorOptions options;
    options.venv = venv;
    options.recipe = &*recipe;
    options.environment = {
        {"MCORE_DPA_USE_SDPA", "1"}, {"PATH", "/nonexistent"}, {"UV_PROJECT_ENVIRONMENT", "/elsewhere"}};
    auto findings = check_packages(options);
    const auto* apex = find_rule(findings, "apex");
    REQUIRE(apex != nullptr);
    CHECK(apex->severity == Severity::error);
    CHECK(apex->message.find("PyPI's unrelated") != std::string::npos);
    const auto* pip = find_rule(findings, "pip");
    REQUIRE(pip != nullptr);
    CHECK(pip->evidence.at(0).find("step 'apex' runs `-m pip`") == 0);
    const auto* env = find_rule(findings, "env");
    REQUIRE(env != nullptr);
    CHECK(env->message.find("MCORE_DPA_USE_SDPA") != std::string::npos);
    size_t uv_warnings = 0;
    for (const auto& f : findings)
        if (f.rule == "env" && f.severity == Severity::warning &&
            f.message.rfind("UV_PROJECT_ENVIRONMENT is set", 0) == 0)
            ++uv_warnings;
    CHECK(uv_warnings == 1);

    // NVIDIA's apex (extension modules in its RECORD) is fine, and so is the local path.
    write(site / "apex-0.9.10.dev0.dist-info" / "RECORD",
          "apex/__init__.py,,\namp_C.cpython-311-x86_64-linux-gnu.so,,\n");
    options.te_path = false;
    auto again = check_packages(options);
    CHECK(find_rule(again, "apex") == nullptr);
    options.environment.erase("UV_PROJECT_ENVIRONMENT");
    again = check_packages(options);
    CHECK(find_rule(again, "env") == nullptr);
}

TEST_CASE("a dist-info without METADATA is a broken install, with the fix", "[doctor][packages]") {
    core::TempDir tmp("doctor");
    fs::path venv = tmp.path() / "v";
    fake_venv(venv, venv.string());
    fs::path site = venv / "lib" / "python3.11" / "site-packages";
    write(site / "wandb-0.22.0.dist-info" / "RECORD", "wandb/__init__.py,,\n");
    DoctorOptions options;
    options.venv = venv;
    CheckSummary summary;
    auto findings = check_packages(options, &summary);
    const auto* broken = find_rule(findings, "broken-install");
    REQUIRE(broken != nullptr);
    CHECK(broken->severity == Severity::error);
    CHECK(broken->message == "broken install of wandb 0.22.0: METADATA missing");
    CHECK(broken->evidence.at(0) == (site / "wandb-0.22.0.dist-info").string());
    CHECK(broken->fix.find("bootstrap rollback --venv " + venv.string() + " --to N") == 0);
    CHECK(summary.line == "packages: 1 problem");

    auto recipe = steps::parse_recipe(
        "schema = 1\nname = \"t\"\n[venv]\npath = \"v\"\npython = \"3.11\"\n"
        "[[step]]\nid = \"tools\"\nkind = \"install\"\npackages = [\"wandb\"]\n",
        "t.toml");
    REQUIRE(recipe);
    options.recipe = &*recipe;
    findings = check_packages(options);
    broken = find_rule(findings, "broken-install");
    REQUIRE(broken != nullptr);
    CHECK(broken->fix == "bootstrap run t.toml --venv " + venv.string() +
                             " removes it first (the dist-info and the files its RECORD "
                             "lists); step 'tools' then installs wandb again");
}

TEST_CASE("allow_conflicts pairs come from the recipe's steps", "[doctor][deps]") {
    auto recipe = steps::parse_recipe(
        "schema = 1\nname = \"t\"\n[venv]\npath = \"v\"\npython = \"3.11\"\n"
        "[[step]]\nid = \"cublas\"\nkind = \"install\"\npackages = [\"nvidia-cublas>=13.4.1.1\"]\n"
        "allow_conflicts = [\"Demo_Torch\"]\n",
        "t.toml");
    REQUIRE(recipe);
    auto pairs = recipe_allowed_conflicts(&*recipe);
    REQUIRE(pairs.size() == 1);
    CHECK(*pairs.begin() == std::pair<std::string, std::string>("demo-torch", "nvidia-cublas"));
    CHECK(recipe_allowed_conflicts(nullptr).empty());
}
