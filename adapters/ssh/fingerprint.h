#pragma once
// A pinned host-key fingerprint as users may paste it (surrounding blanks, "SHA256:" forgotten,
// '=' padding from other tools), brought to the form ssh-keygen -lf prints. Shared by the SSH
// session and the transfers' OpenSSH client, which must agree on what a pin means.

#include <string>

namespace orch {

inline std::string normalise_fingerprint(std::string fp) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!fp.empty() && blank(fp.back())) fp.pop_back();
  std::size_t start = 0;
  while (start < fp.size() && blank(fp[start])) ++start;
  fp.erase(0, start);
  while (!fp.empty() && fp.back() == '=') fp.pop_back();
  if (fp.rfind("SHA256:", 0) != 0) fp = "SHA256:" + fp;
  return fp;
}

}  // namespace orch
