#pragma once
// An Origin in JSON, as manifests and lockfiles both carry it (one writer, one reader).

#include <nlohmann/json.hpp>

#include "core/json_fields.hpp"
#include "core/json_writer.hpp"
#include "manifest/manifest.hpp"

namespace bootstrap::manifest {

/// Only the fields that say something: an index origin is {"kind": "index"} until the engine
/// annotates it, which keeps a 300-package manifest readable.
[[nodiscard]] nlohmann::json origin_to_json(const Origin& o);

/// The same object written straight to `w` (what origin_to_json(o).dump() gives).
void write_origin(core::JsonWriter& w, const Origin& o);

/// The reverse; a missing or empty kind reads as "unknown".
[[nodiscard]] Origin origin_from_json(const core::JsonFields& f);

}  // namespace bootstrap::manifest
