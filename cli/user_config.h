#pragma once
// The user's CLI config (issue 42): `$XDG_CONFIG_HOME/orchestrate/config.json` (default
// `~/.config/orchestrate/config.json`), where `orchestrate serve` records the URL it serves on so
// that the CLI on this machine finds it without `--server`. A JSON object; the keys written here
// are `server_url`, `https` and `ca_file` (others are kept as they are). The file is the user's
// alone: mode 0600 in a 0700 directory, replaced atomically (a temp file renamed over it).

#include <optional>
#include <ostream>
#include <string>

namespace orch {

// What `serve` recorded.
struct ServerRecord {
  std::string server_url;  // "https://127.0.0.1:18700"
  bool https = false;
  std::string ca_file;  // the CA clients should trust for an https server; "" for the system's
};

// The user's own files (this config, the completion cache): a regular file of at most 64 KiB
// read without waiting on a FIFO (nullopt otherwise); a directory made (mkdir -p) and set to
// mode 0700; a file written as mode 0600 into such a directory, atomically (temp + rename).
std::optional<std::string> read_small_file(const std::string& path);
bool make_private_dir(const std::string& dir, std::string& error);
bool write_private_file(const std::string& path, const std::string& text, std::string& error);

// The cache directory: $XDG_CACHE_HOME/orchestrate, else $HOME/.cache/orchestrate; "" when
// neither variable is set.
std::string user_cache_dir();

// The config directory: $XDG_CONFIG_HOME/orchestrate, else $HOME/.config/orchestrate; "" when
// neither variable is set.
std::string user_config_dir();
// user_config_dir() + "/config.json", or "".
std::string user_config_path();

// The record in the config file at path; nullopt when the file is missing, unreadable, not a
// JSON object or has no server_url string.
std::optional<ServerRecord> read_server_record(const std::string& path);
// Writes record into the config file at path (creating its directory with mode 0700), keeping
// the file's other keys. false with error (a sentence naming the path) when it cannot.
bool write_server_record(const std::string& path, const ServerRecord& record, std::string& error);

// The URL a client on this machine should use for a server that listens on `url`: a wildcard
// bind address (0.0.0.0, [::]) becomes the loopback one.
std::string client_url_for(const std::string& url);

// What `orchestrate serve` does once it listens on `url`: records client_url_for(url) (with
// https, and ca_file made absolute) in the user's config and says so on out, or says on err why
// it could not (the server runs on either way).
void record_serving_url(const std::string& url, const std::string& ca_file, std::ostream& out,
                        std::ostream& err);

}  // namespace orch
