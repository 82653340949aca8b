// A kubeconfig's text through parse_kube_target (and so parse_kube_server_url): refusals are
// Results (invalid, unsupported), never a crash or an exception. Relative and "~/" file paths
// in it resolve under a folder that does not exist, so the machine's files are left alone
// (an absolute path is still read, as kubectl would).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "adapters/kubernetes/kube_config.h"

namespace {
constexpr const char* kNowhere = "/nonexistent-fuzz-dir";
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("HOME", kNowhere, 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)orch::parse_kube_target(text, "fuzz-kubeconfig", kNowhere, "", "");
  (void)orch::parse_kube_target(text, "fuzz-kubeconfig", kNowhere, "fuzz", "ns");
  (void)orch::parse_kube_server_url(text);
  return 0;
}
