// ValidateContract: every rule a contract must satisfy before registration. Each problem is
// phrased as what to do about it; all of them are reported at once.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "reckon/base/json_schema.h"
#include "reckon/contract/contract.h"
#include "reckon/contract/field_path.h"

namespace reckon {
namespace {

using Problems = std::vector<std::string>;

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

bool IsValidToolName(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
  });
}

void CheckBackoff(const Backoff& backoff, const std::string& field, Problems& problems) {
  if (backoff.initial.count() <= 0) problems.push_back(field + ".initial must be > 0");
  if (!std::isfinite(backoff.multiplier) || backoff.multiplier < 1.0) {
    problems.push_back(field + ".multiplier must be >= 1 (1 waits the same each time)");
  }
  if (backoff.max < backoff.initial) problems.push_back(field + ".max must be >= its initial");
}

void CheckClass(const ToolContract& c, Problems& problems) {
  const bool dedup = c.side_effect == SideEffect::kDeduplicatedWrite;
  const bool unset = c.reconcile.mode == ReconcileMode::kUnset;
  switch (c.side_effect) {
    case SideEffect::kReadOnly:
      if (c.retry.reconcile_on_unknown) {
        problems.push_back("read_only retries an unknown outcome, it never reconciles one "
                           "(set retry.reconcile_on_unknown = false)");
      }
      if (!unset) {
        problems.push_back("read_only has nothing to reconcile (leave reconcile.mode unset)");
      }
      break;
    case SideEffect::kIdempotentWrite:
      if (c.retry.reconcile_on_unknown && unset) {
        problems.push_back("retry.reconcile_on_unknown needs a reconcile lookup or an explicit "
                           "needs_human fallback (set reconcile.mode)");
      }
      break;
    case SideEffect::kDeduplicatedWrite:
      if (unset) {
        problems.push_back("deduplicated_write is treated as non_repeatable_write past its dedup "
                           "window, so it needs a reconcile lookup or an explicit needs_human "
                           "fallback (set reconcile.mode)");
      }
      break;
    case SideEffect::kNonRepeatableWrite:
      if (unset) {
        problems.push_back("non_repeatable_write needs a reconcile lookup or an explicit "
                           "needs_human fallback (set reconcile.mode)");
      }
      if (!c.retry.reconcile_on_unknown) {
        problems.push_back("non_repeatable_write cannot retry an unknown outcome, it must "
                           "reconcile it (set retry.reconcile_on_unknown = true)");
      }
      break;
  }
  if (dedup && (!c.dedup_window || c.dedup_window->count() <= 0)) {
    problems.push_back("deduplicated_write needs dedup_window > 0: how long the provider "
                       "remembers an idempotency key (Stripe: 24 h)");
  }
  if (!dedup && c.dedup_window) {
    problems.push_back("dedup_window applies only to deduplicated_write (remove it, or change "
                       "side_effect)");
  }
  if (c.reconcile.mode == ReconcileMode::kLookup) {
    if (c.reconcile.max_attempts < 1) {
      problems.push_back("reconcile.max_attempts must be >= 1 in lookup mode: lookups answering "
                         "still_unknown before the operation needs a human");
    }
    CheckBackoff(c.reconcile.backoff, "reconcile.backoff", problems);
    if (c.reconcile.grace.count() <= 0) {
      problems.push_back("reconcile.grace must be > 0 in lookup mode: a lookup right at the "
                         "attempt's deadline can race the attempt still landing (e.g. 500 ms)");
    }
  }
  if (c.completion.deadline.count() < 0) {
    problems.push_back("completion.deadline_ms must be > 0: how long after accepting a request "
                       "the provider may take to report its result");
  }
  if (c.completion.declared()) {
    if (!IsWrite(c.side_effect)) {
      problems.push_back("completion applies only to writes: a read has no effect to report "
                         "later (remove completion, or change side_effect)");
    }
    if (unset) {
      problems.push_back("completion needs reconcile.mode lookup or needs_human: a completion "
                         "that never comes is an unknown outcome");
    }
    if (!c.retry.reconcile_on_unknown) {
      problems.push_back("completion needs retry.reconcile_on_unknown = true: a completion that "
                         "never comes is reconciled, never retried blindly");
    }
  }
  if (IsWrite(c.side_effect) && c.evidence.empty()) {
    problems.push_back("set evidence: what proves the final state (e.g. the provider's "
                       "reference returned by the call or found by the lookup)");
  }
}

