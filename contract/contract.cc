#include "reckon/contract/contract.h"

#include <cmath>
#include <utility>

namespace reckon {
namespace {

constexpr std::pair<ReconcileMode, std::string_view> kReconcileModes[] = {
    {ReconcileMode::kUnset, "unset"},
    {ReconcileMode::kLookup, "lookup"},
    {ReconcileMode::kNeedsHuman, "needs_human"},
};

}  // namespace

std::string_view ReconcileModeName(ReconcileMode mode) {
  for (const auto& [value, name] : kReconcileModes) {
    if (value == mode) return name;
  }
  return "invalid";
}

Result<ReconcileMode> ParseReconcileMode(std::string_view name) {
  for (const auto& [value, n] : kReconcileModes) {
    if (n == name) return value;
  }
  return Err(Errc::kInvalidArgument, "unknown reconcile mode '" + std::string(name) +
                                         "' (use unset, lookup or needs_human)");
}

std::chrono::milliseconds Backoff::Delay(int attempt) const {
  if (attempt < 1) attempt = 1;
  double delay = static_cast<double>(initial.count()) * std::pow(multiplier, attempt - 1);
  double cap = static_cast<double>(max.count());
  if (!(delay < cap)) delay = cap;  // also catches overflow to infinity and NaN
  if (delay < 0) delay = 0;
  return std::chrono::milliseconds(std::llround(delay));
}

}  // namespace reckon
