// See nvidia_smi_xml.h.
#include "agents/nvidia_smi_xml.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <initializer_list>

namespace orch::agent {
namespace {

constexpr size_t kMaxDepth = 64;
constexpr size_t kMaxText = 16u << 20;

// The document as a flat tree: element names, their text and their children (indexes).
struct Element {
  std::string name;
  std::string text;
  std::string id;  // the `id` attribute (a <gpu>'s PCI bus id)
  std::vector<size_t> children;
};

struct Tree {
  std::vector<Element> nodes;  // nodes[0] is a synthetic document node
  std::string error;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

void append_decoded(std::string* out, std::string_view s) {
  static constexpr std::pair<std::string_view, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  size_t i = 0;
  while (i < s.size()) {
    bool done = false;
    if (s[i] == '&') {
      for (const auto& [name, c] : kEntities) {
        if (s.substr(i, name.size()) == name) {
          out->push_back(c);
          i += name.size();
          done = true;
          break;
        }
      }
    }
    if (!done) out->push_back(s[i++]);
  }
}

// The value of attribute `id` in a start tag's attribute text, or "".
std::string id_attribute(std::string_view attrs) {
  size_t at = 0;
  while ((at = attrs.find("id", at)) != std::string_view::npos) {
    bool starts = at == 0 || std::isspace(static_cast<unsigned char>(attrs[at - 1]));
    size_t eq = at + 2;
    while (eq < attrs.size() && attrs[eq] == ' ') ++eq;
    if (starts && eq < attrs.size() && attrs[eq] == '=') {
      size_t q = eq + 1;
      while (q < attrs.size() && attrs[q] == ' ') ++q;
      if (q < attrs.size() && (attrs[q] == '"' || attrs[q] == '\'')) {
        size_t end = attrs.find(attrs[q], q + 1);
        if (end != std::string_view::npos) return std::string(attrs.substr(q + 1, end - q - 1));
      }
    }
    at += 2;
  }
  return "";
}

// Skips a markup declaration starting at text[i] ("<?...?>", "<!--...-->", "<!DOCTYPE ...>",
// an internal subset in brackets included; its entities are never expanded). Returns the index
// after it, or npos when it is not closed.
size_t skip_declaration(std::string_view text, size_t i) {
  if (text.substr(i, 2) == "<?") {
    size_t e = text.find("?>", i + 2);
    return e == std::string_view::npos ? e : e + 2;
  }
  if (text.substr(i, 4) == "<!--") {
    size_t e = text.find("-->", i + 4);
    return e == std::string_view::npos ? e : e + 3;
  }
  size_t gt = text.find('>', i);
  size_t bracket = text.find('[', i);
  if (bracket != std::string_view::npos && bracket < gt) {
    size_t e = text.find("]>", bracket);
    return e == std::string_view::npos ? e : e + 2;
  }
  return gt == std::string_view::npos ? gt : gt + 1;
}

Tree build_tree(std::string_view text) {
  Tree t;
  if (text.size() > kMaxText) {
    text = text.substr(0, kMaxText);
    t.error = "output over 16 MiB, the rest ignored";
  }
  t.nodes.push_back(Element{});
  std::vector<size_t> stack = {0};
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '<') {
      size_t lt = text.find('<', i);
      if (lt == std::string_view::npos) lt = text.size();
      if (stack.size() > 1) append_decoded(&t.nodes[stack.back()].text, text.substr(i, lt - i));
      i = lt;
      continue;
    }
    if (text.substr(i, 2) == "<?" || text.substr(i, 2) == "<!") {
      i = skip_declaration(text, i);
      if (i == std::string_view::npos) break;
      continue;
    }
    size_t gt = text.find('>', i);
    if (gt == std::string_view::npos) break;
    std::string_view tag = text.substr(i + 1, gt - i - 1);
    i = gt + 1;
    if (!tag.empty() && tag.front() == '/') {
      std::string_view name = trim(tag.substr(1));
      size_t at = stack.size();
      while (at > 1 && t.nodes[stack[at - 1]].name != name) --at;
      if (at > 1) {
        if (at != stack.size() && t.error.empty())
          t.error = "unclosed <" + t.nodes[stack.back()].name + ">";
        stack.resize(at - 1);
      } else if (t.error.empty()) {
        t.error = "unexpected </" + std::string(name.substr(0, 64)) + ">";
      }
      continue;
    }
    bool empty = !tag.empty() && tag.back() == '/';
    if (empty) tag.remove_suffix(1);
    size_t name_end = 0;
    while (name_end < tag.size() && !std::isspace(static_cast<unsigned char>(tag[name_end]))) {
      ++name_end;
    }
    if (name_end == 0) continue;
    if (stack.size() > kMaxDepth) {
      t.error = "nested deeper than 64 elements";
      return t;
    }
    Element e;
    e.name = std::string(tag.substr(0, name_end));
    e.id = id_attribute(tag.substr(name_end));
    size_t index = t.nodes.size();
    t.nodes.push_back(std::move(e));
    t.nodes[stack.back()].children.push_back(index);
    if (!empty) stack.push_back(index);
  }
  if (stack.size() > 1 && t.error.empty()) {
    t.error = "cut short inside <" + t.nodes[stack.back()].name + ">";
  }
  return t;
}

// Reads values out of one element of a tree.
class View {
 public:
  View(const Tree* t, size_t index) : t_(t), i_(index) {}
  const Element& element() const { return t_->nodes[i_]; }
  // The first child element named `name`.
  std::optional<View> child(std::string_view name) const {
    for (size_t c : element().children) {
      if (t_->nodes[c].name == name) return View(t_, c);
    }
    return std::nullopt;
  }
  // Follows a path of child names.
  std::optional<View> at(std::initializer_list<std::string_view> path) const {
    std::optional<View> v = *this;
    for (std::string_view name : path) {
      if (!v) return std::nullopt;
      v = v->child(name);
    }
    return v;
  }
  std::string text() const { return std::string(trim(element().text)); }
  std::string text_at(std::initializer_list<std::string_view> path) const {
    auto v = at(path);
    return v ? v->text() : "";
  }
  bool has_children() const { return !element().children.empty(); }
  std::vector<View> children() const {
    std::vector<View> out;
    for (size_t c : element().children) out.emplace_back(t_, c);
    return out;
  }