void CheckCodes(const ToolContract& c, Problems& problems) {
  auto check_empty = [&](const std::vector<std::string>& codes, const char* field) {
    if (Contains(codes, "")) problems.push_back(std::string(field) + " holds an empty code");
  };
  check_empty(c.retry.retryable_codes, "retry.retryable_codes");
  check_empty(c.definitive_codes, "definitive_codes");
  check_empty(c.unknown_codes, "unknown_codes");
  auto check_overlap = [&](const std::vector<std::string>& a, const char* a_name,
                           const std::vector<std::string>& b, const char* b_name) {
    for (const std::string& code : a) {
      if (!code.empty() && Contains(b, code)) {
        problems.push_back("code '" + code + "' is in both " + a_name + " and " + b_name +
                           " (a code has one meaning; keep it in one list)");
      }
    }
  };
  check_overlap(c.retry.retryable_codes, "retry.retryable_codes", c.definitive_codes,
                "definitive_codes");
  check_overlap(c.retry.retryable_codes, "retry.retryable_codes", c.unknown_codes,
                "unknown_codes");
  check_overlap(c.definitive_codes, "definitive_codes", c.unknown_codes, "unknown_codes");
}

// Returns false if the schema is unusable, so that field checks against it are skipped.
bool CheckSchema(const ToolContract& c, Problems& problems) {
  if (!c.output_schema.is_null()) {
    if (auto output = JsonSchema::Compile(c.output_schema); !output) {
      problems.push_back("output_schema: " + output.error().message());
    }
  }
  if (c.input_schema.is_null()) {
    problems.push_back("set input_schema: a JSON Schema with \"type\": \"object\"");
    return false;
  }
  auto compiled = JsonSchema::Compile(c.input_schema);
  if (!compiled) {
    problems.push_back("input_schema: " + compiled.error().message());
    return false;
  }
  const auto* type = c.input_schema.is_object() ? c.input_schema.get_object().if_contains("type")
                                                : nullptr;
  if (type == nullptr || !type->is_string() || type->get_string() != "object") {
    problems.push_back("input_schema must declare \"type\": \"object\" (a tool input is a JSON "
                       "object)");
    return false;
  }
  return true;
}

void CheckSecretFields(const ToolContract& c, Problems& problems) {
  for (std::size_t i = 0; i < c.secret_fields.size(); ++i) {
    const std::string& field = c.secret_fields[i];
    if (!IsValidFieldPath(field)) {
      problems.push_back("secret field '" + field + "' is not a dotted path (\"card.number\")");
    } else if (FindDeclaredField(c.input_schema, field).schema == nullptr) {
      problems.push_back("secret field '" + field + "' is not a property of input_schema "
                         "(declare it under properties, or fix the path)");
    }
    if (std::find(c.secret_fields.begin(), c.secret_fields.begin() + i, field) !=
        c.secret_fields.begin() + i) {
      problems.push_back("secret field '" + field + "' is listed twice");
    }
  }
}

bool DeclaresNumericType(const boost::json::value& schema) {
  const auto* type = schema.is_object() ? schema.get_object().if_contains("type") : nullptr;
  if (type == nullptr) return true;  // untyped: may hold a number
  auto numeric = [](const boost::json::value& t) {
    return t.is_string() && (t.get_string() == "integer" || t.get_string() == "number");
  };
  if (type->is_array()) {
    return std::any_of(type->get_array().begin(), type->get_array().end(), numeric);
  }
  return numeric(*type);
}

bool IsSecret(const ToolContract& c, const std::string& field) {
  for (const std::string& secret : c.secret_fields) {
    if (field == secret || field.starts_with(secret + ".")) return true;
  }
  return false;
}

