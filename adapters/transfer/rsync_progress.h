#pragma once
// Reading `rsync --info=progress2 --no-inc-recursive` as it runs. rsync rewrites one status
// line while it copies: each record starts with '\r' (the last one of the run ends with '\n'),
// e.g.
//
//        32,768,000  62%   31.25MB/s    0:00:01 (xfr#1, to-chk=0/1)
//
// bytes so far in this run (thousands separated by ','), percent of the whole file list
// (files already up to date count as not done, so a run that copies half the files ends at
// 50%), the recent rate and the time left (or elapsed, on a file's last line). The rate's
// units are binary: rsync divides bytes/s by 1024 and prints kB/s, then MB/s above 1024 kB/s
// and GB/s above 1024 MB/s (progress.c, unchanged from 3.0 to 3.5). Pure: no I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace orch::transfer {

struct RsyncProgressLine {
  std::uint64_t bytes = 0;      // bytes this run has gone through (a resumed file counts whole)
  int percent = 0;              // 0..100
  double rate_bytes_per_s = 0;  // "31.25MB/s" -> 31.25 * 1024 * 1024
  int files_to_check = -1;      // "to-chk=3/7" -> 3, 7; -1 when the line has none
  int files_total = -1;
};

// One record, surrounding blanks allowed. nullopt for anything else (error messages, the
// --stats block, a record cut short).
std::optional<RsyncProgressLine> parse_progress_line(std::string_view record);

// "31.25MB/s" -> bytes per second; nullopt when it is not a rate rsync prints.
std::optional<double> parse_rsync_rate(std::string_view text);

// Feeds on output as it arrives, in chunks cut anywhere. Since a record ends only when the next
// one starts, the newest record is read as soon as it parses (the fields come in order, and a
// record cut short within them does not parse) and read again once the next '\r' or '\n'
// arrives; so a killed rsync's last words count too, and a record split across reads is
// never read as a smaller number.
class RsyncProgressParser {
 public:
  // Returns true when the chunk brought a new progress record.
  bool feed(std::string_view chunk);
  // The newest progress record, if any yet.
  const std::optional<RsyncProgressLine>& latest() const { return latest_; }

 private:
  std::string pending_;  // the start of a record whose end has not arrived
  std::optional<RsyncProgressLine> latest_;
};

}  // namespace orch::transfer
