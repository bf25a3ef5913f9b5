#include "reckon/base/error.h"

namespace reckon {

std::string_view ErrcName(Errc code) {
  switch (code) {
    case Errc::kUnavailable: return "unavailable";
    case Errc::kResourceExhausted: return "resource_exhausted";
    case Errc::kDeadlineExceeded: return "deadline_exceeded";
    case Errc::kInvalidArgument: return "invalid_argument";
    case Errc::kNotFound: return "not_found";
    case Errc::kAlreadyExists: return "already_exists";
    case Errc::kPermissionDenied: return "permission_denied";
    case Errc::kUnimplemented: return "unimplemented";
    case Errc::kConflict: return "conflict";
    case Errc::kFailedPrecondition: return "failed_precondition";
    case Errc::kNondeterminism: return "nondeterminism";
    case Errc::kInternal: return "internal";
    case Errc::kCorruption: return "corruption";
    case Errc::kUnauthenticated: return "unauthenticated";
    case Errc::kFenced: return "fenced";
    case Errc::kNotOwner: return "not_owner";
  }
  return "unknown_error_code";
}

std::optional<Errc> ErrcFromName(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(Errc::kNotOwner); ++i) {
    if (ErrcName(static_cast<Errc>(i)) == name) return static_cast<Errc>(i);
  }
  return std::nullopt;
}

std::string_view ErrorActionName(ErrorAction action) {
  switch (action) {
    case ErrorAction::kRetry: return "retry";
    case ErrorAction::kDoNotRetry: return "do_not_retry";
    case ErrorAction::kFixStateFirst: return "fix_state_first";
    case ErrorAction::kBug: return "bug";
  }
  return "unknown_action";
}

ErrorAction ActionOf(Errc code) {
  switch (code) {
    case Errc::kUnavailable:
    case Errc::kResourceExhausted:
    case Errc::kDeadlineExceeded:
      return ErrorAction::kRetry;
    case Errc::kInvalidArgument:
    case Errc::kNotFound:
    case Errc::kAlreadyExists:
    case Errc::kPermissionDenied:
    case Errc::kUnimplemented:
    case Errc::kUnauthenticated:
      return ErrorAction::kDoNotRetry;
    case Errc::kConflict:
    case Errc::kFailedPrecondition:
    case Errc::kFenced:
    case Errc::kNotOwner:
    case Errc::kNondeterminism:
      return ErrorAction::kFixStateFirst;
    case Errc::kInternal:
    case Errc::kCorruption:
      return ErrorAction::kBug;
  }
  return ErrorAction::kBug;
}

std::string Error::ToString() const {
  std::string out(ErrcName(code_));
  out += ": ";
  out += message_;
  return out;
}

Error Error::WithContext(std::string_view context) const {
  std::string message(context);
  message += ": ";
  message += message_;
  return Error(code_, std::move(message)).WithRedirect(redirect_);
}

}  // namespace reckon
