#include "adapters/slurm/agent_binary.h"

#include <openssl/evp.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "scheduler/common/text.h"

namespace orch::slurm {
namespace {

namespace fs = std::filesystem;

std::int64_t mtime_of(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

}  // namespace

std::string default_agent_path() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return (ec ? fs::path(".") : self.parent_path()).string() + "/orchestrate-agent";
}

std::string short_sha256(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr);
  return to_hex(md, std::min<unsigned int>(n, 8));  // 16 hex digits name the copy
}

Result<AgentBinary> read_agent_binary(const std::string& path) {
  struct stat st {};
  const bool exists = stat(path.c_str(), &st) == 0;
  if (!exists || !S_ISREG(st.st_mode)) {
    std::string why = exists ? "not a regular file" : std::strerror(errno);
    return make_error(ErrorKind::misconfigured,
                      "the agent '" + path + "' cannot be shipped to the " + "cluster (" + why +
                          "); build orchestrate-agent and point agent_path "
                          "at it");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return make_error(ErrorKind::io, "cannot read the agent '" + path + "'");
  }
  AgentBinary agent;
  agent.path = path;
  agent.content = bytes.str();
  if (agent.content.empty()) {
    return make_error(ErrorKind::misconfigured, "the agent '" + path + "' is empty");
  }
  agent.id = short_sha256(agent.content);
  agent.mtime_ns = mtime_of(st);
  return agent;
}

bool agent_unchanged(const AgentBinary& agent) {
  struct stat st {};
  return stat(agent.path.c_str(), &st) == 0 &&
         static_cast<std::size_t>(st.st_size) == agent.content.size() &&
         mtime_of(st) == agent.mtime_ns;
}

}  // namespace orch::slurm
