#include "reckon/protocol/wire_convert.h"

#include "reckon/protocol/failure_kind_wire.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <variant>

namespace reckon::api {
namespace json = boost::json;

kj::StringPtr Text(const std::string& s) { return kj::StringPtr(s.c_str(), s.size()); }
std::string Str(capnp::Text::Reader text) { return std::string(text.cStr(), text.size()); }
kj::StringPtr Name(std::string_view name) { return kj::StringPtr(name.data(), name.size()); }

Result<json::value> JsonFromWire(capnp::Text::Reader text, std::string_view field) {
  boost::system::error_code ec;
  json::value value = json::parse(std::string_view(text.cStr(), text.size()), ec);
  if (ec) {
    return Err(Errc::kInvalidArgument,
               std::string(field) + " is not valid JSON: " + ec.message());
  }
  return value;
}

void EventsToWire(std::span<const storage::Event> events,
                  capnp::List<wire::HistoryEvent>::Builder out) {
  std::vector<std::string> payloads;
  payloads.reserve(events.size());
  for (const storage::Event& event : events) payloads.push_back(storage::EncodeEventBody(event.body));
  EventsToWire(events, payloads, out);
}

void EventsToWire(std::span<const storage::Event> events, std::span<const std::string> payloads,
                  capnp::List<wire::HistoryEvent>::Builder out) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    const storage::Event& event = events[i];
    auto b = out[static_cast<unsigned>(i)];
    b.setSeq(event.seq);
    b.setRecordedAtUs(event.recorded_at_us);
    const auto name = storage::EventTypeName(event.body);
    b.setType(kj::StringPtr(name.data(), name.size()));
    const std::string& payload = payloads[i];
    b.setPayload(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(payload.data()),
                              payload.size()));
  }
}

Result<std::vector<storage::Event>> EventsFromWire(capnp::List<wire::HistoryEvent>::Reader in,
                                                   storage::EventDecoder& decoder) {
  std::vector<storage::Event> events;
  events.reserve(in.size());
  for (auto e : in) {
    auto data = e.getPayload();
    auto body = decoder.Decode(
        std::span<const std::byte>(reinterpret_cast<const std::byte*>(data.begin()), data.size()));
    if (!body) {
      return Err(Errc::kInvalidArgument, "event " + std::to_string(e.getSeq()) +
                                             " of the task: " + body.error().message());
    }
    events.push_back(storage::Event{e.getSeq(), e.getRecordedAtUs(), std::move(body).value()});
  }
  return events;
}

void CommandsToWire(const std::vector<Command>& commands,
                    capnp::List<wire::Command>::Builder out) {
  for (std::size_t i = 0; i < commands.size(); ++i) {
    auto b = out[static_cast<unsigned>(i)];
    std::visit(
        [&](const auto& c) {
          using T = std::decay_t<decltype(c)>;
          if constexpr (std::is_same_v<T, ScheduleCall>) {
            auto s = b.initScheduleCall();
            s.setStepId(Text(c.step_id));
            s.setTool(Text(c.tool));
            const std::string input = json::serialize(c.input);
            s.setInputJson(Text(input));
            s.setReplayed(c.replayed);
            s.setMaxAttempts(c.overrides.max_attempts);
            s.setRequireApproval(c.overrides.require_approval);
          } else if constexpr (std::is_same_v<T, StartTimer>) {
            auto s = b.initStartTimer();
            s.setTimerId(Text(c.timer_id));
            s.setFireAtUs(c.fire_at_us);
          } else if constexpr (std::is_same_v<T, RecordMarker>) {
            auto s = b.initRecordMarker();
            s.setStepId(Text(c.step_id));
            s.setKind(Text(c.kind));
            s.setValueJson(Text(c.value_json));
          } else if constexpr (std::is_same_v<T, CompleteWorkflow>) {
            b.setCompleteWorkflow(Text(c.result_json));
          } else if constexpr (std::is_same_v<T, ContinueAsNew>) {
            auto s = b.initContinueAsNew();
            s.setInputJson(Text(c.input_json));
            auto signals = s.initSignals(static_cast<unsigned>(c.signals.size()));
            for (std::size_t k = 0; k < c.signals.size(); ++k) {
              auto signal = signals[static_cast<unsigned>(k)];
              signal.setName(Text(c.signals[k].name));
              signal.setPayloadJson(Text(c.signals[k].payload_json));
              signal.setSentBy(Text(c.signals[k].sent_by));
            }
          } else if constexpr (std::is_same_v<T, StartChild>) {
            auto s = b.initStartChild();
            s.setStepId(Text(c.step_id));
            s.setWorkflowId(Text(c.workflow_id));
            s.setWorkflowType(Text(c.workflow_type));
            s.setInputJson(Text(c.input_json));
            const std::string_view policy = ParentClosePolicyName(c.policy);
            s.setParentClosePolicy(kj::StringPtr(policy.data(), policy.size()));
          } else if constexpr (std::is_same_v<T, CompleteUpdate>) {
            auto s = b.initCompleteUpdate();
            s.setUpdateId(Text(c.update_id));
            s.setResultJson(Text(c.result_json));
            s.setErrorCode(Text(c.error_code));
            s.setErrorMessage(Text(c.error_message));
          } else {
            auto s = b.initFailWorkflow();
            s.setCode(Text(c.code));
            s.setMessage(Text(c.message));
          }
        },
        commands[i]);
  }
}

