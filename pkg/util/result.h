#pragma once
// Result<T>: a value or the Error that explains why there is none. Fallible operations (decode,
// configuration, I/O) return it; scheduling outcomes use framework::Status instead.
// Errors carry an Abseil-style canonical code so callers can decide whether retrying helps.

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace berth::util {

enum class ErrorCode {
  InvalidArgument,  // the input is wrong; retrying the same input will not help
  NotFound,
  AlreadyExists,
  FailedPrecondition,  // the system is not in a state for this; fix the state first
  Aborted,        // a concurrency conflict (e.g. a resourceVersion mismatch); retry the whole step
  Unavailable,    // probably transient; retry with backoff
  Unimplemented,  // a valid request that berth does not support
  Internal,
};

std::string_view errorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::Internal;
  std::string message;

  // Returns the same error with "prefix: " in front of the message, to add the object or field.
  [[nodiscard]] Error wrap(std::string_view prefix) const;
};

inline Error invalidArgument(std::string message) {
  return Error{ErrorCode::InvalidArgument, std::move(message)};
}

// E is the error type: util::Error by default; a layer whose errors carry more (the embedded API
// server's ApiError renders as a metav1.Status) instantiates Result<T, ApiError>.
template <typename T, typename E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(E error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const E& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, E> v_;
};

// Result<void, E>: success, or an E.
template <typename E>
class [[nodiscard]] Result<void, E> {
 public:
  // clang-tidy cannot see that an empty error (for ApiFailure, a null nlohmann::json) never throws.
  Result() = default;                                        // NOLINT(bugprone-exception-escape)
  Result(E error) : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const E& error() const { return error_; }
  void ignore() const {}

 private:
  E error_{};
  bool ok_ = true;
};

}  // namespace berth::util
