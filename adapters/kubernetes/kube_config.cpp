#include "adapters/kubernetes/kube_config.h"
#include "scheduler/common/base64.h"
#include "scheduler/common/dns_name.h"
#include "scheduler/common/text.h"

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>

#include <yaml-cpp/yaml.h>

namespace orch {
namespace {

constexpr std::size_t kMaxFileBytes = 4u << 20;  // a kubeconfig, a certificate, a token

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

std::string trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Reads a whole (small) file; the error is the errno text or "larger than ...".
Result<std::string> read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorKind::invalid, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return make_error(ErrorKind::invalid, std::strerror(errno));
  std::string s = std::move(text).str();
  if (s.size() > kMaxFileBytes) {
    return make_error(ErrorKind::invalid,
                      "larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB");
  }
  return s;
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Everything about the kubeconfig being read that messages need.
class Loader {
 public:
  Loader(std::string source, std::string base_dir)
      : source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  const std::string& source() const { return source_; }

  // "kubeconfig PATH[:LINE:COL]: WHAT"
  Error invalid(const std::string& what, const YAML::Node* at = nullptr) const {
    return make_error(ErrorKind::invalid, "kubeconfig " + source_ + where(at) + ": " + what);
  }
  Error unsupported(const std::string& what, const YAML::Node* at = nullptr) const {
    return make_error(ErrorKind::unsupported, "kubeconfig " + source_ + where(at) + ": " + what);
  }

  // A scalar string under `key` of `map`; "" when absent or null.
  Result<std::string> string_field(const YAML::Node& map, const char* key,
                                   const std::string& owner) const {
    const YAML::Node node = map[key];
    if (!node || node.IsNull()) return std::string();
    if (!node.IsScalar()) {
      return invalid(owner + ": \"" + key + "\" must be a string", &node);
    }
    return node.Scalar();
  }

  Result<bool> bool_field(const YAML::Node& map, const char* key, const std::string& owner) const {
    const YAML::Node node = map[key];
    if (!node || node.IsNull()) return false;
    bool value = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
      return invalid(owner + ": \"" + key + "\" must be true or false", &node);
    }
    return value;
  }

  // A file named in the kubeconfig: "~/" expanded, relative to the kubeconfig's directory.
  Result<std::string> resolve_path(const std::string& path, const std::string& what) const {
    auto expanded = expand_home(path);
    if (!expanded) return invalid(what + " " + quoted(path) + " needs $HOME, which is not set");
    if (!expanded->empty() && expanded->front() == '/') return *expanded;
    return base_dir_ + "/" + *expanded;
  }

  // Reads `path` (already resolved) for `what` ("certificate-authority of cluster \"c\"").
  Result<std::string> read_named_file(const std::string& path, const std::string& what) const {
    auto text = read_small_file(path);
    if (!text.ok()) return invalid(what + ": cannot read " + path + ": " + text.error().message);
    return text;
  }

  // "-data" values are base64.
  Result<std::string> decode(const std::string& data, const std::string& what) const {
    auto bytes = decode_base64(data);
    if (!bytes) return invalid(what + " is not valid base64");
    return *bytes;
  }

