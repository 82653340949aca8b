#pragma once
// The REST face of the server's workdir archives (web/code_api.h) over adapters/code's
// CodeStore (<state>/code/<sha256>.tar, issue 40).

#include <string>

#include "adapters/code/code_store.h"
#include "web/code_api.h"

namespace orch {

class CodeArchives final : public CodeApi {
 public:
  explicit CodeArchives(CodeStore& store) : store_(store) {}
  Result<nlohmann::json> find_code(const std::string& sha256, const std::string& user) override;
  Result<nlohmann::json> put_code(const std::string& sha256, const std::string& archive,
                                  const std::string& user) override;

 private:
  CodeStore& store_;
};

}  // namespace orch
