// Step kind `pybind11`: one C++ source -> <output_dir>/<module><EXT_SUFFIX>, with the venv's own
// Python headers (no python3-config) and pybind11's; verified by importing the module.

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/redact.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "steps/kind.hpp"

namespace bootstrap::steps {

namespace {

/// One C++ source -> <output_dir>/<module><EXT_SUFFIX>.
struct Pybind11Fields : recipe::KindFields {
    recipe::Text source;
    recipe::Text module;
    std::optional<recipe::Text> output_dir;  // default: the source's directory
    std::optional<recipe::Text> cxx;         // default: "c++"
    std::vector<recipe::Text> extra_args;
    std::optional<recipe::Text> pybind11_include;  // default: `python -m pybind11 --includes`
};

std::shared_ptr<const recipe::KindFields> parse(recipe::StepReader& rd) {
    auto f = std::make_shared<Pybind11Fields>();
    if (auto source = rd.text("source")) f->source = std::move(*source);
    rd.require("source");
    if (auto module = rd.text("module")) f->module = std::move(*module);
    rd.require("module");
    f->output_dir = rd.text("output_dir");
    f->cxx = rd.text("cxx");
    f->extra_args = rd.texts("extra_args");
    f->pybind11_include = rd.text("pybind11_include");
    return f;
}

Status expand(const recipe::Step& step, ResolvedStep& out, PlanContext& ctx, Expansion&) {
    const auto& s = *step.fields_as<Pybind11Fields>();
    Pybind11Spec spec;
    BS_TRY(auto source_text, ctx.text(s.source, out));
    std::string source = ctx.local_path(source_text);
    BS_CHECK(check_local_input(step, s.source, source, "source", false, out, ctx));
    BS_TRY(auto module, ctx.text(s.module, out));
    std::string output_dir = fs::path(source).parent_path().string();
    if (s.output_dir) {
        BS_TRY(auto dir, ctx.text(*s.output_dir, out));
        output_dir = ctx.local_path(dir);
    }
    std::string cxx = "c++";
    if (s.cxx) {
        BS_TRY(cxx, ctx.text(*s.cxx, out));
    }
    std::string include_dir = "<python include dir: known after the venv exists>";
    std::string ext_suffix = "<python.ext_suffix: known after the venv exists>";
    if (ctx.python) {
        include_dir = ctx.python->include_dir;
        ext_suffix = ctx.python->ext_suffix;
    } else {
        out.complete = false;
    }
    spec.output = (fs::path(output_dir) / (module + ext_suffix)).string();
    out.argv = {cxx, "-O3", "-shared", "-std=c++17", "-fPIC", "-I" + include_dir};
    if (s.pybind11_include) {
        BS_TRY(auto inc, ctx.text(*s.pybind11_include, out));
        out.argv.push_back("-I" + ctx.local_path(inc));
        add_local_input(out, ctx.local_path(inc), true, "pybind11_include", s.pybind11_include->loc);
    } else {
        spec.includes = {ctx.venv_python.string(), "-m", "pybind11", "--includes"};
        spec.includes_at = out.argv.size();
        out.note += (out.note.empty() ? "" : "; ") + std::string("pybind11's include flags: `") +
                    core::format_argv(spec.includes) + "` when the step runs (or set pybind11_include)";
    }
    BS_TRY(auto extra, ctx.texts(s.extra_args, out));
    out.argv.insert(out.argv.end(), extra.begin(), extra.end());
    out.argv.insert(out.argv.end(), {source, "-o", spec.output});
    auto digest = core::sha256_file(source);
    spec.source_digest = digest ? *digest : "missing";
    out.verify.push_back({recipe::VerifyClause::Kind::import_module, module, {}, {}, false, output_dir});
    out.spec = std::move(spec);
    return {};
}

void key_inputs(const ResolvedStep& step, core::KeyBuilder& key, const ToolName& tool) {
    const auto& spec = std::get<Pybind11Spec>(step.spec);
    key.add("source.sha256", spec.source_digest);
    key.add("compiler", step.argv.empty() ? "" : tool(step.argv[0]));
    key.add("pybind11.includes", spec.includes);
}

/// Compile to a temp name beside the output, renamed into place, so an interrupted or failed
/// compile never leaves a half-written module that imports.
Result<Outcome> execute_step(const ResolvedStep& step, StepContext& ctx) {
    const auto& spec = std::get<Pybind11Spec>(step.spec);
    std::vector<std::string> argv = step.argv;
    if (!spec.includes.empty()) {
        auto child = child_spec(step, ctx, spec.includes);
        child.capture = true;
        log_line(ctx, "$ " + core::redact_text(core::format_argv(child.argv)));
        BS_TRY(auto result, ctx.run(child));
        if (!result.ok()) {
            auto err = child_failure(step, child, result, ctx.log_path);
            err.message += " (is pybind11 installed in the venv? or set the step's pybind11_include)";
            return tl::unexpected(err);
        }
        std::vector<std::string> flags;
        for (const auto& word : core::split(result.output, ' ')) {
            std::string w(core::trim(word));
            if (!w.empty()) flags.push_back(w);
        }
        argv.insert(argv.begin() + static_cast<long>(std::min(spec.includes_at, argv.size())), flags.begin(),
                    flags.end());
    }
    fs::path output = spec.output;
    fs::path tmp = output.parent_path() / fmt::format(".{}.tmp-{}", output.filename().string(), ::getpid());
    argv.back() = tmp.string();
    std::error_code ec;
    fs::create_directories(output.parent_path(), ec);
    auto built = run_child(step, ctx, argv);
    if (built) {
        fs::rename(tmp, output, ec);
        if (ec)
            built = fail(ErrorCode::io, fmt::format("step '{}': cannot rename {} to {}: {}", step.id, tmp.string(),
                                                    output.string(), ec.message()));
    }
    if (!built) fs::remove(tmp, ec);
    if (!built) return tl::unexpected(built.error());
    return Outcome::ran;
}

std::vector<std::string> promised_files(const ResolvedStep& step) { return {std::get<Pybind11Spec>(step.spec).output}; }

}  // namespace

extern const Kind k_pybind11_kind;
const Kind k_pybind11_kind{
    .name = "pybind11",
    .parse = parse,
    .spec = k_spec_index<Pybind11Spec>,
    .expand = expand,
    .key_inputs = key_inputs,
    .execute = execute_step,
    .promised_files = promised_files,
    .needs_venv = true,
    .build_env = true,
};

}  // namespace bootstrap::steps
