// Bytes from a client as the server reads them: Beast's request parser with the server's limits,
// then the plain request (parse_target, lower-case headers) and the API router over the web
// tests' FakeBackend. Malformed HTTP is a parse error (the server answers 400); whatever parses
// must get an answer with a valid status, and never a 500: with a backend that does not fail, a
// 500 means a route threw (Router turns exceptions into 500s, which would hide them here).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http.hpp>

#include "tests/unit/web/fake_backend.h"
#include "web/api_routes.h"
#include "web/http/beast_request.h"
#include "web/http/http_types.h"

namespace {

namespace http = boost::beast::http;

// What the server's limits are (web/http/http_server.cpp): 16 KiB of headers, 1 MiB of body.
constexpr std::size_t kHeaderLimit = std::size_t{16} * 1024;
constexpr std::size_t kBodyLimit = std::size_t{1} << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  http::request_parser<http::string_body> parser;
  parser.header_limit(kHeaderLimit);
  parser.body_limit(kBodyLimit);
  parser.eager(true);
  boost::beast::error_code ec;
  std::size_t used = 0;
  while (used < size && !parser.is_done()) {
    const std::size_t n = parser.put(boost::asio::buffer(data + used, size - used), ec);
    if (ec == http::error::need_more) break;
    if (ec || n == 0) return 0;
    used += n;
  }
  if (!parser.is_done()) {
    // The connection ends here. As http::read does: nothing read yet is end_of_stream (the
    // server closes), else put_eof, which ends a body that runs to the connection's end.
    if (!parser.got_some()) return 0;
    parser.put_eof(ec);
    if (ec || !parser.is_done()) return 0;
  }

  // The server answers a request framed two ways (or without its Host) itself, and closes.
  if (orch::framing_refusal(parser.get())) return 0;
  orch::testing::FakeBackend backend;
  const orch::Router router = orch::make_api_router(backend);
  const orch::HttpResponse response = router.dispatch(orch::to_plain(parser.get()));
  if (response.status < 100 || response.status > 599 || response.status == 500) {
    std::fprintf(stderr, "request answered %d: %s\n", response.status, response.body.c_str());
    std::abort();
  }
  return 0;
}
