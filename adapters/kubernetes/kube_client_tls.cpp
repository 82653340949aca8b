// orch_kube_client: TLS setup (CA, client certificate), DNS, connecting, the handshake and
// the server certificate's verification, with the words for what went wrong.
#include "adapters/kubernetes/kube_client_internal.h"

namespace orch {
namespace kube_client_internal {

// The oldest queued OpenSSL error as text (the queue is cleared), or `fallback`.
std::string openssl_error(const std::string& fallback) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return fallback;
  std::string text(256, '\0');
  ERR_error_string_n(code, text.data(), text.size());
  text.resize(text.find('\0'));
  return text;
}

bool is_ip_literal(const std::string& host) {
  beast::error_code ec;
  (void)asio::ip::make_address(host, ec);
  return !ec;
}

// "DNS:localhost, IP:127.0.0.1", or the subject when the certificate has no subjectAltName.
std::string certificate_names(X509* cert) {
  std::string out;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
      const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
      std::string item;
      if (name->type == GEN_DNS) {
        const unsigned char* data = ASN1_STRING_get0_data(name->d.dNSName);
        item = "DNS:" + std::string(reinterpret_cast<const char*>(data),
                                    static_cast<std::size_t>(ASN1_STRING_length(name->d.dNSName)));
      } else if (name->type == GEN_IPADD) {
        const int length = ASN1_STRING_length(name->d.iPAddress);
        const unsigned char* data = ASN1_STRING_get0_data(name->d.iPAddress);
        char text[INET6_ADDRSTRLEN] = {};
        if ((length == 4 && inet_ntop(AF_INET, data, text, sizeof text) != nullptr) ||
            (length == 16 && inet_ntop(AF_INET6, data, text, sizeof text) != nullptr)) {
          item = std::string("IP:") + text;
        }
      }
      if (item.empty()) continue;
      if (!out.empty()) out += ", ";
      out += item;
    }
    GENERAL_NAMES_free(names);
  }
  if (out.empty()) {
    char subject[512] = {};
    X509_NAME_oneline(X509_get_subject_name(cert), subject, sizeof subject);
    out = std::string("no subjectAltName; subject ") + subject;
  }
  return out;
}

std::string issuer_of(X509* cert) {
  char issuer[512] = {};
  X509_NAME_oneline(X509_get_issuer_name(cert), issuer, sizeof issuer);
  return issuer;
}

namespace {

// OpenSSL 3 reports a TCP close without TLS close_notify as an SSL error of its own, which
// Asio 1.74 passes on as is (later versions map it to stream_truncated).
bool is_unexpected_eof(const beast::error_code& ec) {
#ifdef SSL_R_UNEXPECTED_EOF_WHILE_READING
  return ec.category() == asio::error::get_ssl_category() &&
         ERR_GET_REASON(static_cast<unsigned long>(ec.value())) ==
             SSL_R_UNEXPECTED_EOF_WHILE_READING;
#else
  (void)ec;
  return false;
#endif
}

}  // namespace

bool is_closed_by_peer(const beast::error_code& ec) {
  return ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::connection_aborted || ec == asio::error::broken_pipe ||
         ec == ssl::error::stream_truncated || ec == http::error::end_of_stream ||
         is_unexpected_eof(ec);
}

std::string describe_ec(const beast::error_code& ec) {
  if (ec == asio::error::connection_refused) return "connection refused";
  if (ec == asio::error::connection_reset) return "the server reset the connection";
  if (ec == ssl::error::stream_truncated || ec == http::error::end_of_stream ||
      ec == asio::error::eof || is_unexpected_eof(ec)) {
    return "the server closed the connection";
  }
  return ec.message();
}

// A TLS alert from the server (after the handshake, with TLS 1.3 a refused client certificate
// shows up as one on the first read) gets a hint.
std::string tls_alert_hint(const beast::error_code& ec, bool have_client_cert) {
  if (ec.category() != asio::error::get_ssl_category()) return "";
  const std::string text = ec.message();
  if (text.find("certificate required") != std::string::npos) {
    return " (the server requires a client certificate" +
           std::string(have_client_cert ? ", and did not accept ours)" : "; the user has none)");
  }
  if (text.find("bad certificate") != std::string::npos ||
      text.find("unknown ca") != std::string::npos ||
      text.find("certificate unknown") != std::string::npos ||
      text.find("unsupported certificate") != std::string::npos) {
    return " (the server refused our client certificate)";
  }
  if (text.find("wrong version number") != std::string::npos ||
      text.find("packet length too long") != std::string::npos) {
    return " (does the server speak TLS on this port? it may be plain HTTP)";
  }
  return "";
}

