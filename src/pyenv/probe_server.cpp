// run_probe_server: many import probes, one interpreter start-up and one torch import.

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/fs.hpp"
#include "core/strings.hpp"
#include "pyenv/import_probe.hpp"

namespace bootstrap::pyenv {

namespace fs = std::filesystem;

namespace {

// argv: CHECKS (lines "module<TAB>attr") OUT_DIR JOBS TIMEOUT_S PRELOADS (comma-separated).
// States of a check: waiting -> running (a forked child, output to OUT_DIR/<i>.out) -> done
// (exit status or signal) or killed (past TIMEOUT_S). Children stay in the server's process
// group, so killing the server (our timeout, an interrupt) takes them along.
constexpr const char* k_server_main = R"PY(
import signal, time
def _bs_serve(checks_file, out_dir, jobs, timeout, preload):
    done = []
    # A preload that hangs ends the server (SIGALRM's default action) within the per-check
    # limit: it is then started again without preloads.
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(max(1, int(timeout + 0.999)))
    for p in [p for p in preload.split(",") if p]:
        try:
            importlib.import_module(p)
            done.append(p)
        except BaseException:
            pass
    signal.alarm(0)
    print("bootstrap-server: ready %s" % ",".join(done), flush=True)
    with open(checks_file) as f:
        checks = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    running, nxt = {}, 0
    while nxt < len(checks) or running:
        while nxt < len(checks) and len(running) < jobs:
            i, (mod, attr) = nxt, checks[nxt]
            nxt += 1
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                code = 70
                try:
                    fd = os.open(os.path.join(out_dir, "%d.out" % i), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                    os.dup2(fd, 1)
                    os.dup2(fd, 2)
                    os.close(fd)
                    sys.argv = ["-c", mod, attr]
                    code = _bs_probe(mod, attr)
                except BaseException:
                    traceback.print_exc()
                finally:
                    try:
                        sys.stdout.flush()
                        sys.stderr.flush()
                    finally:
                        os._exit(code)
            running[pid] = (i, time.monotonic())
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            for p, (i, start) in list(running.items()):
                if now - start > timeout:
                    os.kill(p, signal.SIGKILL)
                    os.waitpid(p, 0)
                    del running[p]
                    print("bootstrap-server: result %d timeout %.3f" % (i, now - start), flush=True)
            time.sleep(0.005)
            continue
        i, start = running.pop(pid)
        took = time.monotonic() - start
        if os.WIFSIGNALED(status):
            print("bootstrap-server: result %d signal %d %.3f" % (i, os.WTERMSIG(status), took), flush=True)
        else:
            print("bootstrap-server: result %d exit %d %.3f" % (i, os.WEXITSTATUS(status), took), flush=True)
_bs_serve(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
)PY";

constexpr std::string_view k_server_prefix = "bootstrap-server: ";

struct ServerRun {
    exec::ProcessResult process;
    bool ready = false;
    std::vector<std::string> preloaded;
    std::map<size_t, exec::ProcessResult> ended;  // by request index
};

/// "result I exit N S" / "result I signal N S" / "result I timeout S".
void read_result(std::string_view rest, double timeout_s, ServerRun& run) {
    auto words = core::split(std::string(rest), ' ');
    if (words.size() < 3 || words[0] != "result") return;
    size_t index = 0;
    try {
        index = std::stoul(words[1]);
        exec::ProcessResult r;
        if (words[2] == "timeout") {
            r.timed_out = true;
            r.timeout_seconds = timeout_s;
            r.signal = 9;
        } else if (words.size() >= 4 && words[2] == "signal") {
            r.signal = std::stoi(words[3]);
        } else if (words.size() >= 4 && words[2] == "exit") {
            r.exit_code = std::stoi(words[3]);
        } else {
            return;
        }
        if (words.size() >= 4) r.seconds = std::stod(words.back());
        run.ended[index] = std::move(r);
    } catch (const std::exception&) {
        // not a line of ours: ignored
    }
}

Result<ServerRun> serve_once(const fs::path& python, const fs::path& dir, size_t count, const exec::EnvMap& env,
                             const std::vector<std::string>& preload, size_t jobs, std::chrono::milliseconds timeout) {
    const double timeout_s = static_cast<double>(timeout.count()) / 1000.0;
    exec::ProcessSpec spec;
    spec.argv = {python.string(),
                 "-c",
                 std::string(import_probe_function()) + k_server_main,
                 (dir / "checks").string(),
                 dir.string(),
                 std::to_string(jobs),
                 fmt::format("{:.3f}", timeout_s),
                 core::join(preload, ",")};
    spec.cwd = "/";
    spec.env = env;
    spec.capture = true;
    // Every batch of `jobs` may take the whole per-check limit, and the preloads one more.
    const auto batches = static_cast<long>((count + jobs - 1) / std::max<size_t>(jobs, 1)) + 1;
    spec.timeout = timeout * batches + std::chrono::seconds(30);
    BS_TRY(auto ran, exec::run_process(spec));
    ServerRun run;
    for (const auto& line : core::split(ran.output, '\n')) {
        auto rest = core::after_prefix(line, k_server_prefix);
        if (!rest) continue;
        if (auto ready = core::after_prefix(*rest, "ready")) {
            run.ready = true;
            for (auto& p : core::split(std::string(core::trim(*ready)), ','))
                if (!p.empty()) run.preloaded.push_back(p);
        } else {
            read_result(*rest, timeout_s, run);
        }
    }
    run.process = std::move(ran);
    return run;
}

}  // namespace

Result<ProbeServerResult> run_probe_server(const fs::path& python, const std::vector<ProbeRequest>& requests,
                                           const exec::EnvMap& env, const std::vector<std::string>& preload,
                                           size_t jobs, std::chrono::milliseconds timeout) {
    ProbeServerResult out;
    out.results.resize(requests.size());
    if (requests.empty()) return out;
    jobs = std::max<size_t>(jobs, 1);
    core::TempDir dir("bootstrap-probes");
    std::string checks;
    std::vector<size_t> sent;  // request index for each line of the checks file
    for (size_t i = 0; i < requests.size(); ++i) {
        const auto& r = requests[i];
        auto bad = [](const std::string& s) { return s.find_first_of("\t\n\r") != std::string::npos; };
        if (r.module.empty() || bad(r.module) || bad(r.attr)) {
            out.results[i].exit_code = 2;
            out.results[i].output = fmt::format("{}import {} failed: ValueError: not a module name\n", k_probe_prefix,
                                                core::clip(r.module));
            continue;
        }
        checks += r.module + "\t" + r.attr + "\n";
        sent.push_back(i);
    }
    BS_CHECK(core::write_file_atomic(dir.path() / "checks", checks));
    auto started = std::chrono::steady_clock::now();
    BS_TRY(auto run, serve_once(python, dir.path(), sent.size(), env, preload, jobs, timeout));
    if (!run.ready && !preload.empty()) {  // a preload took the interpreter down: go without
        BS_TRY(auto bare, serve_once(python, dir.path(), sent.size(), env, {}, jobs, timeout));
        run = std::move(bare);
    }
    if (!run.ready)
        return fail(ErrorCode::step_failed,
                    fmt::format("the import probe server ({} -c <probe server>) did not start: {}", python.string(),
                                run.process.describe()),
                    std::string(core::trim(core::last_lines(run.process.output, 20))));
    out.preloaded = run.preloaded;
    for (size_t line = 0; line < sent.size(); ++line) {
        auto& result = out.results[sent[line]];
        if (auto it = run.ended.find(line); it != run.ended.end()) {
            result = std::move(it->second);
        } else {  // the server ended first (killed, out of memory)
            result.exit_code = 70;
            result.output = fmt::format(
                "{}import {} failed: RuntimeError: the probe server "
                "ended before this import finished ({})\n",
                k_probe_prefix, requests[sent[line]].module, run.process.describe());
        }
        if (auto text = core::read_file(dir.path() / fmt::format("{}.out", line)))
            result.output = *text + result.output;
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return out;
}

}  // namespace bootstrap::pyenv