  // The `name`d entry of the list under `list_key` ("clusters"), returning its `body_key` map
  // ("cluster"). Also collects every name for messages.
  Result<std::optional<YAML::Node>> find_entry(const YAML::Node& root, const char* list_key,
                                               const char* body_key, const std::string& name,
                                               std::vector<std::string>& names) const {
    const YAML::Node list = root[list_key];
    if (!list || list.IsNull()) return std::optional<YAML::Node>();
    if (!list.IsSequence())
      return invalid(std::string("\"") + list_key + "\" must be a list", &list);
    std::optional<YAML::Node> found;
    for (const auto& item : list) {
      if (!item.IsMap()) {
        return invalid(std::string("every entry of \"") + list_key + "\" must be a map", &item);
      }
      auto entry_name = string_field(item, "name", std::string("an entry of \"") + list_key + "\"");
      if (!entry_name.ok()) return entry_name.error();
      if (entry_name->empty()) {
        return invalid(std::string("an entry of \"") + list_key + "\" has no name", &item);
      }
      for (const auto& seen : names) {
        if (seen == *entry_name) {
          return invalid(std::string("\"") + list_key + "\" has two entries named " + quoted(seen),
                         &item);
        }
      }
      names.push_back(*entry_name);
      if (*entry_name != name) continue;
      const YAML::Node body = item[body_key];
      if (body && !body.IsNull() && !body.IsMap()) {
        return invalid(std::string("\"") + body_key + "\" of " + quoted(name) + " must be a map",
                       &body);
      }
      found = body && body.IsMap() ? body : YAML::Node(YAML::NodeType::Map);
    }
    return found;
  }

 private:
  static std::string where(const YAML::Node* at) {
    if (at == nullptr) return "";
    const YAML::Mark mark = at->Mark();
    if (mark.is_null() || mark.line < 0) return "";
    return ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }

  std::string source_;
  std::string base_dir_;
};

bool looks_like_pem(const std::string& text, std::string_view label_suffix) {
  std::size_t pos = text.find("-----BEGIN ");
  while (pos != std::string::npos) {
    const auto end = text.find("-----", pos + 11);
    if (end == std::string::npos) return false;
    const std::string_view label(text.data() + pos + 11, end - pos - 11);
    if (label.size() >= label_suffix.size() &&
        label.substr(label.size() - label_suffix.size()) == label_suffix) {
      return true;
    }
    pos = text.find("-----BEGIN ", end);
  }
  return false;
}

// What one of a (file, data) pair such as certificate-authority / certificate-authority-data
// gave: the bytes, `what` ("certificate-authority /x/ca.crt" or "certificate-authority-data")
// and `source` (`what` with the owner and the kubeconfig, for messages of the client).
struct Material {
  std::string bytes;
  std::string what;
  std::string source;
};

// The data wins when both are given (kubectl's rule), with a warning.
Result<Material> file_or_data(const Loader& loader, const YAML::Node& body, const char* file_key,
                              const char* data_key, const std::string& owner,
                              std::vector<std::string>& warnings) {
  auto file = loader.string_field(body, file_key, owner);
  if (!file.ok()) return file.error();
  auto data = loader.string_field(body, data_key, owner);
  if (!data.ok()) return data.error();
  Material out;
  if (!data->empty()) {
    if (!file->empty()) {
      warnings.push_back("kubeconfig " + loader.source() + ": " + owner + " gives both " +
                         file_key + " and " + data_key + "; using " + data_key);
    }
    auto bytes = loader.decode(*data, std::string(data_key) + " of " + owner);
    if (!bytes.ok()) return bytes.error();
    out.bytes = std::move(bytes).value();
    out.what = data_key;
  } else if (!file->empty()) {
    auto path = loader.resolve_path(*file, std::string(file_key) + " of " + owner);
    if (!path.ok()) return path.error();
    auto text = loader.read_named_file(*path, std::string(file_key) + " of " + owner);
    if (!text.ok()) return text.error();
    out.bytes = std::move(text).value();
    out.what = std::string(file_key) + " " + *path;
  } else {
    return out;
  }
  out.source = out.what + " of " + owner + " in kubeconfig " + loader.source();
  return out;
}

Result<void> resolve_cluster(const Loader& loader, const YAML::Node& body, KubeTarget& t) {
  const std::string owner = "cluster " + quoted(t.cluster);
  for (const char* key : {"proxy-url"}) {
    if (body[key] && !body[key].IsNull()) {
      const YAML::Node node = body[key];
      return loader.unsupported(owner + " sets " + key + ", which is not supported yet", &node);
    }
  }
  auto server = loader.string_field(body, "server", owner);
  if (!server.ok()) return server.error();
  if (server->empty()) return loader.invalid(owner + " has no \"server\"");
  auto url = parse_kube_server_url(*server);
  if (!url.ok()) {
    const YAML::Node node = body["server"];
    return loader.invalid(owner + ": " + url.error().message, &node);
  }
  t.server = url->normalised;
  t.host = url->host;
  t.port = url->port;
  t.path_prefix = url->prefix;

  auto server_name = loader.string_field(body, "tls-server-name", owner);
  if (!server_name.ok()) return server_name.error();
  t.tls_server_name = *server_name;

  auto insecure = loader.bool_field(body, "insecure-skip-tls-verify", owner);
  if (!insecure.ok()) return insecure.error();
  t.insecure_skip_tls_verify = *insecure;

  auto ca = file_or_data(loader, body, "certificate-authority", "certificate-authority-data", owner,
                         t.warnings);
  if (!ca.ok()) return ca.error();
  t.ca_pem = std::move(ca->bytes);
  t.ca_source = std::move(ca->source);
  if (!t.ca_pem.empty() && !looks_like_pem(t.ca_pem, "CERTIFICATE")) {
    return loader.invalid(owner + ": " + ca->what +
                          " is not a PEM certificate (no \"-----BEGIN CERTIFICATE-----\" line)");
  }
  if (t.insecure_skip_tls_verify) {
    if (!t.ca_pem.empty()) {
      // kubectl refuses this combination too: which one did the author mean?
      return loader.invalid(owner +
                            " sets insecure-skip-tls-verify together with a certificate "
                            "authority; remove one of them");
    }
    t.warnings.push_back("kubeconfig " + loader.source() + ": " + owner +
                         " sets insecure-skip-tls-verify: the certificate of " + t.server +
                         " is NOT verified, so anyone on the network path can impersonate the "
                         "API server and read the credentials sent to it");
  }
  return Ok{};
}

// The `exec` map of a user, checked as client-go checks it.
Result<KubeExecPlugin> resolve_exec(const Loader& loader, const YAML::Node& node,
                                    const std::string& owner) {
  if (!node.IsMap()) return loader.invalid(owner + ": \"exec\" must be a map", &node);
  KubeExecPlugin p;
  auto command = loader.string_field(node, "command", owner + " exec");
  if (!command.ok()) return command.error();
  if (command->empty()) return loader.invalid(owner + ": exec has no \"command\"", &node);
  p.command = *command;
  if (p.command.find('/') != std::string::npos) {
    // kubectl: a relative command with a path separator is relative to the kubeconfig.
    auto path = loader.resolve_path(p.command, "exec command of " + owner);
    if (!path.ok()) return path.error();
    p.command = *path;
  }
  p.source =
      "exec plugin " + quoted(*command) + " of " + owner + " in kubeconfig " + loader.source();
  auto version = loader.string_field(node, "apiVersion", owner + " exec");
  if (!version.ok()) return version.error();
  p.api_version = *version;
  if (p.api_version != "client.authentication.k8s.io/v1" &&
      p.api_version != "client.authentication.k8s.io/v1beta1") {
    return loader.invalid(owner + ": exec apiVersion " + quoted(p.api_version) +
                              " is not supported (client.authentication.k8s.io/v1 or v1beta1)",
                          &node);
  }
  if (const YAML::Node args = node["args"]; args && !args.IsNull()) {
    if (!args.IsSequence()) return loader.invalid(owner + ": exec \"args\" must be a list", &args);
    for (const auto& a : args) {
      if (!a.IsScalar()) return loader.invalid(owner + ": exec args must be strings", &a);
      p.args.push_back(a.Scalar());
    }
  }
  if (const YAML::Node env = node["env"]; env && !env.IsNull()) {
    if (!env.IsSequence()) {
      return loader.invalid(owner + ": exec \"env\" must be a list of {name, value}", &env);
    }
    for (const auto& e : env) {
      if (!e.IsMap()) return loader.invalid(owner + ": exec env entries must be maps", &e);
      auto name = loader.string_field(e, "name", owner + " exec env");
      if (!name.ok()) return name.error();
      auto value = loader.string_field(e, "value", owner + " exec env");
      if (!value.ok()) return value.error();
      if (name->empty() || name->find('=') != std::string::npos) {
        return loader.invalid(owner + ": exec env name " + quoted(*name) + " is not valid", &e);
      }
      p.env.emplace_back(*name, *value);
    }
  }
  auto mode = loader.string_field(node, "interactiveMode", owner + " exec");
  if (!mode.ok()) return mode.error();
  if (mode->empty()) {
    if (p.api_version == "client.authentication.k8s.io/v1") {
      return loader.invalid(owner + ": exec needs \"interactiveMode\" with apiVersion " +
                                p.api_version + " (Never or IfAvailable)",
                            &node);
    }
    *mode = "IfAvailable";  // client-go's default for v1beta1
  }
  if (*mode == "Always") {
    return loader.unsupported(owner +
                                  ": exec interactiveMode Always needs a terminal, which the "
                                  "orchestrator never has; use a plugin or mode that works "
                                  "without one (Never or IfAvailable)",
                              &node);
  }
  if (*mode != "Never" && *mode != "IfAvailable") {
    return loader.invalid(
        owner + ": exec interactiveMode " + quoted(*mode) + " is not Never, IfAvailable or Always",
        &node);
  }
  p.interactive_mode = *mode;
  auto provide = loader.bool_field(node, "provideClusterInfo", owner + " exec");
  if (!provide.ok()) return provide.error();
  p.provide_cluster_info = *provide;
  auto hint = loader.string_field(node, "installHint", owner + " exec");
  if (!hint.ok()) return hint.error();
  p.install_hint = *hint;
  return p;
}

Result<void> resolve_user(const Loader& loader, const YAML::Node& body, KubeTarget& t) {
  const std::string owner = "user " + quoted(t.user);
  if (body["auth-provider"] && !body["auth-provider"].IsNull()) {
    const YAML::Node node = body["auth-provider"];
    return loader.unsupported(
        owner + ": auth-provider plugins are not supported; use a token or a client certificate",
        &node);
  }
  for (const char* key : {"username", "password"}) {
    if (body[key] && !body[key].IsNull()) {
      const YAML::Node node = body[key];
      return loader.unsupported(owner +
                                    ": username/password (basic) authentication is not "
                                    "supported; use a token or a client certificate",
                                &node);
    }
  }
  for (const char* key : {"as", "as-groups", "as-uid", "as-user-extra"}) {
    if (body[key] && !body[key].IsNull()) {
      const YAML::Node node = body[key];
      return loader.unsupported(owner + " sets " + key + " (impersonation), which is not supported",
                                &node);
    }
  }

  auto token = loader.string_field(body, "token", owner);
  if (!token.ok()) return token.error();
  auto token_file = loader.string_field(body, "tokenFile", owner);
  if (!token_file.ok()) return token_file.error();
  if (!token->empty()) {
    t.token = trim(*token);  // "token" wins over "tokenFile", as in kubectl
  } else if (!token_file->empty()) {
    auto path = loader.resolve_path(*token_file, "tokenFile of " + owner);
    if (!path.ok()) return path.error();
    auto text = loader.read_named_file(*path, "tokenFile of " + owner);
    if (!text.ok()) return text.error();
    t.token = trim(*text);
    if (t.token.empty())
      return loader.invalid("tokenFile of " + owner + ": " + *path + " is empty");
    t.token_file = *path;
  }
  if (const YAML::Node exec = body["exec"]; exec && !exec.IsNull()) {
    if (!t.token.empty()) {
      return loader.invalid(owner + " gives both a token and an exec plugin; keep one of them",
                            &exec);
    }
    auto plugin = resolve_exec(loader, exec, owner);
    if (!plugin.ok()) return plugin.error();
    t.exec = std::move(*plugin);
  }

  auto cert = file_or_data(loader, body, "client-certificate", "client-certificate-data", owner,
                           t.warnings);
  if (!cert.ok()) return cert.error();
  auto key = file_or_data(loader, body, "client-key", "client-key-data", owner, t.warnings);
  if (!key.ok()) return key.error();
  if (cert->bytes.empty() != key->bytes.empty()) {
    return loader.invalid(
        owner + " gives a client " +
        (cert->bytes.empty() ? "key but no certificate" : "certificate but no key") +
        "; give both (client-certificate and client-key, or their -data forms)");
  }
  if (!cert->bytes.empty()) {
    if (!looks_like_pem(cert->bytes, "CERTIFICATE")) {
      return loader.invalid(owner + ": " + cert->what + " is not a PEM certificate");
    }
    if (!looks_like_pem(key->bytes, "PRIVATE KEY")) {
      return loader.invalid(owner + ": " + key->what + " is not a PEM private key");
    }
    t.client_cert_pem = std::move(cert->bytes);
    t.client_key_pem = std::move(key->bytes);
    t.client_cert_source = "of " + owner + " in kubeconfig " + loader.source() + " (" + cert->what +
                           ", " + key->what + ")";
  }
  return Ok{};
}

}  // namespace