Result<std::vector<Command>> CommandsFromWire(capnp::List<wire::Command>::Reader in) {
  std::vector<Command> commands;
  commands.reserve(in.size());
  for (auto c : in) {
    switch (c.which()) {
      case wire::Command::SCHEDULE_CALL: {
        auto s = c.getScheduleCall();
        RECKON_TRY(auto input, JsonFromWire(s.getInputJson(),
                                            "scheduleCall '" + Str(s.getStepId()) + "' input"));
        commands.push_back(ScheduleCall{Str(s.getStepId()), Str(s.getTool()), std::move(input),
                                        s.getReplayed(),
                                        CallOverrides{s.getMaxAttempts(), s.getRequireApproval()}});
        break;
      }
      case wire::Command::START_TIMER:
        commands.push_back(StartTimer{Str(c.getStartTimer().getTimerId()),
                                      c.getStartTimer().getFireAtUs()});
        break;
      case wire::Command::RECORD_MARKER: {
        auto s = c.getRecordMarker();
        commands.push_back(RecordMarker{Str(s.getStepId()), Str(s.getKind()),
                                        Str(s.getValueJson())});
        break;
      }
      case wire::Command::COMPLETE_WORKFLOW:
        commands.push_back(CompleteWorkflow{Str(c.getCompleteWorkflow())});
        break;
      case wire::Command::CONTINUE_AS_NEW: {
        auto s = c.getContinueAsNew();
        ContinueAsNew next{Str(s.getInputJson()), {}};
        for (auto signal : s.getSignals()) {
          next.signals.push_back(CarriedSignal{Str(signal.getName()),
                                               Str(signal.getPayloadJson()),
                                               Str(signal.getSentBy())});
        }
        commands.push_back(std::move(next));
        break;
      }
      case wire::Command::START_CHILD: {
        auto s = c.getStartChild();
        auto policy = ParseParentClosePolicy(Str(s.getParentClosePolicy()));
        if (!policy) {
          return Err(Errc::kInvalidArgument,
                     "startChild '" + Str(s.getStepId()) + "' names parent-close policy '" +
                         Str(s.getParentClosePolicy()) + "'; use abandon, cancel or wait");
        }
        RECKON_TRY(JsonFromWire(s.getInputJson(),
                                "startChild '" + Str(s.getStepId()) + "' input"));
        commands.push_back(StartChild{Str(s.getStepId()), Str(s.getWorkflowId()),
                                      Str(s.getWorkflowType()), Str(s.getInputJson()), *policy});
        break;
      }
      case wire::Command::COMPLETE_UPDATE: {
        auto s = c.getCompleteUpdate();
        commands.push_back(CompleteUpdate{Str(s.getUpdateId()), Str(s.getResultJson()),
                                          Str(s.getErrorCode()), Str(s.getErrorMessage())});
        break;
      }
      case wire::Command::FAIL_WORKFLOW:
        commands.push_back(FailWorkflow{Str(c.getFailWorkflow().getCode()),
                                        Str(c.getFailWorkflow().getMessage())});
        break;
      default:
        return Err(Errc::kInvalidArgument,
                   "a command of a kind this server does not know (union ordinal " +
                       std::to_string(static_cast<int>(c.which())) + ")");
    }
  }
  return commands;
}

