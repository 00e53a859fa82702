#include "rollback/batch.hpp"

#include <map>
#include <utility>

#include "core/strings.hpp"

namespace bootstrap::rollback {

namespace {

bool is_wheel_file(const InstallSource& s) {
    return s.kind == InstallSource::Kind::original_file || s.kind == InstallSource::Kind::artifact ||
           s.kind == InstallSource::Kind::find_links;
}

/// Commands run in this order of kinds, then by key.
enum Rank { k_index = 0, k_url = 1, k_editable = 2, k_wheels = 3 };

InstallBatch& batch_for(std::map<std::pair<int, std::string>, InstallBatch>& batches, Rank rank, const std::string& key,
                        const std::string& installer) {
    auto [it, fresh] = batches.try_emplace({rank, installer + "|" + key});
    InstallBatch& b = it->second;
    if (fresh) {
        b.installer = installer;
        b.request.no_deps = true;
    }
    return b;
}

void add(InstallBatch& b, const RollbackInstall& i) {
    auto args = requirement_args(i);
    b.request.requirements.insert(b.request.requirements.end(), args.begin(), args.end());
    b.members.push_back(&i);
    if (!i.reinstall) return;
    if (b.installer == "uv") b.request.reinstall_packages.push_back(i.name);
    else b.request.reinstall = true;
}

}  // namespace

std::vector<std::string> requirement_args(const RollbackInstall& i) {
    switch (i.source.kind) {
        case InstallSource::Kind::direct_url: return {i.display_name + " @ " + i.source.url};
        case InstallSource::Kind::editable: return {"-e", i.source.url};
        case InstallSource::Kind::index: return {i.display_name + "==" + i.version};
        case InstallSource::Kind::original_file:
        case InstallSource::Kind::artifact:
        case InstallSource::Kind::find_links: return {i.source.wheel.string()};
    }
    return {};
}

std::vector<InstallBatch> batch_installs(const RollbackPlan& plan,
                                         const std::function<std::string(const manifest::Package&)>& installer_for) {
    std::map<std::pair<int, std::string>, InstallBatch> batches;
    std::vector<std::pair<std::string, const RollbackInstall*>> wheels;  // installer, package
    for (const auto& i : plan.install) {
        const std::string installer = installer_for(i.target);
        const auto& s = i.source;
        if (is_wheel_file(s)) {
            wheels.emplace_back(installer, &i);
            continue;
        }
        if (s.kind == InstallSource::Kind::index) {
            InstallBatch& b = batch_for(batches, k_index, core::join(s.index_urls, " "), installer);
            if (b.members.empty()) {
                b.request.index_url = s.index_urls.front();
                b.request.extra_index_urls.assign(s.index_urls.begin() + 1, s.index_urls.end());
                b.resolves = true;
                b.from = s.describe();
            }
            add(b, i);
        } else if (s.kind == InstallSource::Kind::direct_url) {
            InstallBatch& b = batch_for(batches, k_url, "", installer);
            b.resolves = true;
            b.from = "URLs";
            add(b, i);
        } else {
            InstallBatch& b = batch_for(batches, k_editable, "", installer);
            b.from = "editable sources";
            add(b, i);
        }
    }
    for (const auto& [installer, i] : wheels) {
        InstallBatch* target = nullptr;
        for (auto& [key, b] : batches) {
            if (key.first == k_index && b.installer == installer) {
                target = &b;
                break;
            }
        }
        if (target) {
            if (target->from.find(" and local wheels") == std::string::npos) target->from += " and local wheels";
        } else {
            target = &batch_for(batches, k_wheels, "", installer);
            target->request.no_index = true;
            target->from = "local wheels";
        }
        add(*target, *i);
    }
    std::vector<InstallBatch> out;
    for (auto& [key, b] : batches) out.push_back(std::move(b));
    return out;
}

}  // namespace bootstrap::rollback
