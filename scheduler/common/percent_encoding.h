#pragma once
// Percent-encoding for URLs (RFC 3986), shared by everything that builds or reads one: the REST
// server and CLI, the Kubernetes client's label selectors, the fake API server of the tests.

#include <string>

namespace orch {

// Percent-decoding ('+' becomes a space only when plus_is_space). Malformed escapes are kept
// as they are rather than rejected: the caller then reports the odd value by name.
std::string percent_decode(const std::string& text, bool plus_is_space);
// Percent-encoding of everything except unreserved characters, for query values and names.
std::string percent_encode(const std::string& text);

}  // namespace orch
