#include "reckon/contract/contract_json.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>

#include "reckon/base/intent_hash.h"

namespace reckon {
namespace {

namespace json = boost::json;

// ---- writing ----

json::array Strings(const std::vector<std::string>& list) {
  json::array out;
  for (const std::string& s : list) out.emplace_back(s);
  return out;
}

json::object BackoffJson(const Backoff& b) {
  return {{"initial_ms", b.initial.count()},
          {"multiplier", b.multiplier},
          {"max_ms", b.max.count()}};
}

json::object ApprovalJson(const ApprovalRule& rule) {
  json::array when;
  for (const ApprovalCondition& c : rule.when) {
    when.push_back(
        json::object{{"field", c.field}, {"op", CompareOpSymbol(c.op)}, {"value", c.value}});
  }
  json::object out{{"kind", ApprovalKindName(rule.kind)},
                   {"when", std::move(when)},
                   {"grant_ttl_s", rule.grant_ttl.count()}};
  if (rule.wait_deadline) out["wait_deadline_s"] = rule.wait_deadline->count();
  // Written only when set, so that the canonical form (and hash) of every contract that
  // keeps separation of duties is what it was before the field existed.
  if (rule.allow_self_approval) out["allow_self_approval"] = true;
  return out;
}

// ---- reading ----

Error FieldError(const std::string& field, std::string_view problem) {
  return Err(Errc::kInvalidArgument, "contract JSON: " + field + ": " + std::string(problem));
}

std::string Join(const std::string& prefix, std::string_view key) {
  return prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
}

// Reads the members of one JSON object, naming each by its full path in errors.
class Fields {
 public:
  static Result<Fields> Of(const json::value& v, std::string path,
                           std::initializer_list<std::string_view> known) {
    const json::object* object = v.if_object();
    if (object == nullptr) return FieldError(path.empty() ? "(root)" : path, "must be an object");
    for (const auto& member : *object) {
      bool is_known = false;
      for (std::string_view k : known) is_known |= member.key() == k;
      if (!is_known) return FieldError(Join(path, member.key()), "unknown field");
    }
    return Fields(*object, std::move(path));
  }

  const json::value* Find(std::string_view key) const { return object_->if_contains(key); }
  std::string Path(std::string_view key) const { return Join(path_, key); }

  Result<const json::value*> Required(std::string_view key) const {
    const json::value* v = Find(key);
    if (v == nullptr) return FieldError(Path(key), "missing required field");
    return v;
  }

  Result<void> Read(std::string_view key, std::string& out) const {
    if (const json::value* v = Find(key)) {
      if (!v->is_string()) return FieldError(Path(key), "must be a string");
      out = std::string(v->get_string());
    }
    return Ok();
  }

  Result<void> Read(std::string_view key, bool& out) const {
    if (const json::value* v = Find(key)) {
      if (!v->is_bool()) return FieldError(Path(key), "must be true or false");
      out = v->get_bool();
    }
    return Ok();
  }

  Result<void> Read(std::string_view key, double& out) const {
    if (const json::value* v = Find(key)) {
      if (!v->is_number()) return FieldError(Path(key), "must be a number");
      out = v->to_number<double>();
    }
    return Ok();
  }

  Result<void> Read(std::string_view key, std::int64_t& out) const {
    if (const json::value* v = Find(key)) {
      RECKON_TRY(out, Integer(*v, Path(key)));
    }
    return Ok();
  }

  Result<void> Read(std::string_view key, int& out) const {
    std::int64_t wide = out;
    RECKON_TRY(Read(key, wide));
    if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max()) {
      return FieldError(Path(key), "out of range");
    }
    out = static_cast<int>(wide);
    return Ok();
  }

  template <class Rep, class Period>
  Result<void> Read(std::string_view key, std::chrono::duration<Rep, Period>& out) const {
    std::int64_t count = out.count();
    RECKON_TRY(Read(key, count));
    out = std::chrono::duration<Rep, Period>(count);
    return Ok();
  }

  Result<void> Read(std::string_view key, std::vector<std::string>& out) const {
    if (const json::value* v = Find(key)) {
      if (!v->is_array()) return FieldError(Path(key), "must be an array of strings");
      out.clear();
      for (const json::value& item : v->get_array()) {
        if (!item.is_string()) return FieldError(Path(key), "must be an array of strings");
        out.emplace_back(item.get_string());
      }
    }
    return Ok();
  }

 private:
  Fields(const json::object& object, std::string path) : object_(&object), path_(std::move(path)) {}

  static Result<std::int64_t> Integer(const json::value& v, const std::string& field) {
    if (v.is_int64()) return v.get_int64();
    if (v.is_uint64() && v.get_uint64() <= std::numeric_limits<std::int64_t>::max()) {
      return static_cast<std::int64_t>(v.get_uint64());
    }
    if (v.is_double() && std::trunc(v.get_double()) == v.get_double() &&
        std::abs(v.get_double()) < 9.2e18) {
      return static_cast<std::int64_t>(v.get_double());
    }
    return FieldError(field, "must be an integer");
  }

