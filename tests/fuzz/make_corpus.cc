// Writes the seed corpus files that only Reckon's own encoders can make: request frames as a
// client sends them (corpus/request_frame/) and event blobs as a journal stores them
// (corpus/event/). Usage: fuzz_make_corpus <tests/fuzz/corpus>. Run by hand after a change to
// protocol/reckon.capnp or storage/events.capnp; its output is committed, so the replays
// read nothing generated at test time.
#include <capnp/message.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "reckon/protocol/frame.h"
#include "reckon/protocol/reckon.capnp.h"
#include "reckon/storage/event_codec.h"

namespace {

using namespace reckon;
namespace wire = reckon::api::wire;

bool Write(const std::string& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  return static_cast<bool>(out);
}

using Fill = std::function<void(wire::Request::Builder)>;

std::vector<std::pair<std::string, Fill>> Requests() {
  const char* contract =
      R"({"name":"lookup_payment","side_effect":"read_only","input_schema":{"type":"object"}})";
  return {
      {"start_workflow", [](wire::Request::Builder r) {
         auto s = r.getMethod().initStartWorkflow();
         s.setWorkflowId("refund-pay-3");
         s.setWorkflowType("refund");
         s.setInputJson(R"({"payment_id":"pay-3","amount_cents":1250})");
       }},
      {"signal_workflow", [](wire::Request::Builder r) {
         auto s = r.getMethod().initSignalWorkflow();
         s.setWorkflowId("refund-pay-3");
         s.setName("go");
         s.setPayloadJson("{}");
       }},
      {"cancel_workflow", [](wire::Request::Builder r) {
         auto s = r.getMethod().initCancelWorkflow();
         s.setWorkflowId("refund-pay-3");
         s.setReason("customer withdrew");
       }},
      {"decide_approval", [](wire::Request::Builder r) {
         auto d = r.getMethod().initDecideApproval();
         d.setWorkflowId("refund-pay-3");
         d.setOperationId("op-1");
         d.setExpectedIntentHash(std::string(64, 'a'));
         d.setGranted(true);
         d.setDecidedBy("alice");
         d.setReason("checked");
       }},
      {"resolve_operation", [](wire::Request::Builder r) {
         auto o = r.getMethod().initResolveOperation();
         o.setWorkflowId("refund-pay-3");
         o.setOperationId("op-1");
         o.setCommitted(true);
         o.setProviderRef("re_1");
         o.setResolvedBy("carol");
       }},
      {"register_worker", [contract](wire::Request::Builder r) {
         auto w = r.getMethod().initRegisterWorker();
         w.setWorkerId("worker-1");
         w.initWorkflowTypes(1).set(0, "refund");
         auto tool = w.initTools(1)[0];
         tool.setName("lookup_payment");
         tool.setContractJson(contract);
         w.setBuildId("build-7");
       }},
      {"poll_workflow_task", [](wire::Request::Builder r) {
         r.getMethod().initPollWorkflowTask().setWaitMs(1000);
       }},
      {"complete_workflow_task", [](wire::Request::Builder r) {
         auto c = r.getMethod().initCompleteWorkflowTask();
         c.setTaskToken(9);
         auto commands = c.initCommands(2);
         auto call = commands[0].initScheduleCall();
         call.setStepId("lookup");
         call.setTool("lookup_payment");
         call.setInputJson(R"({"payment_id":"pay-3"})");
         commands[1].setCompleteWorkflow(R"({"ok":true})");
       }},
      {"complete_tool_task", [](wire::Request::Builder r) {
         auto c = r.getMethod().initCompleteToolTask();
         c.setTaskToken(11);
         c.setWorkflowId("refund-pay-3");
         c.setOperationId("op-1");
         c.setAttempt(1);
         auto a = c.getOutcome().initAttempt();
         a.setSuccess(true);
         a.setOutputJson(R"({"id":"re_1"})");
         a.setProviderRef("re_1");
       }},
      {"describe_workflow", [](wire::Request::Builder r) {
         r.getMethod().initDescribeWorkflow().setWorkflowId("refund-pay-3");
       }},
      {"who_am_i", [](wire::Request::Builder r) { r.getMethod().setWhoAmI(); }},
  };
}

std::vector<std::pair<std::string, storage::EventBody>> Events() {
  using namespace reckon::storage;
  return {
      {"workflow_started", WorkflowStarted{"refund", R"({"n":1})", "abc", "alice", 2, "default",
                                           "r0", "order-1", "r7", "cancel"}},
      {"workflow_completed", WorkflowCompleted{R"({"ok":true})"}},
      {"workflow_cancel_requested", WorkflowCancelRequested{"user asked", "bob", true}},
      {"workflow_task_started", WorkflowTaskStarted{"worker-1", "build-7"}},
      {"operation_prepared", OperationPrepared{"s1", "op-1", "send_refund", "ch", "fp",
                                               SideEffect::kNonRepeatableWrite, "{}"}},
      {"approval_granted", ApprovalGranted{"op-1", "ap-1", "ih", "alice", 99}},
      {"attempt_started", AttemptStarted{"op-1", 3, "w", 1234, "ap-1"}},
      {"operation_committed",
       OperationCommitted{"op-1", 3, R"({"id":"re_1"})", "re_1", CommitSource::kAttempt}},
      {"outcome_unknown", OutcomeUnknown{"op-1", 2, "deadline_exceeded", 888}},
      {"reconciliation_result",
       ReconciliationResult{"op-1", 1, ReconcileVerdict::kStillUnknown, "", 999}},
      {"human_resolved", HumanResolved{"op-1", true, "re_9", "carol", "checked dashboard"}},
      {"timer_started", TimerStarted{"t1", 5}},
      {"retry_scheduled", RetryScheduled{"op-1", 2, 1234, RetryReason::kReconciledNotFound}},
      {"child_workflow_closed",
       ChildWorkflowClosed{"child#2", "ship-1", "r9", "failed", "", "out_of_stock", "none left"}},
      {"update_accepted", UpdateAccepted{"u-1", "instruct", R"({"instruction":"x"})", "operator"}},
  };
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_corpus <tests/fuzz/corpus>\n");
    return 2;
  }
  const std::string root = argv[1];
  std::uint64_t id = 1;
  for (const auto& [name, fill] : Requests()) {
    capnp::MallocMessageBuilder message;
    auto request = message.initRoot<wire::Request>();
    request.setId(id++);
    request.setCredential("rk_0123456789abcdef");
    fill(request);
    const api::Frame frame = api::EncodeFrame(message);
    if (!Write(root + "/request_frame/" + name + ".bin", frame.bytes().data(),
               frame.bytes().size())) {
      std::fprintf(stderr, "cannot write %s/request_frame/%s.bin\n", root.c_str(), name.c_str());
      return 1;
    }
  }
  for (const auto& [name, body] : Events()) {
    const std::string bytes = storage::EncodeEventBody(body);
    if (!Write(root + "/event/" + name + ".bin", bytes.data(), bytes.size())) {
      std::fprintf(stderr, "cannot write %s/event/%s.bin\n", root.c_str(), name.c_str());
      return 1;
    }
  }
  return 0;
}
