#include "web/http/beast_request.h"

#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

#include "scheduler/common/text.h"

namespace orch {
namespace {

namespace http = boost::beast::http;

std::string trimmed_lower(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  std::string out(s.substr(b, s.find_last_not_of(" \t") - b + 1));
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t count_of(const BeastRequest& header, http::field field) {
  const auto [first, last] = header.equal_range(field);
  std::size_t n = 0;
  for (auto it = first; it != last; ++it) ++n;
  return n;
}

FramingRefusal not_implemented(const std::string& why) {
  return {501, why +
                   "; this server reads a body framed by Content-Length or by "
                   "\"Transfer-Encoding: chunked\" alone, and closes the connection"};
}

}  // namespace

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

std::optional<FramingRefusal> framing_refusal(const BeastRequest& header) {
  const std::size_t encodings = count_of(header, http::field::transfer_encoding);
  if (encodings > 1) {
    return not_implemented("the request has " + std::to_string(encodings) +
                           " Transfer-Encoding headers");
  }
  if (encodings == 1) {
    const auto value = header[http::field::transfer_encoding];
    const std::string_view given(value.data(), value.size());
    if (trimmed_lower(given) != "chunked") {
      return not_implemented("Transfer-Encoding \"" + quote_line(given.substr(0, 80)) +
                             "\" is not supported");
    }
    if (count_of(header, http::field::content_length) > 0) {
      return not_implemented("the request has both Transfer-Encoding and Content-Length");
    }
    if (header.version() < 11) {
      return not_implemented("Transfer-Encoding needs HTTP/1.1");
    }
  }
  if (header.version() >= 11 && count_of(header, http::field::host) != 1) {
    return FramingRefusal{400, "an HTTP/1.1 request needs exactly one Host header"};
  }
  return std::nullopt;
}

}  // namespace orch
