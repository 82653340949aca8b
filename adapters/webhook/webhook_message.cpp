#include "adapters/webhook/webhook_message.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <nlohmann/json.hpp>

#include "scheduler/common/text.h"

namespace orch {

std::optional<std::string> webhook_event_of(const NoticeRow& n, std::optional<ExitCause> cause) {
  if (n.kind == "succeeded") return "job-succeeded";
  if (n.kind == "failed") return "job-failed";
  if (n.kind == "attempt-ended") {
    if (cause && is_infra_cause(*cause)) return "attempt-infra";
    return std::nullopt;
  }
  if (n.kind == "quarantined") return "node-quarantined";
  if (n.kind == "retired") return "node-retired";
  if (n.kind == "mfu-drop" || n.kind == "site-down" || n.kind == "checkpoint-lost" ||
      n.kind == "io-stall" || n.kind == "budget") {
    return n.kind;
  }
  return std::nullopt;
}

std::string webhook_body(const WebhookSpec& hook, const NoticeRow& n, const std::string& event,
                         const std::string& error_excerpt) {
  using nlohmann::json;
  if (hook.format == "slack") {
    std::string subject = n.job_id ? "job " + std::to_string(*n.job_id) : std::string();
    if (!n.node.empty()) subject = "node " + n.node + " of " + n.cluster;
    std::string text =
        "orchestrate: " + event + (subject.empty() ? "" : " (" + subject + ")") + ": " + n.message;
    // The excerpt holds no backticks of its own that could close the block early.
    std::string block = error_excerpt;
    for (char& c : block) c = c == '`' ? '\'' : c;
    if (!block.empty()) text += "\n```" + block + "```";
    return json{{"text", text}}.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  json body = {{"event", event},       {"id", n.id},        {"at_ms", n.at_ms},
               {"message", n.message}, {"job_id", nullptr}, {"attempt_no", nullptr},
               {"cluster", n.cluster}, {"node", n.node},    {"error_excerpt", error_excerpt}};
  if (n.job_id) body["job_id"] = *n.job_id;
  if (n.attempt_no) body["attempt_no"] = *n.attempt_no;
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string webhook_signature(const std::string& secret, const std::string& timestamp,
                              const std::string& body) {
  const std::string signed_text = timestamp + "." + body;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(signed_text.data()), signed_text.size(), mac,
       &length);
  return "sha256=" + to_hex(mac, length);
}

}  // namespace orch
