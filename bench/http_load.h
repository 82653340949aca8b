#pragma once
// A load generator for the REST benchmarks: `clients` threads, each with its own keep-alive
// HTTP/1.1 connection to a server on this machine (loopback only), sending requests as fast as
// the answers come back, until a time or a count runs out. Plain POSIX sockets, so what it
// measures is the server, not a client library.

#include <functional>
#include <string>
#include <vector>

namespace orch::bench {

struct LoadRequest {
  std::string method = "GET";
  std::string target;
  std::string body;
  std::string content_type = "application/json";
  std::string token;  // the API token this request sends; "" for set_bearer_token's
};

struct LoadResult {
  int requests = 0;                // answered with a 2xx
  int errors = 0;                  // any other status, a reset, a timeout
  std::string first_error;         // what the first error was, for the table's footnote
  double seconds = 0;              // wall time of the whole run
  std::vector<double> latency_ms;  // per answered request
  double per_second() const { return seconds > 0 ? requests / seconds : 0; }
};

// Runs until `seconds` pass or every client sent `max_per_client` requests. make(client, i)
// builds client's i-th request.
LoadResult run_load(int port, int clients, double seconds, int max_per_client,
                    const std::function<LoadRequest(int client, int i)>& make);

// The API token every request of this process sends from now on ("" for none).
void set_bearer_token(std::string token);

// One request on a new connection (set-up steps): the status (0 when no answer) and the body.
int http_once(int port, const LoadRequest& request, std::string* body = nullptr);

}  // namespace orch::bench
