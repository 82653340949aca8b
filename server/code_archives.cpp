#include "server/code_archives.h"

#include <iostream>

namespace orch {

Result<nlohmann::json> CodeArchives::find_code(const std::string& sha256, const std::string& user) {
  auto bytes = store_.find(sha256, user);
  if (!bytes) return bytes.error();
  return nlohmann::json{{"sha256", sha256}, {"bytes", *bytes}};
}

Result<nlohmann::json> CodeArchives::put_code(const std::string& sha256, const std::string& archive,
                                              const std::string& user) {
  auto bytes = store_.store(sha256, archive, user);
  if (!bytes) return bytes.error();
  // One line per upload: what the server keeps, and for whom.
  std::cerr << "orchestrate: workdir archive " << sha256 << " (" << *bytes << " bytes) uploaded by "
            << user << "\n";
  return nlohmann::json{{"sha256", sha256}, {"bytes", *bytes}};
}

}  // namespace orch