void CheckApproval(const ToolContract& c, bool schema_ok, Problems& problems) {
  const ApprovalRule& rule = c.approval;
  if (rule.kind != ApprovalKind::kNone && rule.grant_ttl.count() <= 0) {
    problems.push_back("approval.grant_ttl must be > 0: how long a person's yes stays valid");
  }
  if (rule.wait_deadline && rule.wait_deadline->count() <= 0) {
    problems.push_back("approval.wait_deadline must be > 0 when set (leave it unset to wait "
                       "for a decision forever)");
  }
  if (rule.kind != ApprovalKind::kWhen) {
    if (!rule.when.empty()) {
      problems.push_back("approval.when is read only when approval.kind is when (remove the "
                         "conditions, or set the kind)");
    }
    return;
  }
  if (rule.when.empty()) {
    problems.push_back("approval kind 'when' needs at least one condition in approval.when");
  }
  for (const ApprovalCondition& condition : rule.when) {
    const std::string prefix = "approval condition '" + DescribeCondition(condition) + "': ";
    if (!IsValidFieldPath(condition.field)) {
      problems.push_back(prefix + "field is not a dotted path (\"amount_cents\")");
      continue;
    }
    if (IsOrdering(condition.op) && !condition.value.is_number()) {
      problems.push_back(prefix + std::string(CompareOpSymbol(condition.op)) +
                         " compares numbers; use a number, or == / !=");
    }
    if (IsSecret(c, condition.field)) {
      problems.push_back(prefix + "'" + condition.field + "' is a secret field, which the "
                         "intent hash leaves out, so a grant could not notice it change");
    }
    if (!schema_ok) continue;
    DeclaredField declared = FindDeclaredField(c.input_schema, condition.field);
    if (declared.schema == nullptr) {
      problems.push_back(prefix + "'" + condition.field + "' is not a property of input_schema");
    } else if (!declared.required) {
      problems.push_back(prefix + "'" + condition.field + "' must be required by input_schema "
                         "(list it in \"required\"), or the rule cannot be evaluated");
    } else if (IsOrdering(condition.op) && !DeclaresNumericType(*declared.schema)) {
      problems.push_back(prefix + "'" + condition.field + "' is not declared as an integer or "
                         "number");
    }
  }
}

void CheckTimeouts(const ToolContract& c, Problems& problems) {
  if (c.heartbeat_timeout.count() < 0 ||
      (c.heartbeat_timeout.count() > 0 && c.heartbeat_timeout >= c.attempt_timeout)) {
    problems.push_back("heartbeat_timeout must be > 0 and shorter than attempt_timeout (or left "
                       "out): a tool that does not heartbeat within it is treated as lost");
  }
  if (c.schedule_to_start_timeout.count() < 0 ||
      (c.schedule_to_start_timeout.count() > 0 &&
       c.schedule_to_start_timeout >= c.attempt_timeout)) {
    problems.push_back("schedule_to_start_timeout must be > 0 and shorter than attempt_timeout "
                       "(or left out): past the attempt's deadline its outcome is already "
                       "decided");
  }
}

}  // namespace

Result<void> ValidateContract(const ToolContract& c) {
  Problems problems;
  if (c.name.empty()) {
    problems.push_back("set name ([a-z0-9_.-]+)");
  } else if (!IsValidToolName(c.name)) {
    problems.push_back("name must match [a-z0-9_.-]+ (at most 128 characters)");
  }
  if (c.description.empty()) {
    problems.push_back("set description: what one call does to the world, in one sentence");
  }
  if (c.attempt_timeout.count() <= 0) {
    problems.push_back("attempt_timeout must be > 0: the hard deadline of one attempt, after "
                       "which its outcome is unknown");
  }
  CheckTimeouts(c, problems);
  if (c.retry.max_attempts < 1) {
    problems.push_back("retry.max_attempts must be >= 1 (1: no retries)");
  }
  CheckBackoff(c.retry.backoff, "retry.backoff", problems);
  CheckClass(c, problems);
  CheckCodes(c, problems);
  bool schema_ok = CheckSchema(c, problems);
  if (schema_ok) CheckSecretFields(c, problems);
  CheckApproval(c, schema_ok, problems);
  if (problems.empty()) return Ok();

  std::string message = "contract '" + c.name + "': ";
  for (std::size_t i = 0; i < problems.size(); ++i) {
    if (i > 0) message += "; ";
    message += problems[i];
  }
  return Err(Errc::kInvalidArgument, std::move(message));
}

}  // namespace reckon
