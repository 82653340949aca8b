// What an exec credential plugin printed, through parse_exec_credential: a plugin is a program
// orchestrate does not control, so anything it prints is refused as a Result (invalid, naming
// the field), never a crash or an exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "adapters/kubernetes/exec_credential.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  orch::KubeExecPlugin plugin;
  plugin.source = "exec plugin \"fuzz\"";
  for (const char* version :
       {"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"}) {
    plugin.api_version = version;
    (void)orch::parse_exec_credential(text, plugin);
  }
  return 0;
}
