#include "web/http/tls_verify.h"

#include <openssl/x509_vfy.h>

namespace orch {

VerifyProblem verify_problem(long code) {
  switch (code) {
    case X509_V_OK:
      return VerifyProblem::none;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return VerifyProblem::untrusted_issuer;
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return VerifyProblem::wrong_name;
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return VerifyProblem::out_of_date;
    default:
      return VerifyProblem::other;
  }
}

std::string verify_failed_text(long code) {
  return std::string("certificate verify failed: ") + X509_verify_cert_error_string(code);
}

}  // namespace orch
