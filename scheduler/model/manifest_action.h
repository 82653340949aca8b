#pragma once
// The words of a `manifest` outbox action as they travel in its JSON payload: why the brain
// asked for the listing, and which files to hash. Parsed once into enums; a word that is not one
// of these is an error, never a silent default.

#include <optional>
#include <string_view>

#include "scheduler/model/site_types.h"

namespace orch {

enum class ManifestPurpose {
  register_copy,  // "register": a copy the job reported, listed to record its manifest
  verify,         // "verify": a transferred copy, compared with its source's manifest
  audit,          // "audit": a verified copy, checked again (a sample, or sizes only)
};

std::string_view to_string(ManifestPurpose purpose);
std::optional<ManifestPurpose> parse_manifest_purpose(std::string_view text);

// "all", "none", "listed".
std::string_view to_string(ManifestRequest::Hash hash);
std::optional<ManifestRequest::Hash> parse_manifest_hash(std::string_view text);

}  // namespace orch
