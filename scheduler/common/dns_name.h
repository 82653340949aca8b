#pragma once
// DNS-1123 names, as Kubernetes requires them of namespaces, object names and volume names.

#include <string_view>

namespace orch {

// A label: 1 to 63 of a-z, 0-9 and '-', starting and ending with a letter or digit.
bool is_dns_label(std::string_view s);
// A subdomain: labels joined by '.', at most 253 characters (node and most object names).
bool is_dns_subdomain(std::string_view s);

}  // namespace orch
