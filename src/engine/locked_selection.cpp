#include "engine/locked_selection.hpp"

#include <map>

#include <fmt/format.h>

#include "core/strings.hpp"
#include "engine/locked_plan.hpp"
#include "steps/kind.hpp"

namespace bootstrap::engine {

namespace {

std::string quoted(const std::vector<std::string>& ids) {
    std::vector<std::string> out;
    out.reserve(ids.size());
    for (const auto& id : ids) out.push_back("'" + id + "'");
    return core::join(out, ", ");
}

std::string steps_word(size_t n) { return n == 1 ? "step" : "steps"; }

}  // namespace

LockedLeftOut locked_left_out(const manifest::Lockfile& lock, const Plan& plan) {
    std::map<std::string, bool> kept;  // by step id
    for (const auto& step : plan.steps) kept[step.id] = step.index < plan.selected.size() && plan.selected[step.index];
    // A step the plan does not know (none, when the lock fits the recipe) counts as kept.
    auto is_kept = [&](const std::string& id) {
        auto it = kept.find(id);
        return it == kept.end() || it->second;
    };
    std::map<std::string, std::set<std::string>> holders;  // package -> the steps that hold it
    for (const auto& [id, step] : lock.steps)
        for (const auto& name : step.packages) holders[name].insert(id);
    for (const auto& [name, p] : lock.packages)
        if (!p.origin.step.empty()) holders[name].insert(p.origin.step);

    LockedLeftOut out;
    std::set<std::string> left_steps;
    for (const auto& [name, ids] : holders) {
        if (!lock.packages.count(name) || ids.empty()) continue;
        bool any_kept = false;
        for (const auto& id : ids) any_kept = any_kept || is_kept(id);
        if (any_kept) continue;
        out.packages.insert(name);
        left_steps.insert(ids.begin(), ids.end());
    }
    for (const auto& step : plan.steps)
        if (left_steps.count(step.id)) out.steps.push_back(step.id);

    auto only_by = [&](const std::string& name) {
        std::vector<std::string> by;
        for (const auto& id : out.steps)
            if (holders[name].count(id)) by.push_back(id);
        return fmt::format("which only {} {} lock{}", steps_word(by.size()), quoted(by), by.size() == 1 ? "s" : "");
    };
    for (const auto& step : plan.steps) {
        if (!is_kept(step.id)) continue;
        // A requirement of its own that only a left-out step locks: never for bootstrap's own
        // lock (a step's closure holds its requirements), but a foreign pylock gives every
        // package to the first install step.
        if (const auto* own = steps::owned_of(step).requirements)
            for (const auto& req : *own)
                if (out.packages.count(req.normalized_name))
                    out.needs.push_back(
                        fmt::format("step '{}' asks for {}, {}", step.id, req.str(), only_by(req.normalized_name)));
        const auto* build = step.as<steps::BuildSpec>();
        if (build == nullptr) continue;
        for (const auto& abi : build->abi_versions) {  // "torch 2.11.0+cu130", "torch not installed"
            const auto name = abi.substr(0, abi.find(' '));
            if (out.packages.count(name))
                out.needs.push_back(
                    fmt::format("step '{}' builds against {} (abi_packages), {}", step.id, name, only_by(name)));
        }
    }
    return out;
}

Status apply_locked_selection(const manifest::Lockfile& lock, Plan& plan) {
    auto left = locked_left_out(lock, plan);
    if (!left.needs.empty()) {
        const auto them = core::join(left.steps, " ");
        return fail(ErrorCode::usage,
                    fmt::format("--locked: the selection leaves out {} {}, which kept steps need",
                                steps_word(left.steps.size()), quoted(left.steps)),
                    core::join(left.needs, "\n") +
                        fmt::format("\nselect {} too (drop them from --skip, add them to --only), or lock this "
                                    "selection: run it without --locked (e.g. --skip {}), then `bootstrap lock`",
                                    them, them));
    }
    plan.locked_left_out = left.packages;
    if (left.packages.empty()) return {};
    std::vector<std::string> names(left.packages.begin(), left.packages.end());
    const std::string shown = names.size() <= 8 ? ": " + core::join(names, ", ") : "";
    auto notice = fmt::format(
        "--locked: {} {} left out: the lock check does not require the {} package(s) only "
        "{}{}",
        steps_word(left.steps.size()), core::join(left.steps, ", "), names.size(),
        left.steps.size() == 1 ? "it locks" : "they lock", shown);
    plan.notices.push_back(notice);
    plan.notes.push_back(std::move(notice));
    return {};
}

Status LockedPlan::apply_selection(Plan& plan) const { return apply_locked_selection(m_lock, plan); }

}  // namespace bootstrap::engine