void AttemptOutcomeToWire(const AttemptOutcome& outcome, wire::CompleteToolTask::Builder out) {
  auto a = out.initOutcome().initAttempt();
  a.setSuccess(outcome.success);
  if (outcome.success) {
    const std::string output = json::serialize(outcome.output);
    a.setOutputJson(Text(output));
    a.setProviderRef(Text(outcome.provider_ref));
  } else if (outcome.accepted) {
    a.setAccepted(true);
    a.setProviderRef(Text(outcome.provider_ref));
  }
  a.setKind(FailureKindToWire(outcome.kind));
  a.setCode(Text(outcome.code));
  a.setMessage(Text(outcome.message));
  out.setHeartbeatDetailsJson(Text(outcome.heartbeat_details_json));
}

Result<AttemptOutcome> AttemptOutcomeFromWire(wire::CompleteToolTask::Reader in) {
  if (!in.getOutcome().isAttempt()) {
    return Err(Errc::kInvalidArgument, "completeToolTask of an attempt carries no attempt outcome");
  }
  auto a = in.getOutcome().getAttempt();
  AttemptOutcome outcome;
  outcome.success = a.getSuccess();
  outcome.accepted = !outcome.success && a.getAccepted();
  if (outcome.accepted) outcome.provider_ref = Str(a.getProviderRef());
  if (outcome.success) {
    RECKON_TRY(json::value output, JsonFromWire(a.getOutputJson(), "attempt outputJson"));
    outcome.output = std::move(output);
    outcome.provider_ref = Str(a.getProviderRef());
  }
  outcome.kind = FailureKindFromWire(a.getKind());
  outcome.code = Str(a.getCode());
  outcome.message = Str(a.getMessage());
  // Capped and checked again when journaled (engine/tool_report.h); not_started is
  // never taken from a worker.
  if (in.getHeartbeatDetailsJson().size() <= kMaxHeartbeatDetailsBytes) {
    outcome.heartbeat_details_json = Str(in.getHeartbeatDetailsJson());
  }
  return outcome;
}

void ReconcileOutcomeToWire(const ReconcileOutcome& outcome,
                            wire::CompleteToolTask::Builder out) {
  auto r = out.initOutcome().initReconcile();
  switch (outcome.verdict) {
    case ReconcileVerdict::kCommitted: r.setVerdict(wire::ReconcileVerdict::COMMITTED); break;
    case ReconcileVerdict::kNotFound: r.setVerdict(wire::ReconcileVerdict::NOT_FOUND); break;
    case ReconcileVerdict::kStillUnknown:
      r.setVerdict(wire::ReconcileVerdict::STILL_UNKNOWN);
      break;
  }
  if (outcome.verdict == ReconcileVerdict::kCommitted) {
    const std::string output = json::serialize(outcome.output);
    r.setReconcileOutputJson(Text(output));
    r.setReconcileProviderRef(Text(outcome.provider_ref));
  }
  r.setReconcileMessage(Text(outcome.message));
}

Result<ReconcileOutcome> ReconcileOutcomeFromWire(wire::CompleteToolTask::Reader in) {
  if (!in.getOutcome().isReconcile()) {
    return Err(Errc::kInvalidArgument, "completeToolTask of a lookup carries no reconcile outcome");
  }
  auto r = in.getOutcome().getReconcile();
  ReconcileOutcome outcome;
  switch (r.getVerdict()) {
    case wire::ReconcileVerdict::COMMITTED: outcome.verdict = ReconcileVerdict::kCommitted; break;
    case wire::ReconcileVerdict::NOT_FOUND: outcome.verdict = ReconcileVerdict::kNotFound; break;
    default: outcome.verdict = ReconcileVerdict::kStillUnknown; break;
  }
  if (outcome.verdict == ReconcileVerdict::kCommitted) {
    RECKON_TRY(json::value output,
               JsonFromWire(r.getReconcileOutputJson(), "reconcile outputJson"));
    outcome.output = std::move(output);
    outcome.provider_ref = Str(r.getReconcileProviderRef());
  }
  outcome.message = Str(r.getReconcileMessage());
  return outcome;
}

}  // namespace reckon::api
