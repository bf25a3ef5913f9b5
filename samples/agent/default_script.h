// The scripted model's replies for the sample goal: look two payments up, refund 500 cents of
// each, then say it is done. Also written to a file for fake-chat-server in the crash test.
#pragma once

#include <string>
#include <vector>

namespace reckon::agent {

inline std::vector<std::string> DefaultScript() {
  return {
      R"({"steps": [{"id": "lookup8", "tool": "lookup_payment", "input": {"payment_id": "pay-8"}},
                    {"id": "lookup9", "tool": "lookup_payment", "input": {"payment_id": "pay-9"}}]})",
      R"({"steps": [{"id": "refund8", "tool": "send_refund",
                     "input": {"payment_id": "pay-8", "amount_cents": 500, "reason": "goodwill credit"}},
                    {"id": "refund9", "tool": "send_refund",
                     "input": {"payment_id": "pay-9", "amount_cents": 500, "reason": "goodwill credit"}}]})",
      R"({"done": true, "summary": "Refunded 500 cents on pay-8 and on pay-9."})"};
}

inline constexpr char kDefaultGoal[] =
    "Customers pay-8 and pay-9 complained: look their payments up and refund 500 cents of each "
    "as a goodwill credit.";

}  // namespace reckon::agent
