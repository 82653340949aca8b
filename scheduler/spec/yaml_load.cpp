// load_document: the one way YAML text enters the spec parsers (see yaml_reader.h).

#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include <yaml-cpp/eventhandler.h>

#include "scheduler/common/utf8.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch::yaml {
namespace {

constexpr std::string_view kCoreTagPrefix = "tag:yaml.org,2002:";
constexpr std::string_view kCoreTags = "!!str, !!int, !!float, !!bool, !!null, !!seq or !!map";

// A problem the first pass found, worded as Reader::fail wants it.
struct Problem {
  Position at;
  std::string what;
  std::string expected;
};

// Thrown by the first pass to stop at its first problem.
struct FoundProblem {
  Problem problem;
};

Position position_at_offset(std::string_view text, std::size_t offset) {
  Position at;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++at.line;
      at.column = 1;
    } else {
      ++at.column;
    }
  }
  return at;
}

std::string hex_byte(unsigned char b) {
  constexpr char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[b >> 4] + kDigits[b & 0xF];
}

// "!!python/object" for "tag:yaml.org,2002:python/object"; other tags as written, cut short.
std::string show_tag(std::string_view tag) {
  std::string shown = tag.substr(0, kCoreTagPrefix.size()) == kCoreTagPrefix
                          ? "!!" + std::string(tag.substr(kCoreTagPrefix.size()))
                          : std::string(tag);
  shown = to_valid_utf8(shown);
  if (shown.size() > 60) shown = std::string(utf8_prefix(shown, 60)) + "...";
  return shown;
}

enum class Kind { scalar, sequence, map };

// The first pass over the parser's events, before any node is built. It counts events, because
// yaml-cpp 0.7 loops forever on some malformed inputs (a "," where a document's root node
// should start, or "!>\n? a"), emitting events and allocating until the process dies; a
// document cannot need many more events than it has bytes, so the pass gives up well before
// memory does. And it refuses, naming the field, what yaml-cpp would let through:
//  - a scalar (key or value) that is not valid UTF-8: JSON could not store it;
//  - a tag other than YAML's core ones (!!python/object, !foo): nothing here gives tags a
//    meaning, so such a document does not mean what its author thinks;
//  - a quoted scalar whose closing quote is missing: yaml-cpp silently ends it at the end of
//    the text, swallowing every line after it.
// Aliases are one event each, never expanded, so the pass is linear in the text.
class FirstPass : public YAML::EventHandler {
 public:
  FirstPass(std::string_view text, bool offsets_are_bytes)
      : text_(text), budget_(4 * text.size() + 64), offsets_are_bytes_(offsets_are_bytes) {
    // yaml-cpp skips a byte order mark and counts positions after it.
    if (text.substr(0, 3) == "\xEF\xBB\xBF") bom_ = 3;
  }

