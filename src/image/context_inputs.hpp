#pragma once
// What an image build context carries from this machine (image/containerfile.hpp): the local
// inputs a recipe's plan records (ResolvedStep::local_inputs, `[vars]` directories), paired with
// where the image's copy of the recipe reads them, copied without what is not source; and the
// archives of `url` sources, fetched into this machine's cache and copied in.

#include <filesystem>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "engine/plan.hpp"
#include "image/containerfile.hpp"

namespace bootstrap::image {

/// The inputs of `here` (the recipe) paired with where the copy `there` (the recipe copied to
/// `copied_etc`, which the image holds at `image_etc`) will look for them; nested ones folded
/// into the directory that holds them (a repository inside a tree is copied on its own, with
/// its .git). Each gets its `context_path` ("sources/N"). Only what the steps read is carried:
/// their local inputs, the existing paths their argv names (not the system's own), and a [vars]
/// directory a step reads in; `/`, a system directory or the home directory read whole is
/// refused (core::whole_directory_refusal), naming the [vars] value's or the step's file:line.
[[nodiscard]] Result<std::vector<ContextSource>> context_sources(const engine::Plan& here, const engine::Plan& there,
                                                                 const fs::path& copied_etc, const fs::path& image_etc);

/// Copy each source to `stage`/context_path, leaving out .git (but for a repository), venvs,
/// __pycache__, CMake build trees, a source's top-level build/ and dist/, sockets, fifos,
/// devices and kernel filesystems, and `context` (the context being written, when it lies
/// inside); the files and bytes copied (and what was left out) are filled in. More than
/// k_max_context_bytes or k_max_context_files in all is an error, and so is any credential
/// file (core::credential_file_rule; never copied), each named relative to `recipe_dir`.
[[nodiscard]] Status copy_context_sources(std::vector<ContextSource>& sources, const fs::path& stage,
                                          const fs::path& context, const fs::path& recipe_dir);

/// Each `url` source's archive of `here`, into `stage`/bootstrap/downloads/ (a copy of this
/// machine's cached one, fetched into that cache first when it is not there).
[[nodiscard]] Result<std::vector<ContextDownload>> context_downloads(const engine::Plan& here, const fs::path& stage);

/// Copy one file into the context; the error names `what`.
[[nodiscard]] Status copy_file(const fs::path& from, const fs::path& to, std::string_view what);

}  // namespace bootstrap::image
