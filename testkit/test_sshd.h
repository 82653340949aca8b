#pragma once
// TestSshd: a real OpenSSH server on 127.0.0.1 for tests of SshSession and the adapters on top
// of it. Everything lives in a fresh temporary directory: an ed25519 host key (one key type, so
// the key a client negotiates is known), a client key authorised for the current user (root in
// CI), sshd_config (key authentication only, StrictModes off, internal SFTP, HOME=dir() in
// sessions so that the user's shell start-up files are not run), the pid file and the log. The
// constructor starts `sshd -D -e` as a child and waits until it listens; the destructor kills it
// and every session process under it and removes the directory.
//
// Setup failures throw std::runtime_error with the sshd log attached.

#include <sys/types.h>

#include <string>
#include <vector>

#include "scheduler/spec/cluster_spec.h"

namespace orch::test {

class TestSshd {
 public:
  TestSshd();  // generates keys and starts the server
  ~TestSshd();
  TestSshd(const TestSshd&) = delete;
  TestSshd& operator=(const TestSshd&) = delete;

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  const std::string& client_key() const { return client_key_; }  // private key, no passphrase
  // The host key as `ssh-keygen -lf` prints it ("SHA256:...") and as a public key line
  // ("ssh-ed25519 AAAA... comment").
  const std::string& host_fingerprint() const { return host_fingerprint_; }
  std::string host_public_key() const;
  // A spec that reaches this server: 127.0.0.1, its port, the current user, client_key(), the
  // host key pinned, short timeouts.
  SshSpec spec() const;

  // A new ed25519 key pair dir()/<name> (+ .pub), optionally encrypted, optionally authorised.
  // Returns the private key's path.
  std::string make_key(const std::string& name, const std::string& passphrase = {},
                       bool authorize = true);
  // "SHA256:..." of a key file (private or public), from ssh-keygen -lf.
  static std::string fingerprint_of(const std::string& key_path);
  // The public key line of dir()/<name>.pub.
  std::string public_key_line(const std::string& name) const;

  void start();             // no-op when running
  void stop();              // kills the listener and every session under it
  void restart();           // stop + start, same port and keys
  void kill_connections();  // kills the session processes; the listener keeps running
  void change_host_key();   // a new host key, then restart
  bool running() const { return pid_ > 0; }
  std::string log() const;  // what sshd has logged so far

 private:
  std::string run_keygen(const std::vector<std::string>& args) const;
  void write_config() const;
  std::vector<pid_t> descendants() const;

  std::string dir_;
  std::string host_key_;
  std::string client_key_;
  std::string host_fingerprint_;
  std::string config_;
  std::string log_file_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace orch::test
