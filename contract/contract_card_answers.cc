#include "reckon/contract/contract_card_answers.h"

#include <cstdio>
#include <string>
#include <vector>

#include "reckon/contract/contract_card_facts.h"
#include "reckon/contract/failure_policy.h"

namespace reckon {
namespace {

namespace json = boost::json;
using Lines = std::vector<std::string>;

std::string List(const std::vector<std::string>& items, std::string_view empty = "none") {
  if (items.empty()) return std::string(empty);
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out;
}

std::string Times(int n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

std::string Describe(const Backoff& b) {
  char multiplier[32];
  std::snprintf(multiplier, sizeof multiplier, "%g", b.multiplier);
  return "backoff " + FormatDuration(b.initial) + ", x" + multiplier + " each time, at most " +
         FormatDuration(b.max);
}

json::array ToJson(const Lines& lines) {
  json::array out;
  for (const std::string& line : lines) out.emplace_back(line);
  return out;
}

std::string RetrySchedule(const ToolContract& c) {
  if (c.retry.max_attempts <= 1) return "One attempt in all: nothing is retried.";
  return "At most " + Times(c.retry.max_attempts, "attempt") + " in all, " +
         Describe(c.retry.backoff) + ".";
}

// ---- 1..8 ----

Lines IntendedEffect(const ToolContract& c) {
  return {c.description.empty() ? "(no description: the contract does not say)" : c.description};
}

Lines SideEffectAnswer(const ToolContract& c) {
  Lines out;
  switch (c.side_effect) {
    case SideEffect::kReadOnly:
      out.push_back("read_only: a call changes nothing, so every failure that is not a "
                    "definitive rejection is retried.");
      break;
    case SideEffect::kIdempotentWrite:
      out.push_back("idempotent_write: repeating a call with the same operation id has no "
                    "further effect, so retryable failures" +
                    std::string(c.retry.reconcile_on_unknown ? "" : " and unknown outcomes") +
                    " are retried with the same operation id.");
      break;
    case SideEffect::kDeduplicatedWrite:
      out.push_back("deduplicated_write: the provider drops a repeated idempotency key for " +
                    (c.dedup_window ? FormatDuration(*c.dedup_window) : std::string("(unset)")) +
                    ", so retries reuse the same key inside that window; past it a retry is "
                    "no longer safe and the step is treated as non_repeatable_write.");
      break;
    case SideEffect::kNonRepeatableWrite:
      out.push_back("non_repeatable_write: a repeat would be a second effect. " +
                    (c.retry.retryable_codes.empty()
                         ? std::string("No failure is retried blindly")
                         : "Only failures with the codes " + List(c.retry.retryable_codes) +
                               " (which prove the request was not processed) are retried") +
                    "; any other failure that is not a definitive rejection is an unknown "
                    "outcome, and is reconciled, never retried.");
      break;
  }
  out.push_back(RetrySchedule(c));
  return out;
}

// "a, b and c", from a JSON array of strings.
std::string Prose(const json::array& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += i == 0 ? "" : (i + 1 == names.size() ? " and " : ", ");
    out += std::string(names[i].as_string());
  }
  return out;
}

std::string Fact(const json::object& facts, std::string_view key) {
  return std::string(facts.at(key).as_string());
}

Lines OperationId(const ToolContract& c) {
  const json::object f = OperationIdFacts();
  Lines out{"Derived from the run and the step: " + Prose(f.at("derived_from").as_array()) +
                " (runs journaled before release 0.3: " +
                Prose(f.at("derived_from_before_0_3").as_array()) +
                "), so replaying the workflow makes the same id; never from the model's output "
                "or the clock. An id is " + Fact(f, "prefix") + " followed by 32 hex digits.",
            "Journaled in " + Fact(f, "journaled_in") + " (with the contract hash and the "
                "input's intent hash) before the first attempt is started."};
  std::string sent = "Given to the tool on every attempt as its idempotency key (a C++ tool "
                     "reads " + Fact(f, "cpp_tool_reads") + "; an HTTP tool sends it in the "
                     "header its tools file names in " + Fact(f, "http_header_named_by") +
                     ", none by default, and wherever a template says " +
                     Fact(f, "http_template") + "; an MCP tool gets it in _meta as " +
                     Fact(f, "mcp_meta_key") + ", and in the argument its binding names in " +
                     Fact(f, "mcp_argument_named_by") + ", if any), together with the "
                     "attempt number and the " + FormatDuration(c.attempt_timeout) + " deadline";
  switch (c.side_effect) {
    case SideEffect::kReadOnly: sent += "; a read has nothing to deduplicate, the id is for "
                                        "tracing."; break;
    case SideEffect::kIdempotentWrite: sent += "; repeating it with this id is harmless."; break;
    case SideEffect::kDeduplicatedWrite:
      sent += "; the provider deduplicates on it for " +
              (c.dedup_window ? FormatDuration(*c.dedup_window) : std::string("(unset)")) + ".";
      break;
    case SideEffect::kNonRepeatableWrite:
      sent += c.reconcile.mode == ReconcileMode::kLookup
                  ? "; the reconcile lookup searches the provider by it."
                  : "; a person resolving the operation searches by it.";
      break;
  }
  out.push_back(std::move(sent));
  return out;
}

Lines Errors(const ToolContract& c) {
  const bool strict = c.side_effect == SideEffect::kNonRepeatableWrite;
  const CodeClasses codes = ClassifyListedCodes(c);
  Lines out;
  out.push_back("Definitive (the step fails; nothing happened): codes " +
                List(codes.definitive, "(none listed)") +
                "; any failure the tool reports as definitive; an input the schema rejects; "
                "an approval denial.");
  out.push_back("Retryable (provably not processed): codes " +
                List(codes.retryable, "(none listed)") +
                (strict ? "; a \"retryable\" report with any other code is treated as unknown."
                        : "; and any failure the tool reports as retryable."));
  out.push_back("Unknown (may have happened): a timeout at the " +
                FormatDuration(c.attempt_timeout) +
                " attempt deadline, a lost reply, a worker or engine crash mid-attempt; codes " +
                List(codes.unknown, "(none listed)") +
                "; any failure reported as unknown, whatever its code.");
  if (c.heartbeat_timeout.count() > 0) {
    out.push_back("Lost (treated as unknown, code " + std::string(kHeartbeatTimeoutCode) +
                  "): an attempt whose tool has "
                  "not heartbeaten for " + FormatDuration(c.heartbeat_timeout) +
                  "; the tool must call its context's Heartbeat while it works.");
  }
  if (c.schedule_to_start_timeout.count() > 0) {
    out.push_back("Not started (retryable whatever the class, code " +
                  std::string(kScheduleToStartTimeoutCode) + "): an attempt no worker took within " +
                  FormatDuration(c.schedule_to_start_timeout) +
                  "; the server withdrew it from the queue before any worker saw it.");
  }
  if (IsWrite(c.side_effect)) {
    out.push_back("After an earlier unknown outcome that no lookup has answered not_found, a "
                  "later rejection or running out of attempts does not fail the step: the "
                  "effect may exist, so the outcome is resolved as in question 5.");
  }
  return out;
}

std::string Unresolved(const ToolContract& c) {
  switch (c.reconcile.mode) {
    case ReconcileMode::kLookup:
      return "the worker runs the tool's reconcile lookup with the operation id, no earlier "
             "than the attempt's hard deadline (" + FormatDuration(c.attempt_timeout) +
             ") plus a grace of " + FormatDuration(c.reconcile.grace) +
             ", so that a not_found cannot race an attempt still landing. committed completes "
             "the step with the provider's reference; not_found authorizes one new attempt "
             "with the same operation id; still_unknown looks again, up to " +
             Times(c.reconcile.max_attempts, "lookup") + " (" + Describe(c.reconcile.backoff) +
             "), then parks the operation as needs_human.";
    case ReconcileMode::kNeedsHuman:
      return "there is no lookup: the operation is parked as needs_human at once, visible in "
             "the CLI until a person resolves it as committed (with the provider's reference) "
             "or not committed.";
    case ReconcileMode::kUnset: break;
  }
  return "no reconcile policy is declared: the step fails with the outcome unknown.";
}

Lines Reconciliation(const ToolContract& c) {
  Lines out;
  switch (c.side_effect) {
    case SideEffect::kReadOnly:
      out.push_back("A read has no effect to find: an unknown outcome is retried like any other "
                    "failure, and the step fails when attempts run out.");
      return out;
    case SideEffect::kIdempotentWrite:
      if (!c.retry.reconcile_on_unknown) {
        out.push_back("Retried with the same operation id, which is harmless. Once attempts run "
                      "out, " + Unresolved(c));
        return out;
      }
      break;
    case SideEffect::kDeduplicatedWrite:
      if (!c.retry.reconcile_on_unknown) {
        out.push_back("Retried with the same key while the retry still falls inside the " +
                      (c.dedup_window ? FormatDuration(*c.dedup_window) : std::string("(unset)")) +
                      " dedup window. Past the window, or once attempts run out, " + Unresolved(c));
        return out;
      }
      break;
    case SideEffect::kNonRepeatableWrite: break;
  }
  out.push_back("Never retried blindly: " + Unresolved(c));
  out.push_back("The model is never asked what happened.");
  return out;
}

bool ClosedSchema(const ToolContract& c) {
  const auto* object = c.input_schema.if_object();
  const auto* extra = object == nullptr ? nullptr : object->if_contains("additionalProperties");
  return extra != nullptr && extra->is_bool() && !extra->get_bool();
}

Lines Approval(const ToolContract& c) {
  const ApprovalRule& rule = c.approval;
  std::string intent = List(IntentFields(c), "(no declared fields)");
  if (!ClosedSchema(c)) intent += ", and any member the schema does not declare";
  Lines out;
  if (rule.kind == ApprovalKind::kNone) {
    out.push_back("Approval is never required (approval.kind is none), so there is no grant to "
                  "invalidate.");
  } else {
    out.push_back("Approval is required " + DescribeApprovalRule(rule) +
                  ". A grant is bound to one operation id and one intent hash, and expires " +
                  FormatDuration(rule.grant_ttl) + " after it is given.");
    out.push_back("It is invalidated by: a change to any intent field; a different operation "
                  "id (another step or another run); expiry. A retry of the same operation with "
                  "unchanged intent reuses it. A denial is a definitive rejection.");
    out.push_back(rule.wait_deadline
                      ? "Waiting for a decision is durable; with no decision within " +
                            FormatDuration(*rule.wait_deadline) + " the operation is rejected."
                      : std::string("Waiting for a decision is durable and has no deadline."));
  }
  out.push_back("Intent fields (in the intent hash): " + intent + ". Secret fields (left out "
                "of it, of the journal's plain columns and of traces): " +
                List(c.secret_fields) + ".");
  return out;
}

Lines Duplicates(const ToolContract& c) {
  Lines out{"Each attempt carries its attempt number, which fences it: a reply, heartbeat or "
            "failure from a stale attempt (whose lease the engine took back) is never taken "
            "as the result of a newer attempt.",
            "A message or callback delivered twice is applied once: each transition is one "
            "journal event, appended only at the run's expected next sequence number."};
  if (c.completion.declared()) {
    out.push_back("The provider may answer \"accepted\" and report the result later, within " +
                  FormatDuration(c.completion.deadline) +
                  ": each completion carries a delivery id, and a redelivered completion, or one "
                  "for an operation already settled, is acknowledged and changes nothing. None "
                  "by then: the outcome is unknown and is reconciled, never retried blindly.");
  }
  out.push_back("A signal sent with a request id is applied once: a repeat with the same id "
                "is acknowledged and not journaled again.");
  if (IsWrite(c.side_effect)) {
    out.push_back("A late completion from an attempt already marked unknown is not dropped: it "
                  "is evidence that the operation committed, and resolves it as committed; it "
                  "never leads to a second effect.");
  } else {
    out.push_back("A late reply from an abandoned read is harmless: a read has no effect to "
                  "account for.");
  }
  return out;
}

Lines Evidence(const ToolContract& c) {
  Lines out;
  out.push_back(c.evidence.empty() ? (IsWrite(c.side_effect)
                                          ? "(not declared: the contract does not say)"
                                          : "The read's result, journaled when the step completes.")
                                   : c.evidence);
  std::vector<std::string> events{"OperationPrepared"};
  if (c.approval.kind != ApprovalKind::kNone) {
    events.push_back("ApprovalRequested, ApprovalGranted or ApprovalDenied");
  }
  events.push_back("AttemptStarted per attempt");
  if (c.completion.declared()) {
    events.push_back("AttemptAccepted and CompletionReceived (its delivery id) when the "
                     "provider reports later");
  }
  if (c.retry.max_attempts > 1) events.push_back("AttemptFailedRetryable");
  events.push_back("OperationCommitted (result and provider reference) or OperationRejected");
  events.push_back("OutcomeUnknown (with its reason) for an attempt whose outcome was lost");
  if (IsWrite(c.side_effect)) {
    if (c.reconcile.mode == ReconcileMode::kLookup) {
      events.push_back("ReconciliationStarted and ReconciliationResult");
    }
    if (c.reconcile.mode != ReconcileMode::kUnset) events.push_back("NeedsHuman and HumanResolved");
  }
  out.push_back("The run's journal: " + List(events) + ".");
  return out;
}

json::object Question(int number, std::string_view key, std::string_view question, Lines answer) {
  return {{"number", number}, {"key", key}, {"question", question}, {"answer", ToJson(answer)}};
}

}  // namespace

std::string FormatDuration(std::chrono::milliseconds d) {
  const long long ms = d.count();
  if (ms != 0 && ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + " h";
  if (ms != 0 && ms % 60'000 == 0) return std::to_string(ms / 60'000) + " min";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  if (ms > 1000) {
    char text[32];
    std::snprintf(text, sizeof text, "%g s", static_cast<double>(ms) / 1000.0);
    return text;
  }
  return std::to_string(ms) + " ms";
}

boost::json::array CardQuestions(const ToolContract& c) {
  json::array out;
  out.push_back(Question(1, "intended_effect", "What is the intended effect?", IntendedEffect(c)));

  json::object side = Question(2, "side_effect", "Idempotent, deduplicated or non-repeatable?",
                               SideEffectAnswer(c));
  side["facts"] = {{"class", SideEffectName(c.side_effect)},
                   {"max_attempts", c.retry.max_attempts},
                   {"reconcile_on_unknown", c.retry.reconcile_on_unknown}};
  if (c.dedup_window) side["facts"].as_object()["dedup_window_ms"] =
      std::chrono::milliseconds(*c.dedup_window).count();
  out.push_back(std::move(side));

  json::object operation_id = Question(3, "operation_id",
                                       "Where is the operation id made and stored?", OperationId(c));
  operation_id["facts"] = OperationIdFacts();
  out.push_back(std::move(operation_id));

  json::object errors = Question(4, "errors", "Which errors are definitive, retryable, unknown?",
                                 Errors(c));
  const CodeClasses codes = ClassifyListedCodes(c);
  errors["facts"] = {{"definitive_codes", ToJson(codes.definitive)},
                     {"retryable_codes", ToJson(codes.retryable)},
                     {"unknown_codes", ToJson(codes.unknown)},
                     {"attempt_timeout_ms", c.attempt_timeout.count()}};
  if (c.heartbeat_timeout.count() > 0) {
    errors["facts"].as_object()["heartbeat_timeout_ms"] = c.heartbeat_timeout.count();
  }
  if (c.schedule_to_start_timeout.count() > 0) {
    errors["facts"].as_object()["schedule_to_start_timeout_ms"] =
        c.schedule_to_start_timeout.count();
  }
  out.push_back(std::move(errors));

  json::object reconcile = Question(5, "reconciliation", "How is an unknown outcome reconciled?",
                                    Reconciliation(c));
  reconcile["facts"] = {{"mode", ReconcileModeName(c.reconcile.mode)},
                        {"max_lookups", c.reconcile.max_attempts},
                        {"grace_ms", c.reconcile.grace.count()}};
  out.push_back(std::move(reconcile));

  json::object approval = Question(6, "approval", "What invalidates approval?", Approval(c));
  approval["facts"] = {{"rule", DescribeApprovalRule(c.approval)},
                       {"intent_fields", ToJson(IntentFields(c))},
                       {"secret_fields", ToJson(c.secret_fields)},
                       {"grant_ttl_ms", std::chrono::milliseconds(c.approval.grant_ttl).count()}};
  out.push_back(std::move(approval));

  out.push_back(Question(7, "duplicates", "How are duplicate messages and callbacks handled?",
                         Duplicates(c)));
  out.push_back(Question(8, "evidence", "What evidence proves the final state?", Evidence(c)));
  return out;
}

}  // namespace reckon
