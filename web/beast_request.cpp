#include "web/beast_request.h"

#include <cctype>
#include <string>

namespace orch {

HttpRequest to_plain(const BeastRequest& request) {
  HttpRequest out;
  out.method = std::string(request.method_string());
  parse_target(std::string(request.target()), out.path, out.query);
  for (const auto& field : request) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto [it, inserted] = out.headers.emplace(name, std::string(field.value()));
    if (!inserted) it->second += ", " + std::string(field.value());
  }
  out.body = request.body();
  return out;
}

}  // namespace orch
