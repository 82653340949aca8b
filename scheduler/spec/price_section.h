#pragma once
// A cluster's `price:` in the clusters file (docs/config.md "Prices", issue 45):
//   price: {per_gpu_hour: 2.10, currency: USD,
//           windows: [{hours: "22:00-06:00", per_gpu_hour: 1.40}],
//           contract: {start: 2026-12-01, end: 2027-03-01}}
// checked as the rest of the file is (file:line:col), into PriceSpec (model/price.h). A fleet
// prices in one currency: a cluster whose currency differs from an earlier priced one is refused,
// naming both. Also the other keys of issue 45 that speak of money: a team's `budget:` and
// `objective:` and the fleet's `placement: {objective: ...}`.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// entry: one cluster's map; earlier: the clusters of the file read before it (the currency check).
void read_price(const yaml::MapView& entry, ClusterSpec& cluster,
                const std::vector<ClusterSpec>& earlier);

// Why `cluster` may not join `others`: it is priced in another currency than a priced one of
// them ("cluster \"beta\" is priced in EUR and cluster \"alpha\" in USD: ..."); "" when it may.
// `with`, when given, is set to that other cluster. Also for clusters added to a running server.
std::string currency_conflict(const ClusterSpec& cluster, const std::vector<ClusterSpec>& others,
                              const ClusterSpec** with = nullptr);

// `placement: {objective: goodput | goodput_per_cost}` of the file.
void read_placement(const yaml::MapView& file, SchedulingSpec& out);

// A team's `objective:` and `budget: {money: 50000 | gpu_hours: 20000, over: hold | <class>}`:
// exactly one of money and gpu_hours, money only where some cluster has a price, `over` a
// priority class of `spec` that the team may use. team: the team's map, read with those keys.
void read_team_money(yaml::MapView& team, const std::string& name, const SchedulingSpec& spec,
                     const std::vector<ClusterSpec>& clusters, TeamQuota& out);

// "2026-12-10" as the UTC midnight that starts that day; nullopt unless a real date.
std::optional<std::int64_t> utc_date_ms(const std::string& text);

}  // namespace orch
