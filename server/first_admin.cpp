#include "server/first_admin.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli/client_token.h"

namespace orch {
namespace {

Error io_error(const std::string& what) {
  return make_error(ErrorKind::io, what + ": " + std::strerror(errno));
}

// Durable before it is used: the content synced, renamed over the old file, the rename synced.
Result<void> write_token_file(const std::string& path, const std::string& token) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return io_error("cannot write " + tmp);
  const std::string line = token + "\n";
  const bool written = ::fchmod(fd, 0600) == 0 &&
                       ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                       ::fsync(fd) == 0;
  ::close(fd);
  if (!written || std::rename(tmp.c_str(), path.c_str()) != 0) {
    return io_error("cannot write the admin token to " + path);
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return io_error("cannot open " + dir);
  const bool synced = ::fsync(dfd) == 0;
  ::close(dfd);
  if (!synced) return io_error("cannot sync " + dir);
  return {};
}

// Whether a live admin token was made by a person (`token create`), who then holds it.
Result<bool> person_holds_admin(const AccessStore& access) {
  auto rows = access.tokens();
  if (!rows) return rows.error();
  for (const TokenRow& t : *rows) {
    if (t.role == Role::admin && !t.revoked_ms && t.created_by != kServerMadeBy) return true;
  }
  return false;
}

}  // namespace

Result<void> ensure_admin_token(AccessStore& access, const std::string& path) {
  const std::string held = read_token_file(path);
  if (auto who = access.identify(held); who && who->role == Role::admin) return {};
  auto person = person_holds_admin(access);
  if (!person) return person.error();
  if (*person) return {};  // a person's admin token manages the rest
  if (access.has_live_admin()) {
    std::cerr << "orchestrate: " << path
              << " holds no live admin token while only tokens this server made are admins "
                 "(an older version could leave one that nobody holds); making another\n";
  }
  auto before_live = [&path](const std::string& token) { return write_token_file(path, token); };
  std::string name = "admin";
  auto token = access.create_token(name, Role::admin, kServerMadeBy, {}, before_live);
  for (int n = 2; !token && token.error().kind == ErrorKind::conflict && n < 100; ++n) {
    name = "admin-" + std::to_string(n);  // "admin" is taken by another live token
    token = access.create_token(name, Role::admin, kServerMadeBy, {}, before_live);
  }
  if (!token) return token.error();
  std::cerr << "orchestrate: made admin token \"" << name << "\" in " << path
            << " (readable only by this user)\n";
  return {};
}

}  // namespace orch
