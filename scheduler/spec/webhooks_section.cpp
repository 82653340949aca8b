#include "scheduler/spec/webhooks_section.h"

#include <algorithm>
#include <string>

#include "scheduler/common/http_url.h"
#include "scheduler/spec/secret_source_reader.h"

namespace orch {
namespace {

using yaml::MapView;

constexpr std::string_view kExample =
    "a map such as {name: ops, url: https://hooks.example.com/orchestrate, events: [job-failed, "
    "site-down], secret: {file: /etc/orchestrate/hook.key}}";

void read_events(MapView& hook, const std::string& context, WebhookSpec& w) {
  yaml::Reader& r = hook.reader();
  hook.read_string_list("events", w.events, yaml::kNonEmpty,
                        "a list such as [job-failed, site-down]");
  if (r.failed()) return;
  const auto& known = webhook_event_names();
  std::vector<std::string_view> names(known.begin(), known.end());
  for (const std::string& e : w.events) {
    if (std::find(known.begin(), known.end(), e) != known.end()) continue;
    std::string message = context + ": unknown event \"" + e + "\"";
    if (auto near = yaml::nearest(e, names))
      message += " (did you mean \"" + std::string(*near) + "\"?)";
    r.fail(hook.value_position("events"), message, "any of " + yaml::join(names, ", "));
    return;
  }
  if (w.events.empty()) {
    r.fail(hook.value_position("events"), context + " asks for no event",
           "any of " + yaml::join(names, ", "));
  }
}

}  // namespace

void read_webhooks(const MapView& file, std::vector<WebhookSpec>& out) {
  yaml::Reader& r = file.reader();
  const yaml::Field* field = file.find("webhooks");
  if (!field || field->value.IsNull()) return;
  const YAML::Node& list = field->value;
  if (!list.IsSequence()) {
    r.fail(file.value_position("webhooks"),
           "\"webhooks\" must be a list, got " + yaml::describe(list),
           "a list of webhooks, each " + std::string(kExample));
    return;
  }
  for (std::size_t i = 0; i < list.size() && !r.failed(); ++i) {
    const YAML::Node item = list[i];
    std::string context = "webhooks[" + std::to_string(i) + "]";
    MapView hook(r, item, context, {"name", "url", "events", "secret", "format"}, kExample);
    if (r.failed()) return;
    WebhookSpec w;
    hook.require("name", "name: what the server's log calls it");
    hook.require("url", "url: where to POST, http:// or https://");
    hook.require("events", "events: a list such as [job-failed, site-down]");
    hook.require("secret", "secret: {file: /abs/path} or {env: VAR}, the key that signs each body");
    hook.read_string("name", w.name, yaml::kName, "a name such as ops-pager");
    hook.read_string("url", w.url, yaml::kNonEmpty, "a URL such as https://hooks.example.com/x");
    hook.read_string("format", w.format, yaml::kNonEmpty, "json or slack");
    if (r.failed()) return;
    context = "webhook \"" + w.name + "\"";
    // Checked as the sender will read it, so that a URL it cannot use stops the start here.
    if (auto url = parse_server_url(w.url); !url) {
      r.fail(hook.value_position("url"), context + ": " + url.error().message,
             "a URL such as https://hooks.example.com/orchestrate");
      return;
    }
    if (w.format != "json" && w.format != "slack") {
      r.fail(hook.value_position("format"),
             context + ": format must be json or slack, got \"" + w.format + "\"",
             "json (the default) or slack");
      return;
    }
    read_events(hook, context, w);
    if (r.failed()) return;
    if (!read_secret_source(r, item["secret"], context + ".secret", w.secret)) return;
    for (const WebhookSpec& other : out) {
      if (other.name == w.name) {
        r.fail(hook.value_position("name"), "two webhooks are named \"" + w.name + "\"",
               "a name of its own");
        return;
      }
    }
    out.push_back(std::move(w));
  }
}

}  // namespace orch
