// See dcgm_diag.h.
#include "agents/dcgm_diag.h"

#include <cctype>
#include <cmath>

#include "agents/mini_json.h"
#include "scheduler/common/text.h"

namespace orch::agent {
namespace {

constexpr size_t kMaxInfo = 500;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// DCGM writes Pass/Fail/Warn/Skip (3.x), PASS/FAIL/... or "Not Run"; a word it never used is a
// warning, not a pass.
std::string result_word(const std::string& status, std::string* info) {
  std::string s = lower(status);
  if (s == "pass" || s == "passed") return "pass";
  if (s == "fail" || s == "failed") return "fail";
  if (s == "warn" || s == "warning") return "warn";
  if (s == "skip" || s == "skipped" || s == "not run") return "skip";
  if (!info->empty()) *info += "; ";
  *info += "unknown status '" + status.substr(0, 40) + "'";
  return "warn";
}

std::string text_of(const JsonValue& v) {
  if (v.is_string()) return v.string;
  if (v.is_object()) {
    for (const char* key : {"warning", "message", "info"}) {
      const JsonValue* m = v.get(key);
      if (m && m->is_string()) return m->string;
    }
  }
  return "";
}

void add_lines(const JsonValue* list, std::vector<std::string>* out) {
  if (!list) return;
  if (list->is_string()) {
    out->push_back(list->string);
    return;
  }
  if (!list->is_array()) return;
  for (const JsonValue& item : list->items) {
    std::string t = text_of(item);
    if (!t.empty()) out->push_back(t);
  }
}

// The GPU a result belongs to: gpu_ids "3" or 3 (3.x), entity_id of a GPU entity (4.x); a
// list such as "0,1,2" (the software tests of 3.x) is the whole node.
std::optional<int> gpu_of(const JsonValue& r) {
  const JsonValue* ids = r.get("gpu_ids");
  if (!ids) ids = r.get("gpu_id");
  if (!ids) {
    const JsonValue* group = r.get("entity_group");
    if (group && group->is_string() && group->string != "GPU") return std::nullopt;
    ids = r.get("entity_id");
  }
  if (!ids) return std::nullopt;
  if (ids->is_number() && ids->number >= 0 && ids->number < 1e6 &&
      ids->number == std::floor(ids->number)) {
    return static_cast<int>(ids->number);
  }
  if (ids->is_string() && !ids->string.empty() && ids->string.size() < 7) {
    for (char c : ids->string) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    }
    return std::stoi(ids->string);
  }
  return std::nullopt;
}

DcgmTestResult read_result(const std::string& name, const JsonValue& r) {
  DcgmTestResult t;
  t.name = name;
  t.gpu = gpu_of(r);
  std::vector<std::string> lines;
  add_lines(r.get("warnings"), &lines);
  add_lines(r.get("info"), &lines);
  t.info = join(lines, "; ");
  const JsonValue* status = r.get("status");
  t.result = result_word(status && status->is_string() ? status->string : "", &t.info);
  if (t.info.size() > kMaxInfo) t.info = t.info.substr(0, kMaxInfo) + "...";
  return t;
}

void read_tests(const JsonValue* tests, DcgmDiag* out) {
  if (!tests || !tests->is_array()) return;
  for (const JsonValue& test : tests->items) {
    if (!test.is_object()) continue;
    const JsonValue* name = test.get("name");
    std::string n = name && name->is_string() ? name->string : "?";
    const JsonValue* results = test.get("results");
    bool any = false;
    if (results && results->is_array()) {
      for (const JsonValue& r : results->items) {
        if (!r.is_object()) continue;  // 3.x leaves nulls for GPUs not in the run
        out->tests.push_back(read_result(n, r));
        any = true;
      }
    }
    const JsonValue* summary = test.get("test_summary");
    if (!any && summary && summary->is_object()) out->tests.push_back(read_result(n, *summary));
  }
}

}  // namespace

std::vector<std::string> dcgmi_diag_arguments(int level) {
  return {"diag", "-r", std::to_string(level), "-j"};
}

DcgmDiag parse_dcgm_diag_json(std::string_view text) {
  DcgmDiag out;
  size_t open = text.find('{');
  size_t close = text.rfind('}');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    out.error = "no JSON report in dcgmi's output";
    return out;
  }
  std::string error;
  std::optional<JsonValue> doc = parse_json(text.substr(open, close - open + 1), &error);
  if (!doc || !doc->is_object()) {
    out.error = "dcgmi's report is not JSON: " + (doc ? std::string("not an object") : error);
    return out;
  }
  const JsonValue* body = doc->get("DCGM GPU Diagnostic");
  if (!body) body = doc->get("DCGM Diagnostic");
  if (!body) body = &*doc;
  if (!body->is_object()) {
    out.error = "dcgmi's report has no test results";
    return out;
  }
  for (const JsonValue* holder : {body, doc->get("metadata")}) {
    const JsonValue* v = holder ? holder->get("version") : nullptr;
    if (v && v->is_string() && out.version.empty()) out.version = v->string;
  }
  const JsonValue* categories = body->get("test_categories");
  if (categories && categories->is_array()) {
    for (const JsonValue& c : categories->items) {
      if (c.is_object()) read_tests(c.get("tests"), &out);
    }
  }
  read_tests(body->get("tests"), &out);
  if (out.tests.empty()) out.error = "dcgmi's report has no test results";
  return out;
}

Check dcgm_check(const DcgmDiag& diag, int level, const std::string& why) {
  Check c{"dcgm", true, ""};
  std::string head = "dcgm diag -r " + std::to_string(level) + ": ";
  if (diag.tests.empty()) {
    c.ok = false;
    c.detail = head + (why.empty() ? diag.error : why);
    return c;
  }
  std::vector<std::string> failed, warned;
  int passed = 0, skipped = 0;
  for (const DcgmTestResult& t : diag.tests) {
    std::string where = t.gpu ? " on GPU " + std::to_string(*t.gpu) : "";
    std::string info = t.info.empty() ? "" : ": " + t.info;
    if (t.result == "fail") failed.push_back(t.name + " failed" + where + info);
    if (t.result == "warn") warned.push_back(t.name + where + info);
    if (t.result == "pass") ++passed;
    if (t.result == "skip") ++skipped;
  }
  if (!failed.empty()) {
    c.ok = false;
    c.detail = head + join(failed, "; ");
  } else {
    c.detail = head + std::to_string(passed) + " results passed, " + std::to_string(skipped) +
               " skipped" + (warned.empty() ? "" : ", warnings: " + join(warned, "; "));
  }
  if (!why.empty()) c.detail += " (" + why + ")";
  return c;
}

}  // namespace orch::agent
