#pragma once
// What a failed X.509 verification means to a person, shared by the TLS clients (the CLI's
// http_client and the Kubernetes client): OpenSSL's words for the error and which kind of
// problem it is, so that each client adds its own advice. No OpenSSL header here.

#include <string>

namespace orch {

enum class VerifyProblem {
  none,              // X509_V_OK
  untrusted_issuer,  // not signed by a CA the client trusts (self-signed, unknown issuer, ...)
  wrong_name,        // valid, but not issued for the host or address the client asked for
  out_of_date,       // expired or not yet valid
  other,
};

// code: X509_V_OK or an X509_V_ERR_* value (SSL_get_verify_result, X509_STORE_CTX_get_error).
VerifyProblem verify_problem(long code);
// "certificate verify failed: unable to get local issuer certificate".
std::string verify_failed_text(long code);

}  // namespace orch
