// load_document: the one way YAML text enters the spec parsers (see yaml_reader.h).

#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include <yaml-cpp/eventhandler.h>

#include "scheduler/spec/yaml_reader.h"

namespace orch::yaml {
namespace {

// yaml-cpp 0.7 loops forever on some malformed inputs (a "," where a document's root node
// should start, or "!>\n? a"), emitting events and allocating until the process dies. A
// document cannot need many more events than it has bytes, so a first pass counts events
// without building anything and gives up well before memory does.
class EventBudget : public YAML::EventHandler {
 public:
  explicit EventBudget(std::size_t budget) : budget_(budget) {}
  void OnDocumentStart(const YAML::Mark& m) override { spend(m); }
  void OnDocumentEnd() override { spend(YAML::Mark::null_mark()); }
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { spend(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { spend(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    spend(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    spend(m);
  }
  void OnSequenceEnd() override { spend(YAML::Mark::null_mark()); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    spend(m);
  }
  void OnMapEnd() override { spend(YAML::Mark::null_mark()); }

 private:
  void spend(const YAML::Mark& m) {
    if (!m.is_null()) mark_ = m;
    if (++spent_ > budget_) {
      throw YAML::ParserException(mark_, "the parser got stuck on this input");
    }
  }
  std::size_t budget_;
  std::size_t spent_ = 0;
  YAML::Mark mark_;
};

void check_event_budget(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  EventBudget budget(4 * text.size() + 64);
  while (parser.HandleNextDocument(budget)) {
  }
}

}  // namespace

Result<YAML::Node> load_document(std::string_view text, std::string_view source,
                                 std::string_view expected_shape) {
  auto error_at = [&](Position at, std::string_view what, std::string_view expected) {
    Reader r(source);
    r.fail(at, what, expected);
    return r.error();
  };
  std::vector<YAML::Node> docs;
  try {
    const std::string owned(text);
    check_event_budget(owned);  // throws ParserException instead of looping forever
    docs = YAML::LoadAll(owned);
  } catch (const YAML::Exception& e) {
    Position at;
    if (!e.mark.is_null() && e.mark.line >= 0) at = {e.mark.line + 1, e.mark.column + 1};
    return error_at(at, "invalid YAML: " + e.msg,
                    "well-formed YAML or JSON (check indentation, quotes and brackets)");
  } catch (const std::exception& e) {
    return error_at({}, std::string("invalid YAML: ") + e.what(), "well-formed YAML or JSON");
  }
  if (docs.empty() || docs.front().IsNull()) {
    return error_at({}, "the document is empty", expected_shape);
  }
  if (docs.size() > 1) {
    return error_at(position_of(docs[1]), "a second YAML document starts here",
                    "one document per file (remove the extra \"---\")");
  }
  return docs.front();
}

}  // namespace orch::yaml
