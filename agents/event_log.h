#pragma once
// The agent's event file: JSON lines appended with O_APPEND, one write() per record, so a
// reader never sees half a line. Records that must survive a crash of the node (start, exit,
// hang, checkpoint) are fsynced; frequent advisory ones (progress, heartbeat) are not, so that a
// slow shared filesystem cannot stall the loop that relays the job's output.

#include <functional>
#include <string>

namespace orch::agent {

class EventLog {
 public:
  EventLog() = default;
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Opens (creating) the file for appending; false with *error on failure.
  bool open(const std::string& path, std::string* error);
  // Appends line + "\n"; durable: fsync after. A failure is reported once on stderr and the
  // agent carries on (the job must not die because its record could not be written).
  void append(const std::string& line, bool durable);
  // Every line appended from now on goes through this first (the live watch adds the GPU fault
  // to every record after it, and its readings to heartbeats: agents/live_watch.h).
  void set_decorator(std::function<std::string(const std::string&)> decorate) {
    decorate_ = std::move(decorate);
  }
  // Every line appended from now on (decorated, without its newline) is also handed to this
  // after it is written (the push home, agents/push_sender.h).
  void set_observer(std::function<void(const std::string&)> observe) {
    observe_ = std::move(observe);
  }

 private:
  int fd_ = -1;
  std::string path_;
  bool warned_ = false;
  std::function<std::string(const std::string&)> decorate_;
  std::function<void(const std::string&)> observe_;
};

}  // namespace orch::agent
