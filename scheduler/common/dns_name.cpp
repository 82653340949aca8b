#include "scheduler/common/dns_name.h"

namespace orch {
namespace {

constexpr std::size_t kMaxLabel = 63;
constexpr std::size_t kMaxSubdomain = 253;

bool lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

}  // namespace

bool is_dns_label(std::string_view s) {
  if (s.empty() || s.size() > kMaxLabel || !lower_alnum(s.front()) || !lower_alnum(s.back())) {
    return false;
  }
  for (char c : s) {
    if (!lower_alnum(c) && c != '-') return false;
  }
  return true;
}

bool is_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > kMaxSubdomain) return false;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = s.find('.', start);
    if (!is_dns_label(s.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace orch