Result<KubeServerUrl> parse_kube_server_url(const std::string& server) {
  const auto bad = [&](const std::string& why) {
    return make_error(ErrorKind::invalid, "server " + quoted(server) + " " + why +
                                              " (expected https://HOST[:PORT][/PATH])");
  };
  const std::string scheme = "https://";
  if (server.rfind("http://", 0) == 0) return bad("uses plain http, which is not supported");
  if (server.rfind(scheme, 0) != 0) return bad("does not start with https://");
  std::string rest = server.substr(scheme.size());
  KubeServerUrl url;
  const auto slash = rest.find('/');
  if (slash != std::string::npos) {
    url.prefix = rest.substr(slash);
    rest.resize(slash);
    while (!url.prefix.empty() && url.prefix.back() == '/') url.prefix.pop_back();
    if (url.prefix.find_first_of("?# ") != std::string::npos) {
      return bad("has a query, fragment or space in its path");
    }
  }
  if (rest.find('@') != std::string::npos) return bad("has user information before the host");
  std::string port = "443";
  bool ipv6 = false;
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string::npos) return bad("has an unclosed '['");
    url.host = rest.substr(1, close - 1);
    ipv6 = true;
    const std::string tail = rest.substr(close + 1);
    if (!tail.empty()) {
      if (tail.front() != ':') return bad("has unexpected text after ']'");
      port = tail.substr(1);
    }
  } else {
    const auto colon = rest.find(':');
    url.host = rest.substr(0, colon);
    if (colon != std::string::npos) port = rest.substr(colon + 1);
  }
  if (url.host.empty()) return bad("has no host");
  if (port.empty() || port.size() > 5) return bad("has a bad port");
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return bad("has a bad port");
  }
  const int port_number = std::stoi(port);
  if (port_number < 1 || port_number > 65535) return bad("has a port out of range");
  url.port = std::to_string(port_number);
  url.normalised = scheme + (ipv6 ? "[" + url.host + "]" : url.host) + ":" + url.port + url.prefix;
  return url;
}

