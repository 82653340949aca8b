// See user_config.h.
#include "cli/user_config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

namespace orch {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxConfigBytes = 64 * 1024;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

// $<variable>/orchestrate, else $HOME<home_dir>/orchestrate; "" when neither is set.
std::string xdg_dir(const char* variable, const char* home_dir) {
  std::string base = env(variable);
  if (base.empty()) {
    const std::string home = env("HOME");
    if (home.empty()) return "";
    base = home + home_dir;
  }
  return base + "/orchestrate";
}

}  // namespace

std::optional<std::string> read_small_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::size_t>(st.st_size) > kMaxConfigBytes) {
    ::close(fd);
    return std::nullopt;
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(done);
  return text;
}

namespace {

json read_object(const std::string& path) {
  auto text = read_small_file(path);
  if (!text) return json::object();
  json j = json::parse(*text, nullptr, false);
  return j.is_object() ? j : json::object();
}

}  // namespace

bool make_private_dir(const std::string& dir, std::string& error) {
  for (std::size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/') continue;
    const std::string part = dir.substr(0, at);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
      error = "cannot create " + part + ": " + std::strerror(errno);
      return false;
    }
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = dir + " is not a directory";
    return false;
  }
  if ((st.st_mode & 0777) != 0700 && ::chmod(dir.c_str(), 0700) != 0) {
    error = "cannot make " + dir + " private (mode 0700): " + std::strerror(errno);
    return false;
  }
  return true;
}

namespace {

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool write_private_file(const std::string& path, const std::string& text, std::string& error) {
  const std::size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !make_private_dir(path.substr(0, slash), error)) {
    return false;
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    error = "cannot write " + tmp + ": " + std::strerror(errno);
    return false;
  }
  const bool ok = ::fchmod(fd, 0600) == 0 && write_all(fd, text) && ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot write " + path + ": " + std::strerror(ok ? errno : saved);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

std::string user_cache_dir() {
  return xdg_dir("XDG_CACHE_HOME", "/.cache");
}

std::string user_config_dir() {
  return xdg_dir("XDG_CONFIG_HOME", "/.config");
}

std::string user_config_path() {
  const std::string dir = user_config_dir();
  return dir.empty() ? std::string() : dir + "/config.json";
}

std::optional<ServerRecord> read_server_record(const std::string& path) {
  if (path.empty()) return std::nullopt;
  const json j = read_object(path);
  const auto url = j.find("server_url");
  if (url == j.end() || !url->is_string() || url->get<std::string>().empty()) return std::nullopt;
  ServerRecord r;
  r.server_url = url->get<std::string>();
  r.https = j.value("https", false) || r.server_url.rfind("https://", 0) == 0;
  if (const auto ca = j.find("ca_file"); ca != j.end() && ca->is_string()) r.ca_file = *ca;
  return r;
}

bool write_server_record(const std::string& path, const ServerRecord& record, std::string& error) {
  if (path.empty()) {
    error = "no config directory: neither $XDG_CONFIG_HOME nor $HOME is set";
    return false;
  }
  json j = read_object(path);
  j["server_url"] = record.server_url;
  j["https"] = record.https;
  if (record.ca_file.empty()) {
    j.erase("ca_file");
  } else {
    j["ca_file"] = record.ca_file;
  }
  return write_private_file(path, j.dump(2) + "\n", error);
}

std::string client_url_for(const std::string& url) {
  const std::size_t scheme_end = url.find("://");
  const std::size_t port_at = url.rfind(':');
  if (scheme_end == std::string::npos || port_at == std::string::npos || port_at <= scheme_end) {
    return url;
  }
  const std::string scheme = url.substr(0, scheme_end + 3);
  std::string host = url.substr(scheme_end + 3, port_at - scheme_end - 3);
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  if (host == "::" || host == "[::]" || host == ":") host = "[::1]";
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  return scheme + host + url.substr(port_at);
}

void record_serving_url(const std::string& url, const std::string& ca_file, std::ostream& out,
                        std::ostream& err) {
  ServerRecord record;
  record.server_url = client_url_for(url);
  record.https = record.server_url.rfind("https://", 0) == 0;
  if (!ca_file.empty()) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(ca_file, ec);
    record.ca_file = ec ? ca_file : absolute.lexically_normal().string();
  }
  const std::string path = user_config_path();
  std::string error;
  if (!write_server_record(path, record, error)) {
    err << "orchestrate: WARNING: the CLI will not find this server by itself (" << error
        << "); give it --server " << record.server_url << " or set ORCH_URL" << std::endl;
    return;
  }
  out << "orchestrate: the CLI on this machine now uses " << record.server_url << " (recorded in "
      << path << "; --server or $ORCH_URL still win)" << std::endl;
}

}  // namespace orch
