#include "adapters/kubernetes/exec_credential.h"

#include <nlohmann/json.hpp>

#include "adapters/kubernetes/kube_status.h"
#include "adapters/process/run_captured.h"
#include "scheduler/common/base64.h"
#include "scheduler/common/utf8.h"

namespace orch {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxCredentialBytes = 1 << 20;
constexpr std::size_t kStderrShown = 600;

// The last kStderrShown bytes of a plugin's stderr, on one line, valid UTF-8.
std::string stderr_tail(const std::string& err) {
  std::string tail = err.size() > kStderrShown ? err.substr(err.size() - kStderrShown) : err;
  for (char& c : tail) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  while (!tail.empty() && tail.back() == ' ') tail.pop_back();
  return to_valid_utf8(tail);
}

}  // namespace

std::string exec_info_json(const KubeExecPlugin& plugin, const KubeTarget& target) {
  json spec = {{"interactive", false}};
  if (plugin.provide_cluster_info) {
    json cluster = {{"server", target.server}};
    if (!target.ca_pem.empty())
      cluster["certificate-authority-data"] = encode_base64(target.ca_pem);
    if (!target.tls_server_name.empty()) cluster["tls-server-name"] = target.tls_server_name;
    if (target.insecure_skip_tls_verify) cluster["insecure-skip-tls-verify"] = true;
    spec["cluster"] = std::move(cluster);
  }
  return json{{"apiVersion", plugin.api_version}, {"kind", "ExecCredential"}, {"spec", spec}}
      .dump();
}

Result<ExecCredential> parse_exec_credential(std::string_view out, const KubeExecPlugin& plugin) {
  const auto bad = [&](const std::string& why) {
    return make_error(ErrorKind::invalid,
                      plugin.source + " printed no usable ExecCredential: " + why);
  };
  json doc = json::parse(out, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return bad("its output is not a JSON object");
  const auto text = [&](const json& obj, const char* key) -> std::optional<std::string> {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::string();
    if (!it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  auto kind = text(doc, "kind");
  if (!kind || *kind != "ExecCredential") return bad("kind is not ExecCredential");
  auto version = text(doc, "apiVersion");
  if (!version || *version != plugin.api_version) {
    return bad("apiVersion " + (version ? "\"" + *version + "\"" : std::string("?")) +
               " is not the kubeconfig's " + plugin.api_version);
  }
  auto status = doc.find("status");
  if (status == doc.end() || !status->is_object()) return bad("it has no status");
  ExecCredential c;
  auto token = text(*status, "token");
  auto cert = text(*status, "clientCertificateData");
  auto key = text(*status, "clientKeyData");
  auto expires = text(*status, "expirationTimestamp");
  if (!token || !cert || !key || !expires) return bad("a status field is not a string");
  c.token = *token;
  c.client_cert_pem = *cert;
  c.client_key_pem = *key;
  if (c.token.empty() && c.client_cert_pem.empty()) {
    return bad("status has neither a token nor clientCertificateData");
  }
  if (c.client_cert_pem.empty() != c.client_key_pem.empty()) {
    return bad("status has clientCertificateData or clientKeyData without the other");
  }
  if (!expires->empty()) {
    c.expires_ms = kube::parse_rfc3339_ms(*expires);
    if (!c.expires_ms)
      return bad("expirationTimestamp \"" + *expires + "\" is not an RFC 3339 time");
  }
  return c;
}

ExecCredentialSource::ExecCredentialSource(KubeExecPlugin plugin, std::string exec_info,
                                           std::string site, std::function<std::int64_t()> now_ms)
    : plugin_(std::move(plugin)),
      exec_info_(std::move(exec_info)),
      site_(std::move(site)),
      now_ms_(std::move(now_ms)) {}

Result<ExecCredential> ExecCredentialSource::get() {
  const std::lock_guard lock(mu_);
  if (cached_ && (!cached_->expires_ms || now_ms_() < *cached_->expires_ms)) return *cached_;
  cached_.reset();
  auto fresh = run_plugin();
  if (!fresh) return fresh.error();
  fresh->generation = ++runs_;
  cached_ = *fresh;
  return fresh;
}

void ExecCredentialSource::invalidate(std::uint64_t generation) {
  const std::lock_guard lock(mu_);
  if (cached_ && cached_->generation == generation) cached_.reset();
}

std::uint64_t ExecCredentialSource::runs() const {
  const std::lock_guard lock(mu_);
  return runs_;
}

Result<ExecCredential> ExecCredentialSource::run_plugin() {
  const std::string who = "site " + site_ + ": " + plugin_.source;
  std::vector<std::string> argv{plugin_.command};
  argv.insert(argv.end(), plugin_.args.begin(), plugin_.args.end());
  process::RunOptions options;
  options.timeout = kPluginTimeout;
  options.max_out = kMaxCredentialBytes;
  options.kill_on_overflow = true;
  options.max_err = 64 << 10;
  for (const auto& [name, value] : plugin_.env) {
    std::string entry = name;
    entry += "=";
    entry += value;
    options.env.push_back(std::move(entry));
  }
  options.env.push_back("KUBERNETES_EXEC_INFO=" + exec_info_);
  auto ran = process::run_captured(argv, options);
  if (!ran) {
    return make_error(ErrorKind::unreachable,
                      who + " cannot be started: " + ran.error().message +
                          (plugin_.install_hint.empty() ? "" : " (" + plugin_.install_hint + ")"));
  }
  if (ran->timed_out) {
    return make_error(ErrorKind::unreachable,
                      who + " did not finish within " +
                          std::to_string(kPluginTimeout.count() / 1000) + " s" +
                          (ran->err.empty() ? "" : ": " + stderr_tail(ran->err)));
  }
  if (ran->overflowed) {
    return make_error(ErrorKind::unreachable, who + " printed more than 1 MiB");
  }
  if (ran->exit.exit_code != 0) {
    const std::string how = ran->exit.exit_code >= 0
                                ? "exit status " + std::to_string(ran->exit.exit_code)
                                : "signal " + std::to_string(ran->exit.signal);
    return make_error(
        ErrorKind::unreachable,
        who + " failed (" + how + ")" + (ran->err.empty() ? "" : ": " + stderr_tail(ran->err)));
  }
  auto credential = parse_exec_credential(ran->out, plugin_);
  if (!credential)
    return make_error(ErrorKind::unreachable, "site " + site_ + ": " + credential.error().message);
  return credential;
}

}  // namespace orch
