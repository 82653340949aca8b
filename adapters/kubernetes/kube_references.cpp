// The kubelet's $(NAME) expansion and its escape (kube_manifest.h).
#include <map>
#include <string>
#include <string_view>

#include "adapters/kubernetes/kube_manifest.h"

namespace orch::kube {

std::string escape_kube_references(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    out += c;
    if (c == '$') out += '$';
  }
  return out;
}

std::string expand_kube_references(std::string_view s,
                                   const std::map<std::string, std::string>& vars) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '$' || i + 1 == s.size()) {
      out += s[i++];
      continue;
    }
    char next = s[i + 1];
    if (next == '$') {
      out += '$';
      i += 2;
    } else if (next == '(') {
      std::size_t close = s.find(')', i + 2);
      if (close == std::string_view::npos) {
        out += "$(";
        i += 2;
      } else {
        std::string name(s.substr(i + 2, close - i - 2));
        auto it = vars.find(name);
        out += it != vars.end() ? it->second : "$(" + name + ")";
        i = close + 1;
      }
    } else {
      out += '$';
      out += next;
      i += 2;
    }
  }
  return out;
}

}  // namespace orch::kube
