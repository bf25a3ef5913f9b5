#include "reckon/storage/testing/journal_requests.h"

namespace reckon::storage {

AppendRequest MarkerStep(const std::string& workflow_id, std::int64_t seq) {
  AppendRequest request;
  request.run = {workflow_id, "r1"};
  request.expected_next_seq = seq;
  request.now_us = seq;
  request.events = {MarkerRecorded{"m" + std::to_string(seq), "now", std::to_string(seq)}};
  return request;
}

Result<void> FillRuns(Journal& journal, int runs) {
  for (int i = 0; i < runs; ++i) {
    AppendRequest request;
    request.run = {"wf-" + std::to_string(i), "r1"};
    request.now_us = 1000 + i;
    request.workflow_type = "refund";
    for (int e = 0; e < 20; ++e) {
      request.events.push_back(WorkflowStarted{"refund", std::string(300, 'a' + e % 26), ""});
    }
    request.operations = {OperationRow{"op-" + std::to_string(i), "s", "noop",
                                       SideEffect::kReadOnly, "committed", 1, "fp", "ch", "ref",
                                       0}};
    RECKON_TRY(journal.Append(request));
  }
  return Ok();
}

}  // namespace reckon::storage
