#include "scheduler/common/result.h"

namespace orch {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid:
      return "invalid";
    case ErrorKind::not_found:
      return "not_found";
    case ErrorKind::conflict:
      return "conflict";
    case ErrorKind::forbidden:
      return "forbidden";
    case ErrorKind::unreachable:
      return "unreachable";
    case ErrorKind::unsupported:
      return "unsupported";
    case ErrorKind::misconfigured:
      return "misconfigured";
    case ErrorKind::io:
      return "io";
    case ErrorKind::internal:
      return "internal";
  }
  return "internal";
}

}  // namespace orch
