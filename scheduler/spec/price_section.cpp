#include "scheduler/spec/price_section.h"

#include <algorithm>
#include <array>
#include <chrono>

#include "scheduler/spec/time_window.h"

namespace orch {
namespace {

using yaml::MapView;

constexpr std::string_view kPriceExample =
    "a map such as {per_gpu_hour: 2.10, currency: USD, windows: [{hours: \"22:00-06:00\", "
    "per_gpu_hour: 1.40}], contract: {start: 2026-12-01, end: 2027-03-01}}";
constexpr std::string_view kWindowExample =
    "a map such as {hours: \"22:00-06:00\", per_gpu_hour: 1.40}";
// A price far above any GPU-hour's: a larger one is a typo (cents for units, a total).
constexpr double kMaxPerGpuHour = 1'000'000;

bool is_currency(std::string_view s) {
  if (s.size() != 3) return false;
  for (char ch : s) {
    if (ch < 'A' || ch > 'Z') return false;
  }
  return true;
}
constexpr yaml::StringRule kCurrency{is_currency, "three capital letters, such as USD or EUR"};

// The minutes of the day a window covers, to find two windows that overlap.
std::array<bool, 1440> minutes_of(const PriceWindow& w) {
  std::array<bool, 1440> out{};
  for (int m = 0; m < 1440; ++m) {
    out[m] = w.from_min < w.to_min ? (m >= w.from_min && m < w.to_min)
                                   : (m >= w.from_min || m < w.to_min);
  }
  return out;
}

void read_window(yaml::Reader& r, const YAML::Node& item, std::size_t i, PriceSpec& out) {
  const std::string context = "price.windows[" + std::to_string(i) + "]";
  MapView w(r, item, context, {"hours", "per_gpu_hour"}, kWindowExample);
  if (r.failed()) return;
  w.require("hours", "hours: a UTC window such as \"22:00-06:00\"");
  w.require("per_gpu_hour", "per_gpu_hour: the price in that window, such as 1.40");
  PriceWindow window;
  w.read_string("hours", window.hours, yaml::kNonEmpty, kWindowExpected);
  w.read_number("per_gpu_hour", window.per_gpu_hour, {0.0, false, kMaxPerGpuHour},
                "the price per GPU-hour in that window, such as 1.40");
  if (r.failed()) return;
  auto parsed = parse_window(window.hours);
  if (!parsed.ok()) {
    r.fail(w.value_position("hours"), context + ": " + parsed.error().message, kWindowExpected);
    return;
  }
  window.from_min = parsed->start_min;
  window.to_min = parsed->end_min;
  const auto mine = minutes_of(window);
  for (const PriceWindow& other : out.windows) {
    const auto theirs = minutes_of(other);
    for (int m = 0; m < 1440; ++m) {
      if (!mine[m] || !theirs[m]) continue;
      r.fail(w.value_position("hours"),
             context + ": hours \"" + window.hours + "\" overlap window \"" + other.hours +
                 "\": a minute has one price",
             "windows that do not overlap");
      return;
    }
  }
  out.windows.push_back(std::move(window));
}

void read_windows(const MapView& price, PriceSpec& out) {
  yaml::Reader& r = price.reader();
  const yaml::Field* f = price.find("windows");
  if (!f || f->value.IsNull()) return;
  if (!f->value.IsSequence()) {
    r.fail(price.value_position("windows"),
           "\"price.windows\" must be a list, got " + yaml::describe(f->value),
           "a list of " + std::string(kWindowExample));
    return;
  }
  for (std::size_t i = 0; i < f->value.size() && !r.failed(); ++i) {
    read_window(r, f->value[i], i, out);
  }
}

void read_contract(const MapView& price, PriceSpec& out) {
  MapView c = price.child("contract", "price.contract", {"start", "end"},
                          "a map such as {start: 2026-12-01, end: 2027-03-01}");
  if (!price.has("contract") || price.reader().failed()) return;
  yaml::Reader& r = price.reader();
  c.require("start", "start: the first day of the reservation, such as 2026-12-01");
  c.require("end", "end: the day after its last, such as 2027-03-01");
  c.read_string("start", out.contract_start, yaml::kNonEmpty, "a date such as 2026-12-01");
  c.read_string("end", out.contract_end, yaml::kNonEmpty, "a date such as 2027-03-01");
  if (r.failed()) return;
  for (const char* key : {"start", "end"}) {
    const bool start = std::string_view(key) == "start";
    const std::string& text = start ? out.contract_start : out.contract_end;
    auto ms = utc_date_ms(text);
    if (!ms) {
      r.fail(c.value_position(key),
             "\"price.contract." + std::string(key) + "\" must be a date YYYY-MM-DD, got \"" +
                 text + "\"",
             "a date such as 2026-12-01");
      return;
    }
    (start ? out.contract_start_ms : out.contract_end_ms) = *ms;
  }
  if (*out.contract_end_ms <= *out.contract_start_ms) {
    r.fail(c.value_position("end"),
           "\"price.contract.end\" (" + out.contract_end + ") must be after its start (" +
               out.contract_start + ")",
           "the day after the reservation's last, such as 2027-03-01");
  }
}

// A fleet prices in one currency: the first priced cluster's.
void check_currency(const MapView& price, const ClusterSpec& cluster,
                    const std::vector<ClusterSpec>& earlier) {
  const ClusterSpec* other = nullptr;
  const std::string why = currency_conflict(cluster, earlier, &other);
  if (why.empty()) return;
  price.reader().fail(price.has("currency") ? price.value_position("currency") : price.position(),
                      why, "currency: " + other->price.currency + " on every priced cluster");
}

constexpr std::string_view kObjectiveExpected =
    "goodput (the most useful FLOP/s) or goodput_per_cost (the most per unit of money)";
bool is_objective(std::string_view s) {
  return s == "goodput" || s == "goodput_per_cost";
}
constexpr yaml::StringRule kObjective{is_objective, "goodput or goodput_per_cost"};

// Past the budget the team's jobs wait ("hold") or run at a priority class it may use.
void check_over(const MapView& budget, const std::string& team, const SchedulingSpec& spec,
                const std::string& over) {
  if (over == "hold") return;
  yaml::Reader& r = budget.reader();
  std::vector<std::string_view> names{"hold"};
  for (const auto& [name, value] : spec.priority_classes) names.push_back(name);
  if (!spec.priority_classes.count(over)) {
    std::string why = "team \"" + team + "\": budget.over names \"" + over +
                      "\", which is neither hold nor a priority class of this file";
    if (auto near = yaml::nearest(over, names))
      why += " (did you mean \"" + std::string(*near) + "\"?)";
    r.fail(budget.value_position("over"), why, "one of " + yaml::join(names, ", "));
    return;
  }
  auto only = spec.class_teams.find(over);
  if (only == spec.class_teams.end()) return;
  std::vector<std::string_view> allowed;
  for (const std::string& t : only->second) {
    if (t == team) return;
    allowed.push_back(t);
  }
  r.fail(budget.value_position("over"),
         "team \"" + team + "\": budget.over names priority class \"" + over +
             "\", which only teams " + yaml::join(allowed, ", ") + " may use",
         "hold, or a class open to team " + team);
}

void read_budget(MapView& team, const std::string& name, const SchedulingSpec& spec,
                 const std::vector<ClusterSpec>& clusters, TeamQuota::Budget& out) {
  MapView b = team.child("budget", "team \"" + name + "\" budget", {"money", "gpu_hours", "over"},
                         "a map such as {money: 50000, over: hold}");
  yaml::Reader& r = team.reader();
  if (!team.has("budget") || r.failed()) return;
  b.read_number("money", out.money, {0.0, true},
                "the team's spend per calendar month (UTC) in the fleet's currency, such as 50000");
  b.read_number("gpu_hours", out.gpu_hours, {0.0, true},
                "the team's GPU-hours per calendar month (UTC), such as 20000");
  b.read_string("over", out.over, yaml::kName,
                "hold (new jobs wait) or a priority class to run them at past the budget");
  if (r.failed()) return;
  if (out.money.has_value() == out.gpu_hours.has_value()) {
    r.fail(out.money ? b.key_position("gpu_hours") : b.position(),
           "team \"" + name + "\": a budget gives exactly one of money and gpu_hours, got " +
               (out.money ? "both" : "neither"),
           "{money: 50000} or {gpu_hours: 20000}");
    return;
  }
  const bool priced = std::any_of(clusters.begin(), clusters.end(),
                                  [](const ClusterSpec& c) { return c.price.configured; });
  if (out.money && !priced) {
    r.fail(b.key_position("money"),
           "team \"" + name +
               "\": a budget in money needs prices, and no cluster of this file "
               "has one",
           "price: {per_gpu_hour: ...} on the clusters, or budget: {gpu_hours: ...}");
    return;
  }
  check_over(b, name, spec, out.over);
  out.configured = !r.failed();
}

}  // namespace

void read_placement(const MapView& file, SchedulingSpec& out) {
  MapView p = file.child("placement", "placement", {"objective"},
                         "a map such as {objective: goodput_per_cost}");
  p.read_string("objective", out.objective, kObjective, kObjectiveExpected);
}

void read_team_money(MapView& team, const std::string& name, const SchedulingSpec& spec,
                     const std::vector<ClusterSpec>& clusters, TeamQuota& out) {
  if (team.has("objective")) {
    std::string objective;
    team.read_string("objective", objective, kObjective, kObjectiveExpected);
    if (team.reader().failed()) return;
    out.objective = objective;
  }
  read_budget(team, name, spec, clusters, out.budget);
}

void read_price(const MapView& entry, ClusterSpec& cluster,
                const std::vector<ClusterSpec>& earlier) {
  if (!entry.has("price")) return;
  MapView price = entry.child("price", "price", {"per_gpu_hour", "currency", "windows", "contract"},
                              kPriceExample);
  yaml::Reader& r = entry.reader();
  if (r.failed()) return;
  PriceSpec& out = cluster.price;
  price.require("per_gpu_hour", "per_gpu_hour: the price of one GPU for one hour, such as 2.10");
  price.read_number("per_gpu_hour", out.per_gpu_hour, {0.0, false, kMaxPerGpuHour},
                    "the price of one GPU for one hour, such as 2.10");
  price.read_string("currency", out.currency, kCurrency, "a currency code such as USD");
  if (r.failed()) return;
  read_windows(price, out);
  if (!r.failed()) read_contract(price, out);
  if (r.failed()) return;
  out.configured = true;
  check_currency(price, cluster, earlier);
}

std::string currency_conflict(const ClusterSpec& cluster, const std::vector<ClusterSpec>& others,
                              const ClusterSpec** with) {
  if (!cluster.price.configured) return "";
  for (const ClusterSpec& other : others) {
    if (!other.price.configured || other.price.currency == cluster.price.currency) continue;
    if (with != nullptr) *with = &other;
    return "cluster \"" + cluster.name + "\" is priced in " + cluster.price.currency +
           " and cluster \"" + other.name + "\" in " + other.price.currency +
           ": a fleet's prices are in one currency";
  }
  return "";
}

std::optional<std::int64_t> utc_date_ms(const std::string& text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
  }
  const std::chrono::year_month_day day{
      std::chrono::year{std::stoi(text.substr(0, 4))},
      std::chrono::month{static_cast<unsigned>(std::stoi(text.substr(5, 2)))},
      std::chrono::day{static_cast<unsigned>(std::stoi(text.substr(8, 2)))}};
  if (!day.ok()) return std::nullopt;
  const auto since_epoch = std::chrono::sys_days{day}.time_since_epoch();
  return std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count();
}

}  // namespace orch