// A DNS lookup that cannot block the caller past `deadline`: getaddrinfo runs on a detached
// thread that finishes on its own if we stop waiting.
Result<std::vector<tcp::endpoint>> resolve(const std::string& host, const std::string& port,
                                           Clock::time_point deadline) {
  if (is_ip_literal(host)) {
    return std::vector<tcp::endpoint>{
        tcp::endpoint(asio::ip::make_address(host), static_cast<unsigned short>(std::stoi(port)))};
  }
  struct Pending {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    std::vector<tcp::endpoint> endpoints;
    std::string error;
  };
  auto pending = std::make_shared<Pending>();
  std::thread([pending, host, port] {
    std::vector<tcp::endpoint> endpoints;
    std::string error;
    try {
      asio::io_context ioc;
      tcp::resolver resolver(ioc);
      beast::error_code ec;
      const auto results = resolver.resolve(host, port, ec);
      if (ec) {
        error = ec.message();
      } else {
        for (const auto& entry : results) endpoints.push_back(entry.endpoint());
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    const std::lock_guard lock(pending->mutex);
    pending->endpoints = std::move(endpoints);
    pending->error = std::move(error);
    pending->done = true;
    pending->done_cv.notify_all();
  }).detach();
  std::unique_lock lock(pending->mutex);
  if (!pending->done_cv.wait_until(lock, deadline, [&] { return pending->done; })) {
    return make_error(ErrorKind::unreachable, "no answer from DNS in time");
  }
  if (!pending->error.empty()) return make_error(ErrorKind::unreachable, pending->error);
  if (pending->endpoints.empty()) return make_error(ErrorKind::unreachable, "no addresses");
  return pending->endpoints;
}

}  // namespace kube_client_internal

using namespace kube_client_internal;

KubeClient::Impl::Impl(KubeTarget t, std::string s) : target(std::move(t)), site(std::move(s)) {
  verify_name = target.tls_server_name.empty() ? target.host : target.tls_server_name;
  token = target.token;
  token_read = Clock::now();
  if (target.exec) {
    exec_source = std::make_unique<ExecCredentialSource>(
        *target.exec, exec_info_json(*target.exec, target), site, [] {
          return std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
              .count();
        });
  }
  try {
    build_context();
  } catch (const std::exception& e) {
    config_error = invalid(std::string("cannot set up TLS: ") + e.what());
  }
}

void KubeClient::Impl::build_context() {
  ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
  SSL_CTX* native = ctx->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  ERR_clear_error();
  if (target.insecure_skip_tls_verify) {
    ctx->set_verify_mode(ssl::verify_none);
  } else {
    ctx->set_verify_mode(ssl::verify_peer);
    if (target.ca_pem.empty()) {
      beast::error_code ec;
      ctx->set_default_verify_paths(ec);
      if (ec) {
        config_error = invalid("cannot load the system's trusted CAs: " + ec.message());
        return;
      }
    } else if (!load_ca()) {
      return;
    }
  }
  if (!target.client_cert_pem.empty()) load_client_certificate();
}

// Only the kubeconfig's CA: the store starts empty (set_default_verify_paths is not called).
bool KubeClient::Impl::load_ca() {
  X509_STORE* store = SSL_CTX_get_cert_store(ctx->native_handle());
  BIO* bio = BIO_new_mem_buf(target.ca_pem.data(), static_cast<int>(target.ca_pem.size()));
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    if (X509_STORE_add_cert(store, cert) == 1) ++added;
    X509_free(cert);
  }
  BIO_free(bio);
  const std::string why = openssl_error("no certificate found");
  if (added == 0) {
    config_error =
        invalid("cannot load the certificate authority from " + target.ca_source + ": " + why);
    return false;
  }
  return true;
}

// A client certificate (with any intermediates after it) and its key from PEM text, put on a
// context (the kubeconfig's identity, for every connection) or on one connection (an exec
// plugin's). The error is what is wrong, for the caller to say whose it was.
static Result<void> use_client_identity(const std::string& cert_pem, const std::string& key_pem,
                                        SSL_CTX* ctx, SSL* ssl) {
  const auto fail = [](const std::string& what) { return make_error(ErrorKind::invalid, what); };
  BIO* bio = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
  X509* leaf = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  if (leaf == nullptr) {
    BIO_free(bio);
    return fail("the certificate cannot be read: " + openssl_error("no certificate found"));
  }
  STACK_OF(X509)* chain = sk_X509_new_null();
  while (X509* extra = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    sk_X509_push(chain, extra);
  }
  ERR_clear_error();
  BIO_free(bio);
  const auto release = [&] {
    X509_free(leaf);
    sk_X509_pop_free(chain, X509_free);
  };
  bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (key == nullptr) {
    release();
    return fail("the private key cannot be read (an encrypted key is not supported): " +
                openssl_error("no key found"));
  }
  Result<void> out = Ok{};
  if (X509_check_private_key(leaf, key) != 1) {
    out = fail("the private key does not match the certificate: " + openssl_error("mismatch"));
  } else if ((ctx != nullptr ? SSL_CTX_use_cert_and_key(ctx, leaf, key, chain, 1)
                             : SSL_use_cert_and_key(ssl, leaf, key, chain, 1)) != 1) {
    out = fail(openssl_error("the certificate was refused"));
  }
  EVP_PKEY_free(key);
  release();
  return out;
}

