#include "pyenv/venv_library.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <chrono>

#include "core/strings.hpp"
#include "exec/process.hpp"

namespace bootstrap::pyenv {

namespace {

bool has_glob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

bool matches(const std::string& pattern, const std::string& name) {
    return ::fnmatch(pattern.c_str(), name.c_str(), FNM_PERIOD) == 0;
}

void glob_into(const fs::path& dir, const std::vector<std::string>& parts, size_t i, std::vector<fs::path>& out) {
    std::error_code ec;
    if (i == parts.size()) return;
    if (parts[i] == "**") {
        glob_into(dir, parts, i + 1, out);  // zero directories
        for (const auto& e : fs::directory_iterator(dir, ec))
            if (e.is_directory(ec) && !e.is_symlink(ec)) glob_into(e.path(), parts, i, out);
        return;
    }
    const bool last = i + 1 == parts.size();
    if (!has_glob(parts[i])) {  // a literal component: no listing (and "." or ".." work)
        fs::path p = dir / parts[i];
        if (last ? fs::is_regular_file(p, ec) : fs::is_directory(p, ec)) {
            if (last) out.push_back(p);
            else glob_into(p, parts, i + 1, out);
        }
        return;
    }
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        if (!matches(parts[i], e.path().filename().string())) continue;
        if (last) {
            if (e.is_regular_file(ec)) out.push_back(e.path());
        } else if (e.is_directory(ec)) {
            glob_into(e.path(), parts, i + 1, out);
        }
    }
}

/// `ldconfig -p` lines: "\tlibcublasLt.so.13 (libc6,x86-64) => /usr/lib/.../libcublasLt.so.13".
fs::path from_ldconfig(const std::string& name_pattern, const exec::EnvMap& env, std::vector<std::string>& searched) {
    for (const char* ldconfig : {"/sbin/ldconfig", "/usr/sbin/ldconfig"}) {
        std::error_code ec;
        if (!fs::exists(ldconfig, ec)) continue;
        searched.push_back(std::string(ldconfig) + " -p");
        exec::ProcessSpec spec;
        spec.argv = {ldconfig, "-p"};
        spec.env = exec::compose_environment(env, {}, {});  // the allowlist, as for any child
        spec.capture = true;
        spec.timeout = std::chrono::seconds(20);
        auto ran = exec::run_process(spec);
        if (!ran || !ran->ok()) return {};
        for (const auto& line : core::split(ran->output, '\n')) {
            auto trimmed = std::string(core::trim(line));
            auto space = trimmed.find(' ');
            auto arrow = trimmed.find("=> ");
            if (space == std::string::npos || arrow == std::string::npos) continue;
            if (!matches(name_pattern, trimmed.substr(0, space))) continue;
            fs::path file = trimmed.substr(arrow + 3);
            if (fs::is_regular_file(file, ec)) return file;
        }
        return {};
    }
    return {};
}

fs::path system_library(const std::string& name_pattern, const exec::EnvMap& env, std::vector<std::string>& searched) {
    if (auto file = from_ldconfig(name_pattern, env, searched); !file.empty()) return file;
    for (const char* dir :
         {"/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu"}) {
        searched.emplace_back(dir);
        if (auto found = glob_files(dir, name_pattern); !found.empty()) return found.front();
    }
    return {};
}

}  // namespace

std::vector<fs::path> glob_files(const fs::path& root, const std::string& pattern) {
    std::vector<fs::path> out;
    std::vector<std::string> parts;
    for (auto& p : core::split(pattern, '/'))
        if (!p.empty()) parts.push_back(p);
    if (!parts.empty()) glob_into(root, parts, 0, out);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

LoadedLibrary find_loaded_library(const std::vector<fs::path>& sites, const std::string& library,
                                  const exec::EnvMap& env) {
    LoadedLibrary out;
    if (library.empty()) return out;
    if (fs::path(library).is_absolute()) {
        out.searched.push_back(library);
        std::error_code ec;
        if (!has_glob(library)) {
            if (fs::is_regular_file(library, ec)) out.file = library;
        } else if (auto found = glob_files("/", library); !found.empty()) {
            out.file = found.front();
        }
        if (!out.file.empty()) out.where = "the path given";
        return out;
    }
    for (const auto& site : sites) {
        if (site.empty()) continue;
        out.searched.push_back((site / library).string());
        if (auto found = glob_files(site, library); !found.empty()) {
            out.file = found.front();
            out.where = "the venv";
            return out;
        }
    }
    if (auto file = system_library(fs::path(library).filename().string(), env, out.searched); !file.empty()) {
        out.file = std::move(file);
        out.where = "the system";
    }
    return out;
}

}  // namespace bootstrap::pyenv
