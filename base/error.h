// Reckon's one error type, carried by Result<T> (Boost.Outcome).
//
// Codes are grouped by what the caller should do next, not by subsystem (see Abseil's
// status.h for the idea): a caller that only looks at action() still does the right thing.
//
//   action          codes                               what the caller does
//   kRetry          kUnavailable, kResourceExhausted,   try the same call again later, with
//                   kDeadlineExceeded                   backoff; nothing was changed
//   kDoNotRetry     kInvalidArgument, kNotFound,        the request is wrong; fix the request,
//                   kAlreadyExists, kPermissionDenied,  retrying it unchanged fails the same way
//                   kUnimplemented
//   kFixStateFirst  kConflict, kFailedPrecondition,     the world moved under the caller: reread
//                   kNondeterminism                     state (or fix code) and decide again
//   kBug            kInternal, kCorruption              a broken invariant; report it, stop
//
// Expected failures travel as values; exceptions are for bugs and are caught once at a
// process boundary. Error is a small value type; copying it copies the message.
#pragma once

// basic_result, not result.hpp: result.hpp adds Boost.System and boost::exception_ptr support,
// which Reckon does not use and which cost every file that includes this header about 1.3 s of
// compilation (docs/ARCHITECTURE.md, decision 55). Result<T> is the same type either way.
#include <boost/outcome/basic_result.hpp>
#include <boost/outcome/policy/terminate.hpp>
#include <boost/outcome/try.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace reckon {

enum class Errc {
  kUnavailable,
  kResourceExhausted,
  kDeadlineExceeded,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kPermissionDenied,
  kUnimplemented,
  kConflict,
  kFailedPrecondition,
  kNondeterminism,
  kInternal,
  kCorruption,
  kUnauthenticated,  // no credential, or one the server does not accept (docs/SECURITY.md)
  // A write by a server that no longer owns the data it wrote to (cluster mode: another server
  // took the shard's lease over, storage/shard_fence.h): nothing was written; the owner decides.
  kFenced,
  // A request for a workflow another server owns (cluster mode): nothing was done; send it to
  // the owner (the wire error carries its address). Clients follow it by themselves.
  kNotOwner,
};

enum class ErrorAction { kRetry, kDoNotRetry, kFixStateFirst, kBug };

// Stable lower_snake name of a code ("invalid_argument"), used in logs, traces and the wire.
std::string_view ErrcName(Errc code);
std::string_view ErrorActionName(ErrorAction action);
ErrorAction ActionOf(Errc code);
// The code whose ErrcName is `name`; nullopt for a name this build does not know.
std::optional<Errc> ErrcFromName(std::string_view name);

class Error {
 public:
  Error(Errc code, std::string message) : code_(code), message_(std::move(message)) {}

  Errc code() const { return code_; }
  ErrorAction action() const { return ActionOf(code_); }
  const std::string& message() const { return message_; }

  // "invalid_argument: step 'refund': field 'amount_cents' must be an integer".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>", same code.
  Error WithContext(std::string_view context) const;

  // kNotOwner: where the request should go instead (HOST:PORT of the owning server; empty
  // when unknown). Carried over the wire (protocol/reckon.capnp, Error.redirect).
  const std::string& redirect() const { return redirect_; }
  Error WithRedirect(std::string address) const {
    Error out = *this;
    out.redirect_ = std::move(address);
    return out;
  }

  friend bool operator==(const Error&, const Error&) = default;

 private:
  Errc code_;
  std::string message_;
  std::string redirect_;
};

template <class T>
using Result = boost::outcome_v2::basic_result<T, Error, boost::outcome_v2::policy::terminate>;

// Result<void> that carries success.
inline Result<void> Ok() { return boost::outcome_v2::success(); }

// Shorthands: `return Err(Errc::kNotFound, "no workflow 'x'");`
inline Error Err(Errc code, std::string message) { return Error(code, std::move(message)); }

}  // namespace reckon

// RECKON_TRY(auto x, Expr()) / RECKON_TRY(Expr()): propagate the error of a Result.
#define RECKON_TRY BOOST_OUTCOME_TRY
// The same inside a coroutine (co_return instead of return).
#define RECKON_CO_TRY BOOST_OUTCOME_CO_TRY