Result<KubeTarget> parse_kube_target(const std::string& text, const std::string& source,
                                     const std::string& base_dir, const std::string& context,
                                     const std::string& namespace_override) {
  const Loader loader(source, base_dir);
  try {
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      return make_error(ErrorKind::invalid,
                        "kubeconfig " + source + ":" + std::to_string(e.mark.line + 1) + ":" +
                            std::to_string(e.mark.column + 1) + ": not valid YAML: " + e.msg);
    }
    if (!root.IsMap()) return loader.invalid("expected a map (apiVersion: v1, kind: Config)");

    KubeTarget t;
    t.kubeconfig = source;
    auto current = loader.string_field(root, "current-context", "the file");
    if (!current.ok()) return current.error();
    t.context = context.empty() ? *current : context;

    std::vector<std::string> context_names;
    auto ctx = loader.find_entry(root, "contexts", "context", t.context, context_names);
    if (!ctx.ok()) return ctx.error();
    const std::string existing =
        context_names.empty() ? "it defines no contexts" : "its contexts: " + join(context_names);
    if (t.context.empty()) {
      return loader.invalid("no context given and no current-context set; " + existing);
    }
    if (!ctx->has_value()) {
      return loader.invalid("no context named " + quoted(t.context) +
                            (context.empty() ? " (its current-context)" : "") + "; " + existing);
    }
    const YAML::Node& ctx_body = **ctx;
    const std::string ctx_owner = "context " + quoted(t.context);
    auto cluster_name = loader.string_field(ctx_body, "cluster", ctx_owner);
    if (!cluster_name.ok()) return cluster_name.error();
    auto user_name = loader.string_field(ctx_body, "user", ctx_owner);
    if (!user_name.ok()) return user_name.error();
    auto ns = loader.string_field(ctx_body, "namespace", ctx_owner);
    if (!ns.ok()) return ns.error();
    if (cluster_name->empty()) return loader.invalid(ctx_owner + " names no cluster");
    t.cluster = *cluster_name;
    t.user = *user_name;

    std::vector<std::string> cluster_names;
    auto cluster = loader.find_entry(root, "clusters", "cluster", t.cluster, cluster_names);
    if (!cluster.ok()) return cluster.error();
    if (!cluster->has_value()) {
      return loader.invalid(
          ctx_owner + " names cluster " + quoted(t.cluster) + ", which is not defined" +
          (cluster_names.empty() ? "" : " (clusters: " + join(cluster_names) + ")"));
    }
    auto cluster_ok = resolve_cluster(loader, **cluster, t);
    if (!cluster_ok.ok()) return cluster_ok.error();

    if (!t.user.empty()) {
      std::vector<std::string> user_names;
      auto user = loader.find_entry(root, "users", "user", t.user, user_names);
      if (!user.ok()) return user.error();
      if (!user->has_value()) {
        return loader.invalid(ctx_owner + " names user " + quoted(t.user) +
                              ", which is not defined" +
                              (user_names.empty() ? "" : " (users: " + join(user_names) + ")"));
      }
      auto user_ok = resolve_user(loader, **user, t);
      if (!user_ok.ok()) return user_ok.error();
    }

    t.namespace_ = !namespace_override.empty() ? namespace_override
                   : !ns->empty()              ? *ns
                                               : "default";
    if (!is_dns_label(t.namespace_)) {
      return loader.invalid("namespace " + quoted(t.namespace_) +
                            (namespace_override.empty() ? " of " + ctx_owner : " (given)") +
                            " is not a valid namespace name (lower-case letters, digits and '-', "
                            "at most 63)");
    }
    return t;
  } catch (const std::exception& e) {
    return loader.invalid(std::string("cannot read it: ") + e.what());
  }
}

Result<KubeTarget> load_kube_target(const std::string& path, const std::string& context,
                                    const std::string& namespace_override) {
  if (path.empty()) return make_error(ErrorKind::invalid, "no kubeconfig path given");
  auto expanded = expand_home(path);
  if (!expanded) {
    return make_error(ErrorKind::invalid,
                      "kubeconfig " + path + ": cannot expand \"~\": $HOME is not set");
  }
  auto text = read_small_file(*expanded);
  if (!text.ok()) {
    return make_error(ErrorKind::invalid,
                      "kubeconfig " + *expanded + ": cannot read it: " + text.error().message);
  }
  return parse_kube_target(*text, *expanded, directory_of(*expanded), context, namespace_override);
}

}  // namespace orch
