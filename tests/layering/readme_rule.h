#pragma once
// What a folder's README.md says its files may include (the layering check, README.md here).
//
// The rule is the first sentence after "May include (checked by `make test`):": the backticked
// names up to the first '.' that is followed by a space, a line's end or the text's end and is
// not inside backticks (so `scheduler/transfer_port.h` does not end it). Names after that
// sentence are prose and allow nothing. The sentence also ends at a line starting with
// "Never includes:".
//
// A line starting with "Never includes:" (in the rule's paragraph or anywhere else in the
// README) names, in its first sentence, what the folder's files may never include: a header, or
// a folder and everything under it. Such a name is refused whatever the rule allows.
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace layering {

inline constexpr std::string_view kRuleMarker = "May include (checked by `make test`):";
inline constexpr std::string_view kNeverMarker = "Never includes:";

struct Rule {
  std::set<std::string> allowed;  // folders, single headers, or "*"
  std::set<std::string> never;    // headers, or folders with everything under them
  std::string readme;             // where it was read (relative to the root), for messages
};

// `text` up to its first sentence end ('.' then a space or the end, outside backticks).
std::string first_sentence(std::string_view text);

// The backticked names of `text`, in order.
std::set<std::string> backticked(std::string_view text);

// The rule of `readme`; nullopt when it has no line with kRuleMarker.
std::optional<Rule> read_rule(const std::filesystem::path& readme,
                              const std::filesystem::path& root);

enum class Verdict { allowed, not_allowed, forbidden };

// May a file of `own_folder` include `include` (a path such as "scheduler/store/store.h")?
// A name under "Never includes:" is forbidden first; then the own folder, `*`, the header
// itself or its folder allow it.
Verdict judge(const Rule& rule, const std::string& own_folder, const std::string& include);

}  // namespace layering
