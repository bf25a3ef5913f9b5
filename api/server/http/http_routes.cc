#include "reckon/protocol/failure_kind_wire.h"
#include "reckon/api/server/http/http_routes.h"

#include <algorithm>
#include <charconv>

#include "reckon/protocol/wire_convert.h"
#include "reckon/protocol/wire_json.h"
#include "reckon/api/server/http/http_json.h"
#include "reckon/api/server/http/http_parse.h"
#include "reckon/base/identifier.h"

namespace reckon::api {
namespace {

namespace json = boost::json;
namespace http = boost::beast::http;
using namespace std::chrono_literals;
using M = wire::Request::Method;
using Reply = Result<json::value>;
using Out = M::Builder;

constexpr std::uint32_t kDefaultWatchMs = 20000, kMaxWatchMs = 60000;

// Builders: one per route that sends a protocol method.

void ListRuns(RouteInput& in, Out out) {
  auto list = out.initListWorkflows();
  list.setStatus(Text(in.Param("status")));
  list.setWorkflowType(Text(in.Param("type")));
  list.setTool(Text(in.Param("tool")));
  list.setIdPrefix(Text(in.Param("id_prefix")));
  const std::string needs = in.Param("needs_human");
  list.setNeedsHuman(needs == "1" || needs == "true");
  list.setLimit(std::max<std::uint32_t>(1, NumberParam(in.query, "limit", 50, 500, in.bad)));
  list.setCursor(Text(in.Param("after")));
}

void StartRun(RouteInput& in, Out out) {
  auto start = out.initStartWorkflow();
  start.setWorkflowId(Text(in.Text("workflow_id")));
  start.setWorkflowType(Text(in.Text("workflow_type")));
  start.setInputJson(Text(in.Json("input")));
}

void WhoAmI(RouteInput&, Out out) { out.setWhoAmI(); }

void ListContracts(RouteInput&, Out out) { out.setListContracts(); }

// An earlier run of a chain by ?run_id=; empty: the newest.
void DescribeRun(RouteInput& in, Out out) {
  auto key = out.initDescribeWorkflow();
  key.setWorkflowId(Text(in.at[1]));
  key.setRunId(Text(in.Param("run_id")));
}

void RunHistory(RouteInput& in, Out out) {
  auto key = out.initGetHistory();
  key.setWorkflowId(Text(in.at[1]));
  key.setRunId(Text(in.Param("run_id")));
}

void RunTrace(RouteInput& in, Out out) {
  auto key = out.initGetTrace();
  key.setWorkflowId(Text(in.at[1]));
  key.setRunId(Text(in.Param("run_id")));
}

void WatchRun(RouteInput& in, Out out) {
  auto watch = out.initWatchWorkflow();
  watch.setWorkflowId(Text(in.at[1]));
  const std::string after = in.Param("after_seq");
  std::int64_t after_seq = 0;
  if (!after.empty()) {
    const auto [end, ec] = std::from_chars(after.data(), after.data() + after.size(), after_seq);
    if (ec != std::errc() || end != after.data() + after.size() || after_seq < 0) {
      in.bad = Err(Errc::kInvalidArgument, "after_seq must be a sequence number");
    }
  }
  watch.setAfterSeq(after_seq);
  const std::uint32_t wait =
      NumberParam(in.query, "wait_ms", kDefaultWatchMs, kMaxWatchMs, in.bad);
  watch.setWaitMs(wait);
  in.timeout = std::chrono::milliseconds(wait) + 5s;
}

void CancelRun(RouteInput& in, Out out) {
  auto cancel = out.initCancelWorkflow();
  cancel.setWorkflowId(Text(in.at[1]));
  cancel.setReason(Text(in.Text("reason")));
}

void SignalRun(RouteInput& in, Out out) {
  auto signal = out.initSignalWorkflow();
  signal.setWorkflowId(Text(in.at[1]));
  signal.setName(Text(in.Text("name")));
  signal.setPayloadJson(Text(in.Json("payload")));
  signal.setRequestId(Text(in.Text("request_id")));
}

// A provider's completion (a webhook, relayed): applied once per delivery id. The path names
// the operation, and the run too under runs/.
void CompleteOperation(RouteInput& in, Out out) {
  auto complete = out.initCompleteOperation();
  const bool with_run = in.at[0] == "runs";
  if (with_run) complete.setWorkflowId(Text(in.at[1]));
  complete.setOperationId(Text(in.at[with_run ? 3 : 1]));
  complete.setDeliveryId(Text(in.Text("delivery_id")));
  const std::string status = in.Text("status");
  if (status != "succeeded" && status != "failed" && in.bad) {
    in.bad = Err(Errc::kInvalidArgument,
                 "\"status\" must be \"succeeded\" or \"failed\": what the provider reports of "
                 "the operation");
  }
  complete.setSucceeded(status == "succeeded");
  complete.setOutputJson(Text(in.Json("output")));
  complete.setProviderRef(Text(in.Text("provider_ref")));
  const std::string kind = in.Text("kind");
  auto parsed_kind = ParseFailureKind(kind.empty() ? "definitive" : kind);
  if (!parsed_kind && in.bad) {
    in.bad = parsed_kind.error().WithContext("\"kind\" (default definitive)");
  }
  complete.setKind(FailureKindToWire(parsed_kind ? parsed_kind.value() : FailureKind::kDefinitive));
  complete.setCode(Text(in.Text("code")));
  complete.setMessage(Text(in.Text("message")));
}

// A reader's question to the run's code (ctx.OnQuery): nothing is journaled.
void QueryRun(RouteInput& in, Out out) {
  auto ask = out.initQueryWorkflow();
  ask.setWorkflowId(Text(in.at[1]));
  ask.setName(Text(in.Text("name")));
  ask.setArgsJson(Text(in.Json("args")));
}

// An instruction to the run's code (ctx.OnUpdate), answered once its handler returns.
void UpdateRun(RouteInput& in, Out out) {
  auto update = out.initUpdateWorkflow();
  update.setWorkflowId(Text(in.at[1]));
  update.setName(Text(in.Text("name")));
  update.setArgsJson(Text(in.Json("args")));
  update.setUpdateId(Text(in.Text("update_id")));
  in.timeout = std::chrono::milliseconds(NumberParam(in.query, "wait_ms", 60000, 600000, in.bad));
}

// approve or deny, the last segment.
void DecideOperation(RouteInput& in, Out out) {
  auto decide = out.initDecideApproval();
  decide.setWorkflowId(Text(in.at[1]));
  decide.setOperationId(Text(in.at[3]));
  const std::string hash = in.Text("intent_hash");
  if (in.bad && hash.empty()) {
    in.bad = Err(Errc::kInvalidArgument,
                 "\"intent_hash\" is required: the intent hash you were shown, so that you "
                 "decide on exactly that intent");
  }
  decide.setExpectedIntentHash(Text(hash));
  decide.setGranted(in.at[4] == "approve");
  // The person's words: a note beside the principal; for a denial also its reason (the
  // journal's ApprovalDenied keeps a reason, not a note), unless "reason" is given.
  const std::string note = in.Text("note");
  std::string reason = in.Text("reason");
  if (reason.empty() && in.at[4] == "deny") reason = note;
  decide.setDecidedBy(Text(note));
  decide.setReason(Text(reason));
}

void ResolveOperation(RouteInput& in, Out out) {
  auto resolve = out.initResolveOperation();
  resolve.setWorkflowId(Text(in.at[1]));
  resolve.setOperationId(Text(in.at[3]));
  const json::value* committed = in.body.if_contains("committed");
  if (committed == nullptr || !committed->is_bool()) {
    in.bad = Err(Errc::kInvalidArgument,
                 "\"committed\" is required, true or false: did the effect happen?");
  } else {
    resolve.setCommitted(committed->as_bool());
  }
  resolve.setProviderRef(Text(in.Text("provider_ref")));
  resolve.setNote(Text(in.Text("note")));
}

// Reply shapes: the JSON of a successful call.

Reply EmptyReply(wire::Response::Result::Reader) { return json::value(json::object()); }

Reply PrincipalReply(wire::Response::Result::Reader r) {
  return json::value(PrincipalJson(r.getPrincipal()));
}

Reply PageReply(wire::Response::Result::Reader r) {
  json::array runs;
  auto page = r.getWorkflowPage();
  for (auto s : page.getWorkflows()) runs.push_back(SummaryJson(s));
  const std::string next = Str(page.getNextCursor());
  return json::value(
      json::object{{"runs", std::move(runs)},
                   {"next_cursor", next.empty() ? json::value(nullptr) : json::value(next)}});
}

Reply DetailReply(wire::Response::Result::Reader r) {
  return json::value(DetailJson(r.getWorkflow()));
}

Reply EventsReply(wire::Response::Result::Reader r) {
  RECKON_TRY(json::array events, EventsJson(r.getHistory()));
  return json::value(json::object{{"events", std::move(events)}});
}

Reply TraceReply(wire::Response::Result::Reader r) {
  json::array lines;
  for (auto line : r.getTrace()) lines.push_back(ParsedJsonField(Str(line)));
  return json::value(json::object{{"lines", std::move(lines)}});
}

Reply StartedReply(wire::Response::Result::Reader r) {
  return json::value(json::object{{"workflow_id", Str(r.getStarted().getWorkflowId())},
                                  {"run_id", Str(r.getStarted().getRunId())}});
}

Reply ContractsReply(wire::Response::Result::Reader r) {
  json::array contracts;
  for (auto c : r.getContracts()) {
    contracts.push_back(json::object{{"name", Str(c.getName())},
                                     {"hash", Str(c.getHash())},
                                     {"side_effect", Str(c.getSideEffect())},
                                     {"contract", ParsedJsonField(Str(c.getContractJson()))},
                                     {"card", Str(c.getCard())}});
  }
  return json::value(json::object{{"contracts", std::move(contracts)}});
}

Reply QueryReply(wire::Response::Result::Reader r) {
  return json::value(json::object{{"result", ParsedJsonField(Str(r.getQueryResult()))}});
}

Reply UpdateReply(wire::Response::Result::Reader r) {
  auto answer = r.getUpdateResult();
  json::object o{{"update_id", Str(answer.getUpdateId())}};
  if (answer.getErrorCode().size() == 0) {
    o["result"] = ParsedJsonField(Str(answer.getResultJson()));
  } else {
    // The handler's own failure: the update was accepted and answered.
    o["error"] = json::object{{"code", Str(answer.getErrorCode())},
                              {"message", CleanMessage(Str(answer.getErrorMessage()))}};
  }
  return json::value(std::move(o));
}

constexpr auto kGet = http::verb::get;
constexpr auto kPost = http::verb::post;
constexpr auto kDelete = http::verb::delete_;
constexpr auto kNone = HttpOwnRoute::kNone;

HttpRoute Own(http::verb verb, std::string_view pattern, HttpOwnRoute own) {
  return HttpRoute{verb, pattern, std::nullopt, own, nullptr, nullptr};
}

const HttpRoute kRoutes[] = {
    Own(kPost, "session", HttpOwnRoute::kLogin),
    Own(kGet, "session", HttpOwnRoute::kSessionInfo),
    Own(kDelete, "session", HttpOwnRoute::kLogout),
    Own(kGet, "inbox", HttpOwnRoute::kInbox),
    Own(kPost, "contracts/check-mcp", HttpOwnRoute::kCheckMcp),
    {kGet, "whoami", M::WHO_AM_I, kNone, WhoAmI, PrincipalReply},
    {kGet, "runs", M::LIST_WORKFLOWS, kNone, ListRuns, PageReply},
    {kPost, "runs", M::START_WORKFLOW, kNone, StartRun, StartedReply},
    {kGet, "runs/*", M::DESCRIBE_WORKFLOW, kNone, DescribeRun, DetailReply},
    {kGet, "runs/*/history", M::GET_HISTORY, kNone, RunHistory, EventsReply},
    {kGet, "runs/*/trace", M::GET_TRACE, kNone, RunTrace, TraceReply},
    {kGet, "runs/*/watch", M::WATCH_WORKFLOW, kNone, WatchRun, EventsReply},
    {kPost, "runs/*/cancel", M::CANCEL_WORKFLOW, kNone, CancelRun, EmptyReply},
    {kPost, "runs/*/signal", M::SIGNAL_WORKFLOW, kNone, SignalRun, EmptyReply},
    {kPost, "operations/*/completion", M::COMPLETE_OPERATION, kNone, CompleteOperation,
     EmptyReply},
    {kPost, "runs/*/operations/*/completion", M::COMPLETE_OPERATION, kNone, CompleteOperation,
     EmptyReply},
    {kPost, "runs/*/query", M::QUERY_WORKFLOW, kNone, QueryRun, QueryReply},
    {kPost, "runs/*/update", M::UPDATE_WORKFLOW, kNone, UpdateRun, UpdateReply},
    {kPost, "runs/*/operations/*/approve", M::DECIDE_APPROVAL, kNone, DecideOperation,
     EmptyReply},
    {kPost, "runs/*/operations/*/deny", M::DECIDE_APPROVAL, kNone, DecideOperation, EmptyReply},
    {kPost, "runs/*/operations/*/resolve", M::RESOLVE_OPERATION, kNone, ResolveOperation,
     EmptyReply},
    {kGet, "contracts", M::LIST_CONTRACTS, kNone, ListContracts, ContractsReply},
};

bool Matches(std::string_view pattern, const std::vector<std::string>& at) {
  std::size_t i = 0;
  while (!pattern.empty()) {
    const std::size_t slash = pattern.find('/');
    const std::string_view part = pattern.substr(0, slash);
    if (i == at.size() || (part != "*" && part != at[i])) return false;
    ++i;
    pattern = slash == std::string_view::npos ? std::string_view() : pattern.substr(slash + 1);
  }
  return i == at.size();
}

}  // namespace

std::string RouteInput::Param(const std::string& name) const {
  auto it = query.find(name);
  return it == query.end() ? std::string() : it->second;
}

std::string RouteInput::Text(std::string_view name) {
  auto value = StringField(body, name);
  if (!value) {
    bad = value.error();
    return std::string();
  }
  return std::move(value).value();
}

std::string RouteInput::Json(std::string_view name) const { return JsonField(body, name); }

std::span<const HttpRoute> HttpRoutes() { return kRoutes; }

const HttpRoute* MatchRoute(http::verb verb, const std::vector<std::string>& at) {
  for (const HttpRoute& route : kRoutes) {
    if (route.verb == verb && Matches(route.pattern, at)) return &route;
  }
  return nullptr;
}

}  // namespace reckon::api
