// `orchestrate secret ...` (secret_commands.h).
#include "cli/secret_commands.h"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "cli/client_call.h"
#include "cli/output_table.h"
#include "scheduler/common/base64.h"
#include "scheduler/common/percent_encoding.h"
#include "scheduler/common/text.h"
#include "scheduler/secrets/secret_file.h"

namespace orch {
namespace {

using nlohmann::json;

std::string secret_path(const std::string& name) {
  return "/api/v1/secrets/" + percent_encode(name);
}

std::string teams_text(const json& row) {
  std::string out;
  for (const auto& t : member(row, "teams")) {
    if (t.is_string()) out += (out.empty() ? "" : ",") + t.get<std::string>();
  }
  return out.empty() ? "(every team)" : out;
}

// The value to send, read here; a usage error's message when it cannot be.
Result<std::string> read_value(const SecretSetArgs& a) {
  if (a.from_file.empty() == a.from_env.empty()) {
    return make_error(ErrorKind::invalid,
                      "give exactly one of --from-file FILE and --from-env VAR");
  }
  if (!a.from_file.empty()) return read_secret_file("secret " + a.name, a.from_file);
  const char* v = std::getenv(a.from_env.c_str());
  if (v == nullptr) {
    return make_error(ErrorKind::invalid,
                      "secret " + a.name + ": this shell's environment has no " + a.from_env);
  }
  std::string value = v;
  if (auto ok = check_secret_value("secret " + a.name, value); !ok) return ok.error();
  return value;
}

void print_secret(const json& row, const std::string& verb, std::ostream& out) {
  out << verb << " secret " << field(row, "name") << ", granted to " << teams_text(row)
      << "; a job names it as secret_env: {VAR: {secret: " << field(row, "name") << "}}\n";
}

}  // namespace

std::vector<std::string> split_team_list(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  for (const auto& item : given) {
    for (auto& team : split(item, ',')) out.push_back(std::move(team));
  }
  return out;
}

int run_secret_set(const ClientOptions& o, const SecretSetArgs& args, std::ostream& out,
                   std::ostream& err) {
  auto value = read_value(args);
  if (!value) {
    err << "error: " << value.error().message << '\n';
    return kExitUsage;
  }
  const json request = {{"value_base64", encode_base64(*value)}, {"teams", args.teams}};
  json body;
  if (int rc = call_json(o, "PUT", secret_path(args.name), body, err, request.dump());
      rc != kExitOk) {
    return rc;
  }
  if (as_json(o)) {
    print_json(body, out);
  } else {
    print_secret(body, "set", out);
  }
  return kExitOk;
}

int run_secret_grant(const ClientOptions& o, const std::string& name,
                     const std::vector<std::string>& teams, std::ostream& out, std::ostream& err) {
  json body;
  const json request = {{"teams", teams}};
  if (int rc = call_json(o, "POST", secret_path(name) + "/grant", body, err, request.dump());
      rc != kExitOk) {
    return rc;
  }
  if (as_json(o)) {
    print_json(body, out);
  } else {
    print_secret(body, "granted", out);
  }
  return kExitOk;
}

int run_secret_list(const ClientOptions& o, std::ostream& out, std::ostream& err) {
  json body;
  if (int rc = call_json(o, "GET", "/api/v1/secrets", body, err); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(body, out);
    return kExitOk;
  }
  Table t({"NAME", "TEAMS", "SOURCE", "CREATED", "UPDATED", "BY"});
  for (const auto& row : member(body, "secrets")) {
    t.add_row({field(row, "name"), teams_text(row), field(row, "source"),
               timestamp(member(row, "created_ms")), timestamp(member(row, "updated_ms")),
               field(row, "updated_by")});
  }
  t.print(out);
  return kExitOk;
}

int run_secret_delete(const ClientOptions& o, const std::string& name, std::ostream& out,
                      std::ostream& err) {
  json body;
  if (int rc = call_json(o, "DELETE", secret_path(name), body, err); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(body, out);
  } else {
    out << "deleted secret " << name << "; jobs that name it are not launched again until it is "
        << "set again\n";
  }
  return kExitOk;
}

}  // namespace orch
