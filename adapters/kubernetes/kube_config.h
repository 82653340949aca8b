#pragma once
// Reading a kubeconfig (the file kubectl reads) into everything needed to talk to one cluster's
// API server: where it is, how to verify it, who we are, and which namespace we work in.
//
// Supported: clusters (server, certificate-authority, certificate-authority-data,
// insecure-skip-tls-verify, tls-server-name), users (token, tokenFile, client-certificate(-data),
// client-key(-data), exec credential plugins), contexts (cluster, user, namespace) and
// current-context. Refused with ErrorKind::unsupported: auth-provider, username/password (basic
// auth), impersonation, proxy-url and exec plugins that must prompt (interactiveMode Always).
// Other keys (extensions, preferences, ...) are ignored, as kubectl does.
//
// No TLS here: the PEM texts are checked for their BEGIN lines only; KubeClient loads them.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/common/result.h"

namespace orch {

// A user's `exec` credential plugin (client.authentication.k8s.io): a program that prints an
// ExecCredential with a bearer token and/or a client certificate (gke-gcloud-auth-plugin,
// `aws eks get-token`, kubelogin). KubeClient runs it (exec_credential.h).
struct KubeExecPlugin {
  std::string command;  // as written; a name with a '/' is made absolute against the kubeconfig
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to orchestrate's environment
  std::string api_version;  // client.authentication.k8s.io/v1 or v1beta1
  // Never or IfAvailable: orchestrate has no terminal, so the plugin is told it cannot prompt
  // (Always is refused when the kubeconfig is read).
  std::string interactive_mode;
  bool provide_cluster_info = false;  // pass server and CA in KUBERNETES_EXEC_INFO
  std::string install_hint;           // shown when the command cannot be started
  // 'exec plugin "aws" of user "u" in kubeconfig /y/config', for messages.
  std::string source;
};

// One cluster as seen through one context, everything resolved (files read, base64 decoded).
struct KubeTarget {
  std::string kubeconfig;  // the file it came from (after "~/" expansion), for messages
  std::string context;     // the context used
  std::string cluster;     // that context's cluster
  std::string user;        // that context's user ("" when the context names none)

  std::string server;  // "https://HOST:PORT[/prefix]", normalised; names the server in messages
  std::string host;    // "127.0.0.1", "::1" (no brackets), "api.example.com"
  std::string port;    // "6443" (443 when the kubeconfig gives none)
  std::string path_prefix;  // "" or "/k8s/clusters/c-1" (a server behind a proxy); no trailing '/'
  // The name the server's certificate must carry (and the SNI sent): tls-server-name, or "" for
  // the host itself.
  std::string tls_server_name;

  bool insecure_skip_tls_verify = false;  // the kubeconfig said so; `warnings` says it too
  std::string ca_pem;                     // "" = the system trust store
  // Where ca_pem came from, for messages: 'certificate-authority /x/ca.crt of cluster "c" in
  // kubeconfig /y/config' (or certificate-authority-data).
  std::string ca_source;

  std::string client_cert_pem;  // both or neither of these two
  std::string client_key_pem;
  // Where they came from, for messages: 'of user "u" in kubeconfig /y/config
  // (client-certificate /x/c.crt, client-key /x/c.key)'.
  std::string client_cert_source;

  std::string token;       // bearer token ("" = none)
  std::string token_file;  // set when the token came from tokenFile: KubeClient re-reads it
  // The user's credential plugin: it supplies the token (and may supply the client certificate)
  // at run time. Exclusive with `token`/`tokenFile`.
  std::optional<KubeExecPlugin> exec;

  std::string namespace_;  // the override, else the context's namespace, else "default"

  // Things the caller should log (insecure-skip-tls-verify, both data and file given, ...).
  std::vector<std::string> warnings;
};

// Loads `path` ("~/" expands to $HOME) and resolves `context` ("" = the current-context).
// Relative file paths inside the kubeconfig are relative to its directory. A non-empty
// `namespace_override` replaces the context's namespace.
//
// Errors: ErrorKind::invalid naming the file and what is wrong (a missing context lists the
// contexts that exist; a context naming a missing cluster or user says so; unreadable
// certificate/token files name the file); ErrorKind::unsupported for authentication this
// client does not do (exec plugins, auth-provider, basic auth) and proxy-url.
Result<KubeTarget> load_kube_target(const std::string& path, const std::string& context,
                                    const std::string& namespace_override);

// The same from a kubeconfig's text: `source` names it in messages and `base_dir` is where
// relative paths start. load_kube_target reads the file and calls this.
Result<KubeTarget> parse_kube_target(const std::string& text, const std::string& source,
                                     const std::string& base_dir, const std::string& context,
                                     const std::string& namespace_override);

// The pieces of a kubeconfig `server` value ("https://HOST[:PORT][/prefix]"); exposed for tests.
struct KubeServerUrl {
  std::string host;
  std::string port;
  std::string prefix;
  std::string normalised;  // "https://HOST:PORT[/prefix]" (IPv6 hosts in brackets)
};
Result<KubeServerUrl> parse_kube_server_url(const std::string& server);

}  // namespace orch