  void OnDocumentStart(const YAML::Mark& m) override {
    spend(m);
    stack_.clear();
  }
  void OnDocumentEnd() override { spend(YAML::Mark::null_mark()); }
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override {
    spend(m);
    node_done(nullptr);
  }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override {
    spend(m);
    node_done(nullptr);
  }
  void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t,
                const std::string& value) override {
    spend(m);
    const std::string where = is_key() ? key_label() : child_path();
    if (auto bad = first_invalid_utf8(value)) {
      fail(m,
           where + ": invalid UTF-8 at byte offset " + std::to_string(*bad) + " (" +
               hex_byte(static_cast<unsigned char>(value[*bad])) + ")",
           "UTF-8 text (save the file as UTF-8)");
    }
    check_tag(m, tag, Kind::scalar, where);
    check_closing_quote(m, where);  // also under an explicit tag: !!str "abc
    node_done(&value);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string& tag, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    spend(m);
    open(m, tag, Kind::sequence);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& m, const std::string& tag, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    spend(m);
    open(m, tag, Kind::map);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    bool is_map = false;
    std::string path;       // of the collection itself ("" at the top)
    bool at_key = true;     // a map: the next node is a key
    std::string key;        // a map: the key of the next value
    std::size_t index = 0;  // a sequence: the index of the next item
  };

  Position position(const YAML::Mark& m) const {
    if (m.is_null() || m.line < 0) return {};
    return {m.line + 1, m.column + 1};
  }

  void spend(const YAML::Mark& m) {
    if (!m.is_null()) mark_ = m;
    if (++spent_ > budget_) {
      throw YAML::ParserException(mark_, "the parser got stuck on this input");
    }
  }

  [[noreturn]] void fail(const YAML::Mark& m, std::string what, std::string expected) const {
    throw FoundProblem{{position(m), std::move(what), std::move(expected)}};
  }

  bool is_key() const { return !stack_.empty() && stack_.back().is_map && stack_.back().at_key; }

  std::string key_label() const {
    const std::string& parent = stack_.back().path;
    return parent.empty() ? std::string("a key") : "a key of " + parent;
  }

  // The path of the next node ("command", "env.LR", "clusters[0].name").
  std::string child_path() const {
    if (stack_.empty()) return "the document";
    const Frame& f = stack_.back();
    if (!f.is_map) return f.path + "[" + std::to_string(f.index) + "]";
    return f.path.empty() ? f.key : f.path + "." + f.key;
  }

  void open(const YAML::Mark& m, const std::string& tag, Kind kind) {
    const std::string where = is_key() ? key_label() : child_path();
    check_tag(m, tag, kind, where);
    Frame f;
    f.is_map = kind == Kind::map;
    // The document's own map or list has no name: its keys are "command", "env.LR".
    if (!stack_.empty()) f.path = where;
    stack_.push_back(std::move(f));
  }

  void close() {
    spend(YAML::Mark::null_mark());
    if (!stack_.empty()) stack_.pop_back();
    node_done(nullptr);
  }

  // Moves the enclosing collection past the node just read (a key's text names its value).
  void node_done(const std::string* scalar) {
    if (stack_.empty()) return;
    Frame& f = stack_.back();
    if (!f.is_map) {
      ++f.index;
    } else if (f.at_key) {
      f.key = scalar ? *scalar : std::string("?");
      if (f.key.size() > 60) f.key = std::string(utf8_prefix(f.key, 60)) + "...";
      f.at_key = false;
    } else {
      f.at_key = true;
    }
  }

  void check_tag(const YAML::Mark& m, const std::string& tag, Kind kind,
                 const std::string& where) const {
    // "?": no tag; "!": the non-specific tag of quoted and block scalars (or a bare "!").
    if (tag.empty() || tag == "?" || tag == "!") return;
    std::string_view name(tag);
    const bool core = name.substr(0, kCoreTagPrefix.size()) == kCoreTagPrefix;
    if (core) name.remove_prefix(kCoreTagPrefix.size());
    const bool scalar_tag =
        name == "str" || name == "int" || name == "float" || name == "bool" || name == "null";
    if (core &&
        ((scalar_tag && kind == Kind::scalar) || (name == "seq" && kind == Kind::sequence) ||
         (name == "map" && kind == Kind::map))) {
      return;
    }
    if (core && (scalar_tag || name == "seq" || name == "map")) {
      const char* got = kind == Kind::scalar ? "a scalar" : kind == Kind::map ? "a map" : "a list";
      fail(m, where + ": the tag " + show_tag(tag) + " does not fit " + got,
           "no tag (the value's own shape says what it is)");
    }
    fail(m, where + ": unknown tag " + show_tag(tag),
         "no tag, or one of the YAML core tags " + std::string(kCoreTags));
  }

  // A quoted scalar must end with its quote. yaml-cpp marks a node where its properties
  // (anchor, tag) start, so those are skipped to find the opening quote; plain and block
  // scalars (| and >) do not start with a quote and are left alone.
  void check_closing_quote(const YAML::Mark& m, const std::string& where) const {
    if (!offsets_are_bytes_ || m.is_null() || m.pos < 0) return;
    std::size_t i = static_cast<std::size_t>(m.pos) + bom_;
    auto is_blank = [&](std::size_t k) {
      return text_[k] == ' ' || text_[k] == '\t' || text_[k] == '\n' || text_[k] == '\r';
    };
    while (i < text_.size() && (text_[i] == '&' || text_[i] == '!')) {
      while (i < text_.size() && !is_blank(i)) ++i;
      while (i < text_.size() && is_blank(i)) ++i;
    }
    if (i >= text_.size() || (text_[i] != '"' && text_[i] != '\'')) return;
    const char quote = text_[i];
    for (std::size_t k = i + 1; k < text_.size(); ++k) {
      if (quote == '"' && text_[k] == '\\') {
        ++k;  // an escape: the next byte cannot close the string
      } else if (text_[k] == quote) {
        if (quote == '\'' && k + 1 < text_.size() && text_[k + 1] == '\'') {
          ++k;  // '' is a quote inside a single-quoted string
          continue;
        }
        return;
      }
    }
    const std::string q(1, quote);
    fail(m, where + ": the " + q + " that starts this string is never closed",
         "a closing " + q + " (a string in " + q + " may span lines, but must end)");
  }

  std::string_view text_;
  std::size_t budget_;
  bool offsets_are_bytes_;
  std::size_t bom_ = 0;
  std::size_t spent_ = 0;
  YAML::Mark mark_;
  std::vector<Frame> stack_;
};

}  // namespace

