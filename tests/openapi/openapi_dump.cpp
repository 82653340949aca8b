// openapi_dump FILE: writes the OpenAPI document exactly as the server serves it (GET
// /api/v1/openapi.json through the whole route table behind the guard, over the fake backend
// and an access store in memory) to FILE, for validate.mjs. Exit 1 when it cannot.
#include <fstream>
#include <iostream>

#include "scheduler/common/clock.h"
#include "tests/unit/web/fake_backend.h"
#include "web/access/access_store.h"
#include "web/access/guarded_api.h"

int main(int argc, char** argv) {
  using namespace orch;
  if (argc != 2) {
    std::cerr << "usage: openapi_dump FILE\n";
    return 2;
  }
  FakeClock clock;
  auto store = AccessStore::open(":memory:", clock);
  if (!store.ok()) {
    std::cerr << "openapi_dump: " << store.error().message << "\n";
    return 1;
  }
  testing::FakeBackend backend;
  GuardedApi api(backend, **store, GuardOptions{answered_hosts("127.0.0.1", {})});
  HttpRequest request = make_request("GET", "/api/v1/openapi.json", "", "");
  request.headers["host"] = "127.0.0.1";
  request.remote = "127.0.0.1";
  const HttpResponse response = api.handle(request);
  if (response.status != 200) {
    std::cerr << "openapi_dump: GET /api/v1/openapi.json answered " << response.status << ": "
              << response.body << "\n";
    return 1;
  }
  std::ofstream out(argv[1], std::ios::binary);
  out << response.body << "\n";
  if (!out.flush()) {
    std::cerr << "openapi_dump: cannot write " << argv[1] << "\n";
    return 1;
  }
  return 0;
}