  const json::object* object_;  // not owned; outlives this reader
  std::string path_;
};

Result<void> ReadBackoff(const Fields& parent, std::string_view key, Backoff& out) {
  const json::value* v = parent.Find(key);
  if (v == nullptr) return Ok();
  RECKON_TRY(auto f, Fields::Of(*v, parent.Path(key), {"initial_ms", "multiplier", "max_ms"}));
  RECKON_TRY(f.Read("initial_ms", out.initial));
  RECKON_TRY(f.Read("multiplier", out.multiplier));
  RECKON_TRY(f.Read("max_ms", out.max));
  return Ok();
}

Result<void> ReadRetry(const Fields& parent, RetryPolicy& out) {
  const json::value* v = parent.Find("retry");
  if (v == nullptr) return Ok();
  RECKON_TRY(auto f, Fields::Of(*v, "retry", {"max_attempts", "backoff", "retryable_codes",
                                              "reconcile_on_unknown"}));
  RECKON_TRY(f.Read("max_attempts", out.max_attempts));
  RECKON_TRY(ReadBackoff(f, "backoff", out.backoff));
  RECKON_TRY(f.Read("retryable_codes", out.retryable_codes));
  RECKON_TRY(f.Read("reconcile_on_unknown", out.reconcile_on_unknown));
  return Ok();
}

Result<void> ReadReconcile(const Fields& parent, ReconcilePolicy& out) {
  const json::value* v = parent.Find("reconcile");
  if (v == nullptr) return Ok();
  RECKON_TRY(auto f, Fields::Of(*v, "reconcile", {"mode", "max_attempts", "backoff", "grace_ms"}));
  std::string mode(ReconcileModeName(out.mode));
  RECKON_TRY(f.Read("mode", mode));
  auto parsed = ParseReconcileMode(mode);
  if (!parsed) return FieldError(f.Path("mode"), parsed.error().message());
  out.mode = parsed.value();
  RECKON_TRY(f.Read("max_attempts", out.max_attempts));
  RECKON_TRY(ReadBackoff(f, "backoff", out.backoff));
  RECKON_TRY(f.Read("grace_ms", out.grace));
  return Ok();
}

Result<void> ReadCompletion(const Fields& parent, CompletionPolicy& out) {
  RECKON_TRY(auto f, Fields::Of(*parent.Find("completion"), "completion", {"deadline_ms"}));
  RECKON_TRY(f.Required("deadline_ms"));
  return f.Read("deadline_ms", out.deadline);
}

Result<void> ReadApproval(const Fields& parent, ApprovalRule& out) {
  const json::value* v = parent.Find("approval");
  if (v == nullptr) return Ok();
  RECKON_TRY(auto f,
             Fields::Of(*v, "approval", {"kind", "when", "grant_ttl_s", "wait_deadline_s", "allow_self_approval"}));
  std::string kind(ApprovalKindName(out.kind));
  RECKON_TRY(f.Read("kind", kind));
  auto parsed = ParseApprovalKind(kind);
  if (!parsed) return FieldError(f.Path("kind"), parsed.error().message());
  out.kind = parsed.value();
  if (const json::value* when = f.Find("when")) {
    if (!when->is_array()) return FieldError(f.Path("when"), "must be an array of conditions");
    out.when.clear();
    for (std::size_t i = 0; i < when->get_array().size(); ++i) {
      std::string path = "approval.when[" + std::to_string(i) + "]";
      RECKON_TRY(auto c, Fields::Of(when->get_array()[i], path, {"field", "op", "value"}));
      ApprovalCondition condition;
      RECKON_TRY(c.Required("field"));
      RECKON_TRY(c.Read("field", condition.field));
      std::string op;
      RECKON_TRY(c.Required("op"));
      RECKON_TRY(c.Read("op", op));
      auto parsed_op = ParseCompareOp(op);
      if (!parsed_op) return FieldError(c.Path("op"), parsed_op.error().message());
      condition.op = parsed_op.value();
      RECKON_TRY(const json::value* value, c.Required("value"));
      condition.value = *value;
      out.when.push_back(std::move(condition));
    }
  }
  RECKON_TRY(f.Read("grant_ttl_s", out.grant_ttl));
  if (f.Find("wait_deadline_s") != nullptr) {
    std::chrono::seconds deadline{0};
    RECKON_TRY(f.Read("wait_deadline_s", deadline));
    out.wait_deadline = deadline;
  }
  if (f.Find("allow_self_approval") != nullptr) {
    RECKON_TRY(f.Read("allow_self_approval", out.allow_self_approval));
  }
  return Ok();
}

}  // namespace

