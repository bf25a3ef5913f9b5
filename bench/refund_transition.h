// RefundTransition: the append of one refund step (its OperationPrepared with a ~250-byte
// input and its OperationCommitted, plus the operation row) of run `run` at sequence number
// `seq`: the unit of work the journal benchmarks repeat. Plain values.
#pragma once

#include <cstdint>
#include <string>

#include "reckon/storage/journal.h"

namespace reckon::bench {

inline storage::AppendRequest RefundTransition(int run, std::int64_t seq) {
  using namespace reckon::storage;
  AppendRequest request;
  request.run = {"refund-" + std::to_string(run), "r1"};
  request.expected_next_seq = seq;
  request.now_us = seq;
  const std::string op = "op-" + std::to_string(run) + "-" + std::to_string(seq);
  const std::string input = R"({"payment_id":"pay-)" + std::to_string(run) +
                            R"(","amount_cents":1250,"currency":"EUR","reason":")" +
                            std::string(180, 'r') + R"("})";
  request.events = {
      OperationPrepared{"refund", op, "send_refund", "ch-7f3a", "fp-" + op,
                        reckon::SideEffect::kNonRepeatableWrite, input},
      OperationCommitted{op, 1, R"({"refund_id":"re_)" + op + R"(","status":"succeeded"})",
                         "re_" + op, CommitSource::kAttempt}};
  request.operations = {OperationRow{op, "refund", "send_refund",
                                     reckon::SideEffect::kNonRepeatableWrite, "committed", 1,
                                     "fp-" + op, "ch-7f3a", "re_" + op, 0}};
  return request;
}

}  // namespace reckon::bench