void KubeClient::Impl::load_client_certificate() {
  auto used = use_client_identity(target.client_cert_pem, target.client_key_pem,
                                  ctx->native_handle(), nullptr);
  if (!used) {
    config_error = invalid("cannot use the client certificate " + target.client_cert_source + ": " +
                           used.error().message);
  }
}

// Connects and does the TLS handshake; `c` is fresh. `timeout` is for messages.
Result<void> KubeClient::Impl::open(Connection& c, Clock::time_point deadline,
                                    std::chrono::milliseconds timeout,
                                    const ExecCredential* plugin) {
  auto endpoints = resolve(target.host, target.port, deadline);
  if (!endpoints.ok()) {
    return unreachable("cannot resolve " + target.host + " (server " + target.server +
                       "): " + endpoints.error().message);
  }
  beast::error_code ec = c.run(deadline, [&](auto handler) {
    beast::get_lowest_layer(c.stream).async_connect(*endpoints, std::move(handler));
  });
  if (c.interrupted) return Ok{};  // the caller looks at the flag
  if (ec == beast::error::timeout) {
    return unreachable("cannot connect to " + target.server + ": no connection within " +
                       std::to_string(ms(timeout)) + " ms");
  }
  if (ec) return unreachable("cannot connect to " + target.server + ": " + describe_ec(ec));

  SSL* ssl_handle = c.stream.native_handle();
  if (plugin != nullptr && !plugin->client_cert_pem.empty()) {
    // The plugin's identity on this connection (the context keeps the kubeconfig's, if any).
    auto used =
        use_client_identity(plugin->client_cert_pem, plugin->client_key_pem, nullptr, ssl_handle);
    if (!used) {
      return unreachable("the client certificate from " + target.exec->source +
                         " cannot be used: " + used.error().message);
    }
  }
  if (!is_ip_literal(verify_name)) SSL_set_tlsext_host_name(ssl_handle, verify_name.c_str());
  if (!target.insecure_skip_tls_verify) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl_handle);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    const int named = is_ip_literal(verify_name)
                          ? X509_VERIFY_PARAM_set1_ip_asc(param, verify_name.c_str())
                          : X509_VERIFY_PARAM_set1_host(param, verify_name.c_str(), 0);
    if (named != 1) return invalid("cannot verify the server name '" + verify_name + "'");
    VerifyRecord* record = &c.verify;
    c.stream.set_verify_callback([record](bool preverified, ssl::verify_context& vc) {
      X509_STORE_CTX* store = vc.native_handle();
      if (record->leaf_names.empty()) {
        if (X509* leaf = X509_STORE_CTX_get0_cert(store)) {
          record->leaf_names = certificate_names(leaf);
          record->leaf_issuer = issuer_of(leaf);
        }
      }
      if (!preverified && record->error == X509_V_OK) {
        record->error = X509_STORE_CTX_get_error(store);
      }
      return preverified;
    });
  }
  ec = c.run(deadline, [&](auto handler) {
    c.stream.async_handshake(ssl::stream_base::client, std::move(handler));
  });
  ERR_clear_error();
  if (!ec) return Ok{};
  if (c.interrupted) return Ok{};
  const std::string head = "TLS handshake with " + target.server + " failed: ";
  if (c.verify.error != X509_V_OK) return unreachable(head + verify_failure(c.verify));
  if (ec == beast::error::timeout) {
    return unreachable(head + "no TLS answer within " + std::to_string(ms(timeout)) +
                       " ms (is it a TLS port?)");
  }
  return unreachable(head + describe_ec(ec) + tls_alert_hint(ec, !target.client_cert_pem.empty()));
}

std::string KubeClient::Impl::verify_failure(const VerifyRecord& v) const {
  std::string text = verify_failed_text(v.error);
  switch (verify_problem(v.error)) {
    case VerifyProblem::wrong_name:
      text += " (the server's certificate is not valid for '" + verify_name + "'; it names " +
              v.leaf_names + ")";
      if (target.tls_server_name.empty()) {
        text +=
            "; if the server is reached under another name, set tls-server-name for "
            "cluster \"" +
            target.cluster + "\" in kubeconfig " + target.kubeconfig;
      }
      break;
    case VerifyProblem::untrusted_issuer:
      text += " (the server's certificate, issued by " + v.leaf_issuer + ", is not signed by ";
      text += target.ca_pem.empty()
                  ? "a CA of the system trust store; cluster \"" + target.cluster +
                        "\" in kubeconfig " + target.kubeconfig + " gives no certificate-authority)"
                  : "the CA given by " + target.ca_source + ")";
      break;
    default:
      break;
  }
  return text;
}

}  // namespace orch
