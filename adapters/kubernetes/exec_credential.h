#pragma once
// Exec credential plugins (client.authentication.k8s.io, as kubectl runs them): the program a
// kubeconfig's user names under `exec` prints an ExecCredential whose status holds a bearer
// token and/or a client certificate and key, and maybe when they expire.
//
// ExecCredentialSource runs the plugin when it has no credential, when the one it has expired
// (status.expirationTimestamp) or after invalidate() (the server answered 401), and otherwise
// hands out the cached one. Never interactive: stdin is /dev/null and KUBERNETES_EXEC_INFO says
// `"interactive": false`. The plugin's own env entries are added to orchestrate's environment.
// Thread-safe: concurrent callers wait for the one run.

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "adapters/kubernetes/kube_config.h"
#include "scheduler/common/result.h"

namespace orch {

struct ExecCredential {
  std::string token;  // "" when the plugin gives a client certificate only
  std::string client_cert_pem;
  std::string client_key_pem;
  std::optional<std::int64_t> expires_ms;  // none: valid until the server refuses it
  std::uint64_t generation = 0;            // which run of the plugin produced it
};

// The KUBERNETES_EXEC_INFO the plugin gets: {"apiVersion", "kind": "ExecCredential",
// "spec": {"interactive": false[, "cluster": {server, certificate-authority-data,
// tls-server-name, insecure-skip-tls-verify}]}} (the cluster only with provideClusterInfo).
std::string exec_info_json(const KubeExecPlugin& plugin, const KubeTarget& target);

// The plugin's stdout read as an ExecCredential of plugin.api_version. ErrorKind::invalid
// naming the plugin and the field for anything else: not JSON, another kind or apiVersion, no
// token and no certificate, a certificate without its key, a bad expirationTimestamp.
Result<ExecCredential> parse_exec_credential(std::string_view out, const KubeExecPlugin& plugin);

class ExecCredentialSource {
 public:
  static constexpr std::chrono::milliseconds kPluginTimeout{60000};

  // `site` names the cluster in messages; now_ms is the clock expirations are read against.
  ExecCredentialSource(KubeExecPlugin plugin, std::string exec_info, std::string site,
                       std::function<std::int64_t()> now_ms);

  // The cached credential while it has not expired, else a fresh one from the plugin. Errors
  // (ErrorKind::unreachable: the site cannot be talked to): the plugin could not be started
  // (with its installHint), ran past kPluginTimeout, exited non-zero (its stderr's tail), or
  // printed something that is not a credential.
  Result<ExecCredential> get();

  // The server refused the credential of `generation` (401): the next get() runs the plugin
  // again. A later generation (another caller already refreshed) is kept.
  void invalidate(std::uint64_t generation);

  // How many times the plugin has run (for tests and diagnostics).
  std::uint64_t runs() const;

 private:
  Result<ExecCredential> run_plugin();

  KubeExecPlugin plugin_;
  std::string exec_info_;
  std::string site_;
  std::function<std::int64_t()> now_ms_;
  mutable std::mutex mu_;
  std::optional<ExecCredential> cached_;
  std::uint64_t runs_ = 0;
};

}  // namespace orch
