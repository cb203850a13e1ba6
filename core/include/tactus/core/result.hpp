// Result<T>: a value or an error with a code and a message (std::expected is not in GCC 12's C++20).
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace tactus {

/// What kind of failure an Error describes; shared by every module.
enum class ErrorCode {
  kBadParameter,   ///< a caller passed a value that is out of range or malformed
  kParse,          ///< input text (YAML, schedule file, command line) could not be read
  kValidation,     ///< input was read but breaks a rule of the model
  kVerification,   ///< a finished schedule breaks an invariant
  kIncompatible,   ///< a file or segment of another format version
  kNotFound,       ///< a named thing does not exist
  kAlreadyExists,  ///< a named thing exists already (duplicate, second master)
  kInvalidState,   ///< call made at the wrong time
  kTimeout,        ///< a wait ran past its limit
  kIo,             ///< a file or OS call failed
  kInfeasible,     ///< no schedule fits (e.g. longer than its hyperepoch)
  kPeerDied,       ///< another process of the run died
  kInternal,       ///< a bug of ours
};

/// Lower-case name of an error code, for messages.
const char* errorCodeName(ErrorCode code);

/// An error: a code and a message that says what is wrong and where.
struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

/// Prints `error` on stderr, with how to check a Result, and aborts: what value() does on an error.
[[noreturn]] void abortOnErrorValue(const Error& error);

/// Makes an Error; reads well at return sites: `return fail(ErrorCode::kParse, msg);`
inline Error fail(ErrorCode code, std::string message) { return Error{code, std::move(message)}; }

/// A value of type T or an Error, named like std::expected. value() (and `*`, `->`) of an error
/// prints the error on stderr and aborts: check first (`if (!r) ... r.error().message`) where an
/// error can happen at run time.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    check();
    return std::get<0>(state_);
  }
  const T& value() const& {
    check();
    return std::get<0>(state_);
  }
  T&& value() && {
    check();
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(state_); }

 private:
  void check() const {
    if (!has_value()) abortOnErrorValue(std::get<1>(state_));  // the caller did not check
  }
  std::variant<T, Error> state_;
};

/// Result without a value: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design
  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace tactus
