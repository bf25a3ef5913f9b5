#include "tests/sim/sim_provider.h"

#include <boost/json/object.hpp>

namespace reckon::sim {

std::string SimProvider::Commit(const std::string& key, SideEffect side_effect) {
  int& effects = effects_[key];
  const bool repeats = side_effect == SideEffect::kNonRepeatableWrite;
  if (effects > 0 && !repeats) return refs_[key];  // the first effect, again
  ++effects;
  if (effects == 1) refs_[key] = "ch_" + std::to_string(next_ref_++);
  if (effects == 2) double_effects_.push_back(key);
  counts_.Add("provider.effects");
  return refs_[key];
}

ProviderReply SimProvider::Execute(const std::string& key, SideEffect side_effect) {
  ProviderReply reply;
  const bool writes = side_effect != SideEffect::kReadOnly;
  if (faults_.active) {
    if (rng_.Chance(faults_.lose_request)) {
      counts_.Add("fault.provider_connection_reset");
      reply.outcome = ToolFailed(FailureKind::kUnknown, "connection_reset",
                                 "the connection to the provider was reset");
      return reply;
    }
    if (rng_.Chance(faults_.refuse)) {
      counts_.Add("fault.provider_refused");
      reply.outcome = ToolFailed(FailureKind::kRetryable, "rate_limited", "HTTP 429");
      return reply;
    }
    if (writes && rng_.Chance(faults_.reject)) {
      counts_.Add("fault.provider_rejected");
      reply.outcome = ToolFailed(FailureKind::kDefinitive, "card_declined", "declined");
      return reply;
    }
  }
  std::string ref = writes ? Commit(key, side_effect) : "";
  reply.outcome = ToolSucceeded(boost::json::object{{"ref", ref}}, ref);
  if (faults_.active && rng_.Chance(faults_.reply_lost)) {
    counts_.Add("fault.provider_reply_lost");
    reply.reply_lost = true;
  }
  return reply;
}

ReconcileOutcome SimProvider::Lookup(const std::string& key) {
  ReconcileOutcome outcome;
  if (faults_.active && rng_.Chance(faults_.lookup_late)) {
    counts_.Add("fault.provider_lookup_late");
    outcome.verdict = ReconcileVerdict::kStillUnknown;
    outcome.message = "the provider cannot tell yet";
    return outcome;
  }
  auto it = effects_.find(key);
  if (it == effects_.end() || it->second == 0) {
    outcome.verdict = ReconcileVerdict::kNotFound;
    return outcome;
  }
  outcome.verdict = ReconcileVerdict::kCommitted;
  outcome.provider_ref = refs_.at(key);
  outcome.output = boost::json::object{{"ref", outcome.provider_ref}};
  return outcome;
}

int SimProvider::effects(const std::string& key) const {
  auto it = effects_.find(key);
  return it == effects_.end() ? 0 : it->second;
}

std::string SimProvider::ref_of(const std::string& key) const {
  auto it = refs_.find(key);
  return it == refs_.end() ? "" : it->second;
}

}  // namespace reckon::sim
