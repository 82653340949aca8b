#pragma once
// Errors a user or a remote system can cause are values, not exceptions: every fallible
// operation returns Result<T>. The ErrorKind lets callers (REST, CLI, site workers) react
// without parsing messages; the message is for a person and says what to do.

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace orch {

enum class ErrorKind {
  invalid,      // bad input (spec, request body, flag): 400/422, CLI exit 2
  not_found,    // unknown id or name: 404
  conflict,     // illegal state transition, duplicate: 409
  forbidden,    // the caller may not do this (another user's job): 403
  unreachable,  // a site did not answer: the site is suspect, not the job
  unsupported,  // the provider cannot do this
  // the server's own configuration of a site is wrong (its SSH key file, Kubernetes
  // credentials, storage root): the site and the job are not at fault, and a launch that meets
  // it spends no restart (docs/health.md, "cluster check")
  misconfigured,
  io,        // local file/database failure
  internal,  // a bug; still reported, never a crash
};

const char* to_string(ErrorKind kind);

struct Error {
  ErrorKind kind = ErrorKind::internal;
  std::string message;
  // For an error about a submitted document found after parsing (an unknown cluster, a class
  // the team may not use): the key it concerns, "placement.allowed[1]" ("" for none), so that
  // whoever holds the document can say where (scheduler/spec/spec_position.h).
  std::string where = {};
};

inline Error make_error(ErrorKind kind, std::string message) {
  return Error{kind, std::move(message)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<T>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(v_);
  }
  // By value, so `for (auto& x : f().value())` does not dangle.
  T value() && {
    assert(ok());
    return std::get<T>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<Error>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success carries nothing.
struct Ok {};
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Ok) {}  // NOLINT(google-explicit-constructor)
  Result(Error error)
      : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    assert(!ok_);
    return error_;
  }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace orch
