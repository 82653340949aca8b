#pragma once
// PATCH as the API server applies it to a stored object: a JSON merge patch (RFC 7386,
// application/merge-patch+json) or a JSON patch (RFC 6902, application/json-patch+json).
// Strategic merge and apply patches are answered 415, naming the two it takes. The server's
// own fields (kind, apiVersion, uid, creationTimestamp, deletionTimestamp) stay as stored; a
// patch that changes the name or namespace is 422 (immutable); a metadata.resourceVersion in
// the patched object that is not the stored one is a precondition that failed: 409 Conflict.

#include <string>

#include <nlohmann/json.hpp>

namespace orch::fake_kube {

// The object after the patch (not stored, not admitted). `resource` ("secrets") names it in
// messages. Throws ApiError 400 (a body that is not JSON, a JSON patch that does not apply),
// 409, 415 or 422.
nlohmann::json apply_patch(const nlohmann::json& current, const std::string& body,
                           const std::string& content_type, const std::string& resource);

}  // namespace orch::fake_kube
