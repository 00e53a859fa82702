#include "device/toolchain.hpp"

#include <unistd.h>
#include <chrono>

#include <fmt/format.h>

#include "core/log.hpp"
#include "core/strings.hpp"
#include "exec/process.hpp"

namespace bootstrap::device {

namespace {

using namespace std::chrono_literals;

// Exit codes of the script below, so the caller can tell "torch rejected it" from "no torch".
constexpr int k_exit_import = 3;
constexpr int k_exit_rejected = 4;

// Answers on `flag=`/`error=` lines: stderr shares the pipe, and torch's extension builder
// warns there (a UserWarning about the arch list, a C++ warning from libtorch), so a line
// without the prefix is not a flag.
constexpr const char* k_accept_script = R"PY(
import sys
try:
    from torch.utils.cpp_extension import _get_cuda_arch_flags
except BaseException as e:
    print("error=%s: %s" % (type(e).__name__, str(e).replace("\n", " ")), flush=True)
    sys.exit(3)
try:
    flags = _get_cuda_arch_flags()
except BaseException as e:
    print("error=%s: %s" % (type(e).__name__, str(e).replace("\n", " ")), flush=True)
    sys.exit(4)
for f in flags:
    print("flag=" + f, flush=True)
)PY";

struct AcceptAnswer {
    std::vector<std::string> flags;   // flag= lines
    std::vector<std::string> errors;  // error= lines
};

/// The script's lines of `output`; the others are logged (at info) as what `python` printed.
AcceptAnswer accept_answer(std::string_view output, const fs::path& python) {
    AcceptAnswer out;
    for (const auto& line : core::split(output, '\n')) {
        if (auto flag = core::after_prefix(line, "flag=")) {
            out.flags.emplace_back(core::trim(*flag));
        } else if (auto error = core::after_prefix(line, "error=")) {
            out.errors.emplace_back(core::trim(*error));
        } else if (!core::trim(line).empty()) {
            core::log::info("torch arch list check ({}) printed: {}", python.string(), core::trim(line));
        }
    }
    return out;
}

bool is_executable(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

Result<exec::ProcessResult> run_captured(std::vector<std::string> argv, exec::EnvMap env) {
    exec::ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.env = std::move(env);
    spec.capture = true;
    spec.timeout = 120s;
    return exec::run_process(spec);
}

Error child_failed(const std::vector<std::string>& argv, const exec::ProcessResult& r) {
    return Error{ErrorCode::process, fmt::format("`{}` failed: {}", core::format_argv(argv), r.describe()),
                 core::last_lines(r.output, 10)};
}

}  // namespace

fs::path find_nvcc(const exec::EnvMap& env) {
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
        auto it = env.find(var);
        if (it != env.end() && !it->second.empty()) {
            fs::path candidate = fs::path(it->second) / "bin" / "nvcc";
            if (is_executable(candidate)) return candidate;
        }
    }
    fs::path on_path = exec::find_program("nvcc", env);
    if (!on_path.empty()) return on_path;
    fs::path fallback = "/usr/local/cuda/bin/nvcc";
    return is_executable(fallback) ? fallback : fs::path();
}

Result<std::string> nvcc_release(const fs::path& nvcc, const exec::EnvMap& env) {
    std::vector<std::string> argv{nvcc.string(), "--version"};
    BS_TRY(auto result, run_captured(argv, env));
    if (!result.ok()) return tl::unexpected(child_failed(argv, result));
    auto release = parse_nvcc_release(result.output);
    if (!release) {
        release.error().message = fmt::format("{}: {}", nvcc.string(), release.error().message);
    }
    return release;
}

Result<std::vector<Arch>> nvcc_gpu_archs(const fs::path& nvcc, const exec::EnvMap& env) {
    std::vector<std::string> argv{nvcc.string(), "--list-gpu-arch"};
    BS_TRY(auto result, run_captured(argv, env));
    if (!result.ok()) return tl::unexpected(child_failed(argv, result));
    auto archs = parse_nvcc_gpu_archs(result.output);
    if (archs.empty())
        return fail(ErrorCode::process, fmt::format("`{}` listed no compute_XY arch", core::format_argv(argv)),
                    core::last_lines(result.output, 10));
    return archs;
}

Result<std::vector<std::string>> torch_arch_flags_for(const fs::path& python, std::string_view list,
                                                      const exec::EnvMap& env) {
    exec::EnvMap child_env = env;
    child_env["TORCH_CUDA_ARCH_LIST"] = std::string(list);
    std::vector<std::string> argv{python.string(), "-c", k_accept_script};
    BS_TRY(auto result, run_captured(argv, child_env));
    auto answer = accept_answer(result.output, python);
    std::string said =
        answer.errors.empty() ? std::string(core::trim(core::last_lines(result.output, 1))) : answer.errors.back();
    if (result.signal == 0 && !result.timed_out && result.exit_code == k_exit_rejected) {
        return fail(ErrorCode::usage,
                    fmt::format("torch's extension builder rejects TORCH_CUDA_ARCH_LIST '{}': {}", list, said));
    }
    if (result.signal == 0 && !result.timed_out && result.exit_code == k_exit_import) {
        return fail(ErrorCode::process, fmt::format("cannot ask torch's extension builder ({} could not import "
                                                    "torch.utils.cpp_extension): {}",
                                                    python.string(), said));
    }
    if (!result.ok()) {
        Error e = child_failed({python.string(), "-c", "<arch list check>"}, result);
        return tl::unexpected(e);
    }
    return answer.flags;
}

}  // namespace bootstrap::device
