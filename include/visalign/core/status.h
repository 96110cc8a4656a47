// Status and Result<T>: how visalign reports expected failures across module boundaries.
//
// A Status is OK or carries a code and three parts that every user-facing error has:
//   what     - what is wrong, with the offending value   ("invalid color \"#GGHHII\"")
//   where    - the file/line/field/argument it came from ("argument COLOR", "manifest.jsonl:12 field targets")
//   expected - what would have been accepted            ("#RRGGBB, #RGB, rgb(r, g, b), ...")
// The CLI prints ToString() as `error: <what> (<where>): <expected>` and exits with code 2
// for user errors (everything but kInternal and kInterrupted).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace visalign {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad user input: arguments, file contents, configuration
  kNotFound,         // a file, item, model or key that does not exist
  kIoError,          // the operating system refused a read/write
  kCorrupt,          // a file that exists but is malformed or truncated
  kUnsupported,      // valid input that visalign deliberately does not handle
  kUnavailable,      // a remote service failed (may succeed on retry)
  kInterrupted,      // stopped by a signal; work so far is kept
  kInternal,         // a bug in visalign
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string what, std::string where = {}, std::string expected = {})
      : code_(code), what_(std::move(what)), where_(std::move(where)), expected_(std::move(expected)) {}

  static Status Ok() { return {}; }
  static Status InvalidArgument(std::string what, std::string where = {}, std::string expected = {}) {
    return {StatusCode::kInvalidArgument, std::move(what), std::move(where), std::move(expected)};
  }
  static Status NotFound(std::string what, std::string where = {}, std::string expected = {}) {
    return {StatusCode::kNotFound, std::move(what), std::move(where), std::move(expected)};
  }
  static Status IoError(std::string what, std::string where = {}, std::string expected = {}) {
    return {StatusCode::kIoError, std::move(what), std::move(where), std::move(expected)};
  }
  static Status Corrupt(std::string what, std::string where = {}, std::string expected = {}) {
    return {StatusCode::kCorrupt, std::move(what), std::move(where), std::move(expected)};
  }
  static Status Unsupported(std::string what, std::string where = {}, std::string expected = {}) {
    return {StatusCode::kUnsupported, std::move(what), std::move(where), std::move(expected)};
  }
  static Status Unavailable(std::string what, std::string where = {}, std::string expected = {}) {
    return {StatusCode::kUnavailable, std::move(what), std::move(where), std::move(expected)};
  }
  static Status Interrupted(std::string what) { return {StatusCode::kInterrupted, std::move(what)}; }
  static Status Internal(std::string what) { return {StatusCode::kInternal, std::move(what)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& what() const { return what_; }
  const std::string& where() const { return where_; }
  const std::string& expected() const { return expected_; }

  // Returns a copy whose `where` is prefixed by `outer` ("manifest.jsonl:3" + "field targets").
  Status WithContext(const std::string& outer) const;
  // "<what> (<where>): <expected>", omitting empty parts: always one line of printable text of at
  // most 2000 bytes, whatever untrusted bytes a message carries (control bytes escaped, a part
  // longer than its share cut with "... (N bytes)": EscapeControlBytes in core/untrusted.h).
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string what_, where_, expected_;
};

namespace internal {
// The Status a Result built from an OK Status holds instead: kInternal, so that ok() and
// status().ok() never disagree and VISALIGN_ASSIGN_OR_RETURN cannot pass a failure on as success.
Status OkStatusWithoutValue();
// value() of a Result holding an error: prints "visalign: Result::value() on an error: <status>"
// to stderr and aborts (a bug in the caller, who must test ok() first).
[[noreturn]] void DieOnValueOfError(const Status& status);
}  // namespace internal

// Result<T> holds a T or a non-OK Status.
// Invariants: ok() == status().ok(); a Result is never built from an OK Status (that becomes
// kInternal, and asserts in debug builds); value() of an error aborts with status().ToString().
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}                // NOLINT
  Result(Status status) : v_(NotOk(std::move(status))) {}  // NOLINT
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(v_);
  }
  // Of a temporary Result the value is moved out, not referred to, so that
  // `for (auto& x : Load().value())` and `*Load()` never refer to a destroyed Result.
  T& value() & { return Checked(), std::get<T>(v_); }
  const T& value() const& { return Checked(), std::get<T>(v_); }
  T value() && { return Checked(), std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T operator*() && { return std::move(*this).value(); }

 private:
  static Status NotOk(Status status) {
    assert(!status.ok() && "Result built from an OK Status");
    return status.ok() ? internal::OkStatusWithoutValue() : std::move(status);
  }
  void Checked() const {
    if (!ok()) internal::DieOnValueOfError(std::get<Status>(v_));
  }
  std::variant<T, Status> v_;
};

}  // namespace visalign

// Propagates a non-OK Status from an expression returning Status.
#define VISALIGN_RETURN_IF_ERROR(expr) \
  do {                                 \
    ::visalign::Status _st = (expr);   \
    if (!_st.ok()) return _st;         \
  } while (0)

#define VISALIGN_CONCAT_INNER(a, b) a##b
#define VISALIGN_CONCAT(a, b) VISALIGN_CONCAT_INNER(a, b)
// Declares `lhs` from a Result<T> expression, or returns its Status.
#define VISALIGN_ASSIGN_OR_RETURN(lhs, expr) VISALIGN_ASSIGN_OR_RETURN_IMPL(VISALIGN_CONCAT(_res_, __LINE__), lhs, expr)
#define VISALIGN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()
