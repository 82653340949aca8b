#include "scheduler/model/manifest_action.h"

namespace orch {

std::string_view to_string(ManifestPurpose purpose) {
  switch (purpose) {
    case ManifestPurpose::register_copy:
      return "register";
    case ManifestPurpose::verify:
      return "verify";
    case ManifestPurpose::audit:
      return "audit";
  }
  return "register";
}

std::optional<ManifestPurpose> parse_manifest_purpose(std::string_view text) {
  for (auto p : {ManifestPurpose::register_copy, ManifestPurpose::verify, ManifestPurpose::audit}) {
    if (to_string(p) == text) return p;
  }
  return std::nullopt;
}

std::string_view to_string(ManifestRequest::Hash hash) {
  switch (hash) {
    case ManifestRequest::Hash::all:
      return "all";
    case ManifestRequest::Hash::none:
      return "none";
    case ManifestRequest::Hash::listed:
      return "listed";
  }
  return "all";
}

std::optional<ManifestRequest::Hash> parse_manifest_hash(std::string_view text) {
  using H = ManifestRequest::Hash;
  for (auto h : {H::all, H::none, H::listed}) {
    if (to_string(h) == text) return h;
  }
  return std::nullopt;
}

}  // namespace orch