 private:
  const Tree* t_;
  size_t i_;
};

// A number with an optional unit after it ("45 C", "16x", "67.03 W", "1980 MHz"); nullopt for
// "N/A", "[Not Supported]", "" and anything else.
std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || errno != 0 || !std::isfinite(v)) return std::nullopt;
  for (const char* p = end; *p; ++p) {
    if (!std::isalpha(static_cast<unsigned char>(*p)) && *p != ' ' && *p != '%')
      return std::nullopt;
  }
  return v;
}

std::optional<std::int64_t> count(const std::string& s) {
  auto v = number(s);
  if (!v || *v < 0 || *v != std::floor(*v) || *v > 9.0e18) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

std::optional<int> small_int(const std::string& s) {
  auto v = count(s);
  if (!v || *v > 1'000'000) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<bool> yes_no(const std::string& s) {
  if (s == "Yes") return true;
  if (s == "No") return false;
  return std::nullopt;
}

// The sum of the named counters that are numbers; nullopt when none is.
std::optional<std::int64_t> sum_of(const View& v, std::initializer_list<std::string_view> names) {
  std::optional<std::int64_t> total;
  for (std::string_view n : names) {
    auto c = v.child(n);
    if (!c) continue;
    auto x = count(c->text());
    if (x) total = total.value_or(0) + *x;
  }
  return total;
}

struct EccPair {
  std::optional<std::int64_t> corrected, uncorrected;
};

// One of <volatile>/<aggregate> of <ecc_errors>, in either layout.
EccPair ecc_counts(const std::optional<View>& section) {
  if (!section) return {};
  if (section->child("single_bit") || section->child("double_bit")) {
    return {count(section->text_at({"single_bit", "total"})),
            count(section->text_at({"double_bit", "total"}))};
  }
  EccPair p;
  p.corrected = sum_of(*section, {"sram_correctable", "dram_correctable"});
  // Driver 550+ on Hopper splits SRAM uncorrectable errors by how they were caught.
  p.uncorrected = section->child("sram_uncorrectable")
                      ? sum_of(*section, {"sram_uncorrectable", "dram_uncorrectable"})
                      : sum_of(*section, {"sram_uncorrectable_parity", "sram_uncorrectable_secded",
                                          "dram_uncorrectable"});
  return p;
}

// The reason's short name: "clocks_event_reason_hw_thermal_slowdown" -> "hw_thermal".
std::string reason_name(std::string_view tag) {
  for (std::string_view prefix : {"clocks_event_reason_", "clocks_throttle_reason_"}) {
    if (tag.substr(0, prefix.size()) == prefix) {
      tag.remove_prefix(prefix.size());
      break;
    }
  }
  for (std::string_view suffix : {"_slowdown", "_setting"}) {
    if (tag != "hw_slowdown" && tag.size() > suffix.size() &&
        tag.substr(tag.size() - suffix.size()) == suffix) {
      tag.remove_suffix(suffix.size());
    }
  }
  return std::string(tag);
}

std::optional<std::vector<std::string>> active_reasons(const View& gpu) {
  auto node = gpu.child("clocks_event_reasons");
  if (!node) node = gpu.child("clocks_throttle_reasons");
  if (!node || !node->has_children()) return std::nullopt;  // absent, or "N/A"
  std::vector<std::string> active;
  for (const View& r : node->children()) {
    if (r.text() == "Active") active.push_back(reason_name(r.element().name));
  }
  return active;
}

std::optional<double> power_draw(const View& gpu) {
  for (auto path : {std::initializer_list<std::string_view>{"gpu_power_readings", "power_draw"},
                    {"gpu_power_readings", "instant_power_draw"},
                    {"power_readings", "power_draw"}}) {
    if (auto v = number(gpu.text_at(path))) return v;
  }
  return std::nullopt;
}

GpuReading read_gpu(const View& gpu, int index) {
  GpuReading g;
  g.index = index;
  g.name = gpu.text_at({"product_name"});
  g.uuid = gpu.text_at({"uuid"});
  g.pci_bus_id = gpu.text_at({"pci", "pci_bus_id"});
  if (g.pci_bus_id.empty()) g.pci_bus_id = gpu.element().id;
  g.temperature_c = number(gpu.text_at({"temperature", "gpu_temp"}));
  g.sm_clock_mhz = number(gpu.text_at({"clocks", "sm_clock"}));
  g.max_sm_clock_mhz = number(gpu.text_at({"max_clocks", "sm_clock"}));
  EccPair vol = ecc_counts(gpu.at({"ecc_errors", "volatile"}));
  EccPair agg = ecc_counts(gpu.at({"ecc_errors", "aggregate"}));
  g.ecc_uncorrected = vol.uncorrected;
  g.ecc_corrected = vol.corrected;
  g.ecc_uncorrected_aggregate = agg.uncorrected;
  g.ecc_corrected_aggregate = agg.corrected;
  g.retired_pages_dbe =
      count(gpu.text_at({"retired_pages", "double_bit_retirement", "retired_count"}));
  g.retired_pages_pending = yes_no(gpu.text_at({"retired_pages", "pending_retirement"}));
  if (auto rows = gpu.child("remapped_rows")) {
    std::string pending = rows->text_at({"remapped_row_pending"});
    std::string failure = rows->text_at({"remapped_row_failure"});
    g.remapped_rows_pending = yes_no(pending.empty() ? rows->text_at({"pending"}) : pending);
    g.remapped_rows_failure = yes_no(failure.empty() ? rows->text_at({"failure"}) : failure);
    g.remapped_rows_uncorrectable = count(rows->text_at({"remapped_row_unc"}));
  }
  auto link = gpu.at({"pci", "pci_gpu_link_info"});
  if (link) {
    g.pcie_gen = small_int(link->text_at({"pcie_gen", "current_link_gen"}));
    g.pcie_gen_max = small_int(link->text_at({"pcie_gen", "max_link_gen"}));
    g.pcie_width = small_int(link->text_at({"link_widths", "current_link_width"}));
    g.pcie_width_max = small_int(link->text_at({"link_widths", "max_link_width"}));
  }
  g.throttle = active_reasons(gpu);
  g.power_w = power_draw(gpu);
  return g;
}

}  // namespace

std::vector<std::string> nvidia_smi_xml_arguments() {
  return {"-q", "-x"};
}

NvidiaSmiXml parse_nvidia_smi_xml(std::string_view text) {
  NvidiaSmiXml out;
  Tree tree = build_tree(text);
  out.error = tree.error;
  std::optional<View> log = View(&tree, 0).child("nvidia_smi_log");
  if (!log) {
    out.error = "not nvidia-smi XML (no <nvidia_smi_log>)";
    return out;
  }
  out.attached_gpus = small_int(log->text_at({"attached_gpus"}));
  out.driver_version = log->text_at({"driver_version"});
  for (const View& c : log->children()) {
    if (c.element().name != "gpu") continue;
    out.gpus.push_back(read_gpu(c, static_cast<int>(out.gpus.size())));
  }
  return out;
}

}  // namespace orch::agent
