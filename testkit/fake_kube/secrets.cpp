#include "testkit/fake_kube/secrets.h"

#include "scheduler/common/base64.h"
#include "testkit/fake_kube/kube_json.h"

namespace orch::fake_kube {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxSecretBytes = 1 << 20;  // the API server's limit on all values

bool is_config_key(const std::string& key) {
  if (key.empty() || key.size() > 253 || key == "." || key == "..") return false;
  for (char c : key) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// Where Go's base64 decoder stops: the first byte outside the alphabet.
std::size_t bad_base64_at(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '+' || c == '/' || c == '=' || c == '\n' || c == '\r';
    if (!ok) return i;
  }
  return text.size();
}

[[noreturn]] void invalid(const json& secret, const std::string& field, const std::string& what) {
  const std::string name = string_at(secret, {"metadata", "name"});
  ApiError e(422, "Invalid", "Secret \"" + name + "\" is invalid: " + field + ": " + what);
  e.details = {
      {"name", name},
      {"kind", "Secret"},
      {"causes",
       json::array({{{"reason", "FieldValueInvalid"}, {"message", what}, {"field", field}}})}};
  throw e;
}

}  // namespace

void admit_secret(json& secret) {
  json& data = secret["data"];
  if (data.is_null()) data = json::object();
  if (!data.is_object()) {
    throw ApiError(400, "BadRequest",
                   "Secret in version \"v1\" cannot be handled as a Secret: data is not an object");
  }
  std::size_t total = 0;
  for (const auto& [key, value] : data.items()) {
    const std::string text = value.is_string() ? value.get<std::string>() : "";
    const auto bytes = decode_base64(text);
    if (!value.is_string() || !bytes) {
      throw ApiError(400, "BadRequest",
                     "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 "
                     "data at input byte " +
                         std::to_string(bad_base64_at(text)));
    }
    total += bytes->size();
  }
  // stringData is write-only: the server folds it into data (it wins) and never stores it.
  const json string_data = secret.contains("stringData") ? secret["stringData"] : json();
  secret.erase("stringData");
  if (string_data.is_object()) {
    for (const auto& [key, value] : string_data.items()) {
      const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
      data[key] = encode_base64(text);
      total += text.size();
    }
  }
  for (const auto& [key, value] : data.items()) {
    if (!is_config_key(key)) {
      invalid(secret, "data[" + key + "]",
              "Invalid value: \"" + key +
                  "\": a valid config key must consist of alphanumeric characters, '-', '_' or "
                  "'.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for "
                  "validation is '[-._a-zA-Z0-9]+')");
    }
  }
  if (total > kMaxSecretBytes) {
    invalid(secret, "data",
            "Too long: must have at most " + std::to_string(kMaxSecretBytes) + " bytes");
  }
  if (string_at(secret, {"type"}).empty()) secret["type"] = "Opaque";
}

SecretKeyValue secret_key_value(const std::optional<json>& secret, const json& ref,
                                const std::string& ns) {
  const std::string name = string_at(ref, {"name"});
  const std::string key = string_at(ref, {"key"});
  const bool optional = at_path(ref, {"optional"}) == true;
  SecretKeyValue out;
  if (!secret) {
    if (!optional) out.error = "secret \"" + name + "\" not found";
    return out;
  }
  const json& value = at_path(*secret, {"data", key.c_str()});
  if (!value.is_string()) {
    if (!optional) out.error = "couldn't find key " + key + " in Secret " + ns + "/" + name;
    return out;
  }
  out.value = decode_base64(value.get<std::string>()).value_or("");
  return out;
}

}  // namespace orch::fake_kube
