#pragma once
// Who may call the API, and what each caller did: the tokens (kept as hashes), the audit log and
// the key attempt credentials are derived with (attempt_credential.h),
// in a SQLite file of their own (<state>/access.db) beside the scheduler's database. It is
// apart so that a refused request is recorded without waiting for the brain, and so that the
// brain's transactions never wait on the audit's writes. Safe to use from any thread (one
// connection behind a mutex); checking a token reads memory, not the file.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/common/result.h"
#include "web/access/role.h"

namespace orch {

class Db;

struct TokenRow {
  std::int64_t id = 0;
  std::string name;  // the user the token speaks for
  Role role = Role::viewer;
  std::string created_by;
  std::int64_t created_ms = 0;
  std::optional<std::int64_t> revoked_ms;
  std::vector<std::string> teams;  // the teams a `user` may submit for; first: the default
};

// One mutation (allowed or refused) through the API, or, for refusals that come in floods (no
// valid token, or a caller over its rate), the count of them since the last row of the same
// remote (or user) and status (web/access/refusal_sampler.h).
struct AuditRow {
  std::int64_t id = 0;
  std::int64_t at_ms = 0;
  std::string user;  // "" when no valid token came
  std::string role;  // the caller's role, "" when none
  std::string method;
  std::string route;       // the route's pattern, "POST /api/v1/jobs/{id}/cancel"; "" when none
  std::string target;      // the request's path (the query string is left out)
  int status = 0;          // the HTTP status answered
  std::string result;      // "ok" | "refused" (400, 401, 403, 415, 421, 429) | "failed" (any other)
  std::string remote;      // the peer's address; "others" for a sampled row of many addresses
  std::int64_t count = 1;  // the requests this row stands for
};

// A page of the audit log, newest first; next is the id to pass as `before` for the next page.
struct AuditPage {
  std::vector<AuditRow> rows;
  std::optional<std::int64_t> next;
};

class AccessStore {
 public:
  // Opens (creating it owner-only when missing) the file at path.
  static Result<std::unique_ptr<AccessStore>> open(const std::string& path, const Clock& clock);
  ~AccessStore();
  AccessStore(const AccessStore&) = delete;
  AccessStore& operator=(const AccessStore&) = delete;

  // Runs with a new token before it goes live; an error stops the token from ever working.
  using BeforeLive = std::function<Result<void>(const std::string& token)>;
  // A new token for name with role, bound to teams; the token itself is returned here and never
  // again. A name (and a team) must be 1-64 of [A-Za-z0-9._-] (the job spec's rule for names)
  // (invalid otherwise); one that has a live token is a conflict (revoke it first).
  // before_live, when given, runs with the token before its row is written.
  Result<std::string> create_token(const std::string& name, Role role,
                                   const std::string& created_by,
                                   const std::vector<std::string>& teams = {},
                                   const BeforeLive& before_live = nullptr);
  // Every token ever made, live ones first, by name. Hashes never leave the store.
  Result<std::vector<TokenRow>> tokens() const;
  // Revokes name's live token at once (not_found when it has none).
  Result<TokenRow> revoke_token(const std::string& name);
  // The caller a token speaks for, when it is live. Constant time in the number of tokens.
  std::optional<Identity> identify(std::string_view token) const;
  bool has_live_admin() const;

  Result<void> record(AuditRow row);  // at_ms is set here
  // Rows with id < before (none: from the newest), at most limit (1..1000).
  Result<AuditPage> audit(int limit, std::optional<std::int64_t> before) const;
  // The credential of the attempt with launch token `token` (attempt_credential.h), under the
  // key this file keeps (made at its first open, the same after every restart).
  std::string attempt_credential(std::string_view token) const;
  // Whether credential is that attempt's (constant time). Says nothing of the attempt's life.
  bool attempt_credential_valid(std::string_view token, std::string_view credential) const;

  // The clock rows are stamped with (the guard's sampling and rate limits keep the same time).
  const Clock& clock() const { return clock_; }

 private:
  AccessStore(std::unique_ptr<Db> db, const Clock& clock);
  Result<void> load();
  Result<void> load_attempt_key();
  mutable std::mutex mu_;
  std::unique_ptr<Db> db_;
  const Clock& clock_;
  std::unordered_map<std::string, Identity> live_;  // token hash -> caller
  std::string attempt_key_;                         // raw bytes; set once at open
};

// Whether name can name a token's user (see create_token).
bool valid_token_name(std::string_view name);

}  // namespace orch
