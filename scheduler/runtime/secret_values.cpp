#include "scheduler/runtime/secret_values.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace orch {
namespace {

Result<std::string> read_file_secret(const std::string& name, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return make_error(ErrorKind::invalid, "secret_env " + name + ": cannot read " + path + ": " +
                                              std::strerror(errno) +
                                              " (the server reads it, as its own user)");
  }
  std::string value;
  value.resize(kMaxSecretBytes + 1);
  in.read(value.data(), static_cast<std::streamsize>(value.size()));
  value.resize(static_cast<std::size_t>(in.gcount()));
  if (value.size() > kMaxSecretBytes) {
    return make_error(ErrorKind::invalid, "secret_env " + name + ": " + path + " is larger than " +
                                              std::to_string(kMaxSecretBytes) + " bytes");
  }
  if (!value.empty() && value.back() == '\n') value.pop_back();
  if (!value.empty() && value.back() == '\r') value.pop_back();
  return value;
}

}  // namespace

Result<std::map<std::string, std::string>> read_secret_values(
    const std::map<std::string, SecretSource>& sources) {
  std::map<std::string, std::string> out;
  for (const auto& [name, source] : sources) {
    std::string value;
    if (!source.file.empty()) {
      auto read = read_file_secret(name, source.file);
      if (!read) return read.error();
      value = std::move(*read);
    } else {
      const char* v = std::getenv(source.env.c_str());
      if (v == nullptr) {
        return make_error(ErrorKind::invalid, "secret_env " + name +
                                                  ": the server's environment has no " +
                                                  source.env + "; set it where the server starts");
      }
      value = v;
    }
    if (value.find('\0') != std::string::npos) {
      return make_error(ErrorKind::invalid,
                        "secret_env " + name +
                            ": the value holds a NUL byte, which no environment "
                            "variable can carry");
    }
    out[name] = std::move(value);
  }
  return out;
}

}  // namespace orch
