#pragma once
// What a webhook is told (pure: no I/O): which of its events a notice is, the body it gets
// (orchestrate's JSON, or a Slack-compatible {"text": ...}) and the body's signature.
//
// Signature: X-Orchestrate-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>
// with X-Orchestrate-Timestamp: <unix seconds>; a receiver recomputes it with its copy of the
// secret and refuses a timestamp too old (a replay). X-Orchestrate-Delivery is the notice's id:
// a delivery retried after a lost answer carries the same one.

#include <optional>
#include <string>

#include "scheduler/model/job_state.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/store/rows.h"

namespace orch {

// The webhook event (webhook_event_names()) a notice is; nullopt for an attempt that ended
// without an infrastructure cause (cause: the attempt's, when the notice is an attempt-ended).
std::optional<std::string> webhook_event_of(const NoticeRow& notice,
                                            std::optional<ExitCause> cause);

// The body for the hook's format. error_excerpt: what the notice's attempt printed when it
// failed (AttemptRow::error_excerpt; "" for none): the JSON body's "error_excerpt", and a code
// block after a Slack message's text.
std::string webhook_body(const WebhookSpec& hook, const NoticeRow& notice, const std::string& event,
                         const std::string& error_excerpt = "");

// "sha256=" and the hex HMAC-SHA256 of "<timestamp>.<body>" under secret.
std::string webhook_signature(const std::string& secret, const std::string& timestamp,
                              const std::string& body);

}  // namespace orch