boost::json::value ContractToJson(const ToolContract& c) {
  json::object out{
      {"name", c.name},
      {"description", c.description},
      {"side_effect", SideEffectName(c.side_effect)},
      {"attempt_timeout_ms", c.attempt_timeout.count()},
      {"retry", json::object{{"max_attempts", c.retry.max_attempts},
                             {"backoff", BackoffJson(c.retry.backoff)},
                             {"retryable_codes", Strings(c.retry.retryable_codes)},
                             {"reconcile_on_unknown", c.retry.reconcile_on_unknown}}},
      {"reconcile", json::object{{"mode", ReconcileModeName(c.reconcile.mode)},
                                 {"max_attempts", c.reconcile.max_attempts},
                                 {"backoff", BackoffJson(c.reconcile.backoff)},
                                 {"grace_ms", c.reconcile.grace.count()}}},
      {"approval", ApprovalJson(c.approval)},
      {"secret_fields", Strings(c.secret_fields)},
      {"input_schema", c.input_schema},
      {"definitive_codes", Strings(c.definitive_codes)},
      {"unknown_codes", Strings(c.unknown_codes)},
      {"evidence", c.evidence},
  };
  if (c.dedup_window) out["dedup_window_s"] = c.dedup_window->count();
  // Timeouts added later are present only when declared, so older contracts keep their hash.
  if (c.heartbeat_timeout.count() != 0) out["heartbeat_timeout_ms"] = c.heartbeat_timeout.count();
  if (c.schedule_to_start_timeout.count() != 0) {
    out["schedule_to_start_timeout_ms"] = c.schedule_to_start_timeout.count();
  }
  // Only when declared, so that contracts without one keep their hash.
  if (!c.output_schema.is_null()) out["output_schema"] = c.output_schema;
  if (c.completion.declared()) {
    out["completion"] = json::object{{"deadline_ms", c.completion.deadline.count()}};
  }
  return out;
}

Result<ToolContract> ContractFromJson(const boost::json::value& json) {
  RECKON_TRY(auto f, Fields::Of(json, "", {"name", "description", "side_effect",
                                           "attempt_timeout_ms", "retry", "reconcile",
                                           "approval", "dedup_window_s", "secret_fields",
                                           "input_schema", "output_schema", "definitive_codes",
                                           "unknown_codes", "evidence", "heartbeat_timeout_ms",
                                           "schedule_to_start_timeout_ms", "completion"}));
  ToolContract c;
  RECKON_TRY(f.Required("name"));
  RECKON_TRY(f.Read("name", c.name));
  RECKON_TRY(f.Read("description", c.description));
  RECKON_TRY(f.Required("side_effect"));
  std::string side_effect;
  RECKON_TRY(f.Read("side_effect", side_effect));
  auto parsed = ParseSideEffect(side_effect);
  if (!parsed) return FieldError("side_effect", parsed.error().message());
  c.side_effect = parsed.value();
  RECKON_TRY(f.Read("attempt_timeout_ms", c.attempt_timeout));
  if (f.Find("heartbeat_timeout_ms") != nullptr) {
    RECKON_TRY(f.Read("heartbeat_timeout_ms", c.heartbeat_timeout));
  }
  if (f.Find("schedule_to_start_timeout_ms") != nullptr) {
    RECKON_TRY(f.Read("schedule_to_start_timeout_ms", c.schedule_to_start_timeout));
  }
  RECKON_TRY(ReadRetry(f, c.retry));
  RECKON_TRY(ReadReconcile(f, c.reconcile));
  RECKON_TRY(ReadApproval(f, c.approval));
  if (f.Find("dedup_window_s") != nullptr) {
    std::chrono::seconds window{0};
    RECKON_TRY(f.Read("dedup_window_s", window));
    c.dedup_window = window;
  }
  RECKON_TRY(f.Read("secret_fields", c.secret_fields));
  RECKON_TRY(const json::value* schema, f.Required("input_schema"));
  c.input_schema = *schema;
  if (const json::value* output = f.Find("output_schema"); output != nullptr) {
    c.output_schema = *output;
  }
  RECKON_TRY(f.Read("definitive_codes", c.definitive_codes));
  RECKON_TRY(f.Read("unknown_codes", c.unknown_codes));
  RECKON_TRY(f.Read("evidence", c.evidence));
  if (f.Find("completion") != nullptr) {
    RECKON_TRY(ReadCompletion(f, c.completion));
  }
  return c;
}

Result<std::string> ContractHash(const ToolContract& contract) {
  auto hash = IntentHash(ContractToJson(contract), {});
  if (!hash) return hash.error().WithContext("contract '" + contract.name + "' hash");
  return hash;
}

}  // namespace reckon