Result<YAML::Node> load_document(std::string_view text, std::string_view source,
                                 std::string_view expected_shape) {
  auto error_at = [&](Position at, std::string_view what, std::string_view expected) {
    Reader r(source);
    r.fail(at, what, expected);
    return r.error();
  };
  // A NUL byte cannot reach a command line or an environment, and makes yaml-cpp guess
  // UTF-16 or UTF-32; invalid UTF-8 cannot be stored as JSON.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return error_at(position_at_offset(text, nul),
                    "a NUL byte at byte offset " + std::to_string(nul) + " of the text",
                    "UTF-8 text without NUL bytes");
  }
  const std::optional<std::size_t> bad_byte = first_invalid_utf8(text);
  auto invalid_text = [&] {
    return error_at(position_at_offset(text, *bad_byte),
                    "invalid UTF-8 at byte offset " + std::to_string(*bad_byte) + " of the text (" +
                        hex_byte(static_cast<unsigned char>(text[*bad_byte])) + ")",
                    "UTF-8 text (save the file as UTF-8)");
  };
  std::vector<YAML::Node> docs;
  try {
    const std::string owned(text);
    {
      std::istringstream in(owned);
      YAML::Parser parser(in);
      FirstPass first_pass(owned, !bad_byte);
      while (parser.HandleNextDocument(first_pass)) {
      }
    }
    // Invalid UTF-8 outside every scalar (in a comment, a tag, an anchor).
    if (bad_byte) return invalid_text();
    docs = YAML::LoadAll(owned);
  } catch (const FoundProblem& found) {
    return error_at(found.problem.at, found.problem.what, found.problem.expected);
  } catch (const YAML::Exception& e) {
    // yaml-cpp echoes some input in its messages ("unknown escape character: X").
    if (bad_byte) return invalid_text();
    Position at;
    if (!e.mark.is_null() && e.mark.line >= 0) at = {e.mark.line + 1, e.mark.column + 1};
    return error_at(at, "invalid YAML: " + to_valid_utf8(e.msg),
                    "well-formed YAML or JSON (check indentation, quotes and brackets)");
  } catch (const std::exception& e) {
    return error_at({}, "invalid YAML: " + to_valid_utf8(e.what()), "well-formed YAML or JSON");
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
