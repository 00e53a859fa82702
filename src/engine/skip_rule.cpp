#include "engine/skip_rule.hpp"

#include <iterator>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/sha256.hpp"
#include "engine/image_state.hpp"
#include "pyenv/name.hpp"
#include "steps/kind.hpp"
#include "steps/verify_clause.hpp"

namespace bootstrap::engine {

namespace {

/// "on 2026-12-05", or "during the image build" in a sealed image whose build recorded the
/// failure at its SOURCE_DATE_EPOCH (which would read as 1970-01-01).
std::string failed_when(const std::string& finished_at, const fs::path& venv) {
    const std::string shown = core::shown_time(finished_at.substr(0, 10), sealed_build_time(venv));
    return shown == finished_at.substr(0, 10) ? "on " + shown : shown;
}

}  // namespace

namespace {

/// Files a step promises (its kind's, such as `creates` or a pybind11 output, and `file` verify
/// clauses) still exist: a stat each.
bool outputs_exist(const steps::ResolvedStep& step, std::string* why) {
    const auto& kind = steps::kind_of(step.kind);
    std::vector<std::string> paths;
    if (kind.promised_files) paths = kind.promised_files(step);
    for (auto& p : steps::clauses_promised_files(step)) paths.push_back(std::move(p));
    for (const auto& p : paths) {
        std::error_code ec;
        if (!fs::exists(p, ec)) {
            *why = p + " no longer exists";
            return false;
        }
    }
    return true;
}

/// The requirements whose being satisfied makes running `step` unnecessary (its kind's hook).
std::optional<steps::Satisfiable> satisfiable(const steps::ResolvedStep& step) {
    const auto& kind = steps::kind_of(step.kind);
    if (!kind.satisfiable) return std::nullopt;
    return kind.satisfiable(step);
}

}  // namespace

bool key_matches(const state::JournalEntry& entry, const steps::ResolvedStep& step) {
    return entry.key == step.key || (!step.legacy_key.empty() && entry.key == step.legacy_key);
}

std::string changed_reason(const std::vector<std::string>& changes) {
    if (changes.empty()) return "step changed";
    std::string out = "step changed: " + changes.front();
    if (changes.size() > 1) out += fmt::format(" (+{} more)", changes.size() - 1);
    return out;
}

std::string installed_state(const Installed& installed) {
    std::string material;
    material.reserve(installed.size() * 80);
    for (const auto& [name, d] : installed)
        fmt::format_to(std::back_inserter(material), "{} {} {} {} {}\n", name, d.version, d.record_stamp.size,
                       d.record_stamp.mtime_ns, d.record_stamp.inode);
    return core::sha256_hex(material);
}

SkipRule::SkipRule(const Plan& plan, const Facts& facts, state::Journal& journal)
    : m_plan(plan), m_facts(facts), m_journal(journal), m_sealed(is_sealed(plan.venv)) {
    std::set<std::string> named_later;  // walking backwards: names later install steps ask for
    for (auto st = plan.steps.rbegin(); st != plan.steps.rend(); ++st) {
        const auto own = steps::owned_of(*st);
        if (own.requirements == nullptr) continue;
        for (const auto& dependent : st->source->allow_conflicts)
            for (const auto& req : *own.requirements)
                m_allowed_conflicts.insert({pyenv::normalize_name(dependent), req.normalized_name});
        m_superseded[st->id] = named_later;
        for (const auto& req : *own.requirements) named_later.insert(req.normalized_name);
    }
}

/// Does what the journal recorded for a step still hold? RECORD stamps avoid rehashing; a
/// stamp that changed while the digest did not is refreshed.
bool SkipRule::outcome_holds(state::JournalEntry& entry, const Installed& installed, std::string* why) {
    for (auto& [name, rec] : entry.dists) {
        auto it = installed.find(name);
        if (it == installed.end()) {
            *why = fmt::format("{} is no longer installed", name);
            return false;
        }
        if (it->second.version != rec.version) {
            *why = fmt::format("{} is now {} (was {})", name, it->second.version, rec.version);
            return false;
        }
        if (it->second.record_stamp == rec.stamp) continue;
        auto digest = pyenv::record_digest(it->second);
        if (!digest || *digest != rec.record_sha256) {
            *why = fmt::format("{} {} was reinstalled or modified", name, rec.version);
            return false;
        }
        if (m_sealed) continue;  // a sealed venv is read, never written, while it holds
        rec.stamp = it->second.record_stamp;
        m_refreshed = true;
    }
    return true;
}

/// An install step is up to date only while the venv satisfies its own requirements (less those
/// a later step asks for by name): the
/// distributions it installed may since belong to a later step that changed them (ownership
/// moves forward), and that must not make this step's promise vanish.
bool SkipRule::own_requirements_hold(const steps::ResolvedStep& step, const Installed& installed,
                                     std::string* why) const {
    const auto asked = steps::owned_of(step);
    if (asked.requirements == nullptr || !m_facts.python) return true;
    // A later step that asks for the same distribution itself decides its version (a pin,
    // then an upgrade of it): the earlier requirement on that name is superseded.
    std::vector<pyenv::Requirement> own;
    auto superseded = m_superseded.find(step.id);
    for (const auto& req : *asked.requirements)
        if (superseded == m_superseded.end() || !superseded->second.count(req.normalized_name)) own.push_back(req);
    return requirements_hold(own, asked.pre, installed, why);
}

bool SkipRule::venv_state_holds(const std::string& recorded, const std::string& stat_state,
                                const Installed& installed) {
    if (!is_content_state(recorded)) return recorded == stat_state;
    if (m_content.first != stat_state || m_content.second.empty()) {
        auto content = content_state(installed);
        if (!content) return false;  // a RECORD that cannot be read: verify again
        m_content = {stat_state, *content};
    }
    return recorded == m_content.second;
}

bool SkipRule::passed(const steps::ResolvedStep& step) const {
    auto it = m_journal.steps.find(step.id);
    return it != m_journal.steps.end() && it->second.status == state::StepStatus::ok;
}

std::vector<Unsatisfied> SkipRule::unsatisfied(const Installed& installed) const {
    std::vector<Unsatisfied> out;
    for (const auto& step : m_plan.steps) {
        if (!passed(step)) continue;
        std::string why;
        if (!own_requirements_hold(step, installed, &why)) out.push_back({&step, why});
    }
    return out;
}

bool SkipRule::requirements_hold(const std::vector<pyenv::Requirement>& requirements, bool pre,
                                 const Installed& installed, std::string* why) const {
    if (!m_facts.python) return true;
    for (const auto& req : requirements) {
        std::string reason;
        if (!pyenv::is_satisfied(req, installed, m_facts.python->markers, pre, &reason, m_allowed_conflicts)) {
            *why = reason.empty() ? fmt::format("{} is no longer satisfied", req.str()) : reason;
            return false;
        }
    }
    return true;
}

StepDecision SkipRule::decide(const steps::ResolvedStep& step, const Installed& installed, bool earlier_ran, bool force,
                              bool verify, const std::string* venv_state) {
    if (!step.not_locked.empty()) return {Decision::optional_failed, "not in the lockfile: " + step.not_locked};
    if (force) return {Decision::run, "forced"};
    std::string why_run;
    std::vector<std::string> changes;
    auto it = m_journal.steps.find(step.id);
    bool holds = false;
    if (it == m_journal.steps.end()) why_run = "first run";
    else if (it->second.status == state::StepStatus::failed && step.optional && !it->second.retry_can_help &&
             key_matches(it->second, step) && !m_plan.retry_optional)
        return {Decision::optional_failed,
                fmt::format("optional step failed {}: {}; `--retry-optional` or a changed step retries it",
                            failed_when(it->second.finished_at, m_plan.venv),
                            it->second.failure.empty() ? std::string("(no reason recorded)") : it->second.failure)};
    else if (it->second.status != state::StepStatus::ok)
        why_run = fmt::format("resuming: last run {}", to_string(it->second.status));
    else if (!key_matches(it->second, step)) {
        // Inputs an older bootstrap did not record explain nothing: the bare reason then.
        if (!it->second.inputs.empty()) changes = core::explain_change(it->second.inputs, step.key_inputs);
        why_run = changed_reason(changes);
    } else
        holds = outputs_exist(step, &why_run) && outcome_holds(it->second, installed, &why_run) &&
                own_requirements_hold(step, installed, &why_run);

    if (!holds) {
        // An install step that never ran (or changed) need not call the installer when the
        // venv already satisfies it (its kind says which requirements; upgrade/reinstall steps
        // always ask the installer).
        if (auto wanted = satisfiable(step); wanted && m_facts.python && !installed.empty()) {
            std::string ignored;
            if (requirements_hold(wanted->requirements, wanted->pre, installed, &ignored))
                return {Decision::satisfied, "requirements already satisfied"};
        }
        return {Decision::run, why_run, std::move(changes)};
    }
    if (step.verify.empty()) return {Decision::up_to_date, "up to date"};
    if (verify) return {Decision::verify_only, "--verify"};
    if (earlier_ran) return {Decision::verify_only, "an earlier step ran: re-verifying"};
    if (!venv_state_holds(it->second.venv_state, venv_state != nullptr ? *venv_state : installed_state(installed),
                          installed))
        return {Decision::verify_only, "the venv changed since it was verified"};
    return {Decision::up_to_date, "up to date"};
}

const char* to_string(Decision d) {
    switch (d) {
        case Decision::run: return "run";
        case Decision::verify_only: return "verify";
        case Decision::up_to_date:
        case Decision::satisfied:
        case Decision::optional_failed: return "skip";
        case Decision::not_selected: return "none";
    }
    return "run";
}

Result<std::vector<StepDecision>> predict(const Plan& plan, const Facts& facts) {
    BS_TRY(auto journal, state::Journal::load(plan.venv));
    Installed installed;
    if (facts.python) {
        BS_TRY(installed, pyenv::scan_venv_packages(*facts.python));
    }
    return predict(plan, facts, std::move(journal), installed);
}

std::vector<StepDecision> predict(const Plan& plan, const Facts& facts, state::Journal journal,
                                  const Installed& installed) {
    SkipRule rule(plan, facts, journal);
    const std::string state = installed_state(installed);
    std::vector<StepDecision> out;
    bool earlier = false;
    for (const auto& step : plan.steps) {
        StepDecision d;
        if (step.index < plan.selected.size() && !plan.selected[step.index]) {
            d = {Decision::not_selected, "not selected"};
        } else if (step.key.empty()) {
            d = {Decision::run, "its inputs are known once the venv exists"};
        } else {
            d = rule.decide(step, installed, earlier, false, false, &state);
            if (d.runs_action() && step.kept) d = {Decision::up_to_date, step.note};
        }
        if (d.runs_action()) earlier = true;
        out.push_back(std::move(d));
    }
    return out;
}

std::optional<std::vector<StepDecision>> settled_decisions(
    const Plan& plan, const Facts& facts, state::Journal& journal, const Installed& installed,
    const std::function<void(const steps::ResolvedStep&, const StepDecision&)>& log) {
    SkipRule rule(plan, facts, journal);
    const std::string state = installed_state(installed);
    std::vector<StepDecision> decisions;
    for (size_t i = 0; i < plan.steps.size(); ++i) {
        const auto& step = plan.steps[i];
        if (i >= plan.selected.size() || !plan.selected[i]) {
            decisions.emplace_back(Decision::not_selected, "not selected");
            continue;
        }
        if (step.key.empty()) return std::nullopt;
        decisions.push_back(rule.decide(step, installed, false, false, false, &state));
        if (log) log(step, decisions.back());
        if (decisions.back().decision == Decision::optional_failed) continue;  // nothing to write either
        if (decisions.back().decision != Decision::up_to_date) return std::nullopt;
        // Up to date under its v3 key, or without recorded inputs: the locked path re-keys it.
        auto entry = journal.steps.find(step.id);
        if (entry == journal.steps.end() || entry->second.key != step.key || entry->second.inputs != step.key_inputs ||
            !rule.venv_state_holds(entry->second.venv_state, state, installed))
            return std::nullopt;
    }
    if (rule.refreshed() || !rule.unsatisfied(installed).empty()) return std::nullopt;
    return decisions;
}

}  // namespace bootstrap::engine
