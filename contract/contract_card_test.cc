#include "reckon/contract/contract_card.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reckon/contract/operation_id_facts.h"
#include "reckon/contract/testing/test_contracts.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing_contracts::Lookup;
using testing_contracts::Payout;

// The answer to question `key`, its sentences joined by newlines.
std::string Answer(const ToolContract& c, std::string_view key) {
  boost::json::value card = ContractCardJson(c);
  for (const auto& q : card.at("questions").as_array()) {
    if (q.at("key").as_string() != key) continue;
    std::string out;
    for (const auto& sentence : q.at("answer").as_array()) {
      out += std::string(sentence.as_string()) + "\n";
    }
    return out;
  }
  ADD_FAILURE() << "no question " << key;
  return "";
}

const boost::json::value& Facts(const boost::json::value& card, std::string_view key) {
  for (const auto& q : card.at("questions").as_array()) {
    if (q.at("key").as_string() == key) return q.at("facts");
  }
  throw std::logic_error("no question");
}

TEST(ContractCardTest, AnswersTheEightQuestionsInOrder) {
  boost::json::value card = ContractCardJson(Payout());
  std::vector<std::string> keys;
  for (const auto& q : card.at("questions").as_array()) {
    keys.emplace_back(q.at("key").as_string());
    EXPECT_FALSE(q.at("answer").as_array().empty());
  }
  EXPECT_THAT(keys, ElementsAre("intended_effect", "side_effect", "operation_id", "errors",
                                "reconciliation", "approval", "duplicates", "evidence"));
  EXPECT_EQ(card.at("tool").as_string(), "send_payout");
  EXPECT_EQ(card.at("contract_hash").as_string().size(), 64u);
  EXPECT_FALSE(card.as_object().contains("problems"));
}

TEST(ContractCardTest, IntendedEffectAndEvidenceComeFromTheContract) {
  ToolContract c = Payout();
  c.description = "Move money to the payee's bank account.";
  c.evidence = "The transfer id from POST /transfers.";
  EXPECT_THAT(Answer(c, "intended_effect"), HasSubstr("Move money to the payee's bank account."));
  EXPECT_THAT(Answer(c, "evidence"), HasSubstr("The transfer id from POST /transfers."));
  EXPECT_THAT(Answer(c, "evidence"), HasSubstr("ReconciliationStarted"));
  EXPECT_THAT(Answer(Lookup(), "evidence"), Not(HasSubstr("ReconciliationStarted")));
  EXPECT_THAT(Answer(Lookup(), "evidence"), Not(HasSubstr("ApprovalRequested")));
}

TEST(ContractCardTest, ClassAnswerFollowsTheSideEffect) {
  ToolContract c = Payout();
  EXPECT_THAT(Answer(c, "side_effect"),
              AllOf(HasSubstr("non_repeatable_write"), HasSubstr("Only failures with the codes "
                                                                 "rate_limited"),
                    HasSubstr("At most 3 attempts in all, backoff 200 ms, x2 each time, at most "
                              "5 s")));
  c.side_effect = SideEffect::kDeduplicatedWrite;
  c.dedup_window = 24h;
  c.retry.reconcile_on_unknown = false;
  EXPECT_THAT(Answer(c, "side_effect"),
              AllOf(HasSubstr("deduplicated_write"), HasSubstr("for 24 h"),
                    Not(HasSubstr("non_repeatable_write: "))));
  EXPECT_THAT(Answer(c, "reconciliation"), HasSubstr("inside the 24 h dedup window"));
  EXPECT_THAT(Answer(Lookup(), "side_effect"), HasSubstr("read_only: a call changes nothing"));
  EXPECT_THAT(Answer(Lookup(), "reconciliation"), HasSubstr("A read has no effect to find"));
}

TEST(ContractCardTest, ErrorAnswerListsTheCodesOfEachKind) {
  ToolContract c = Payout();
  c.definitive_codes = {"insufficient_funds", "card_declined"};
  c.unknown_codes = {"gateway_timeout"};
  std::string errors = Answer(c, "errors");
  EXPECT_THAT(errors, HasSubstr("Definitive (the step fails; nothing happened): codes "
                                "insufficient_funds, card_declined;"));
  EXPECT_THAT(errors, HasSubstr("Retryable (provably not processed): codes rate_limited; a "
                                "\"retryable\" report with any other code is treated as unknown"));
  EXPECT_THAT(errors, HasSubstr("a timeout at the 2 s attempt deadline"));
  EXPECT_THAT(errors, HasSubstr("codes gateway_timeout"));
  EXPECT_THAT(Answer(Lookup(), "errors"), HasSubstr("any failure the tool reports as retryable"));
  boost::json::value facts = Facts(ContractCardJson(c), "errors");
  EXPECT_EQ(facts.at("definitive_codes").as_array().size(), 2u);
}

// The card's classes come from the classifier the engine acts on (failure_policy.h): a code
// listed twice is shown once, in the class that wins there.
TEST(ContractCardTest, ErrorClassesFollowTheFailurePolicy) {
  ToolContract c = Payout();
  c.definitive_codes = {"card_declined", "gateway_timeout"};
  c.unknown_codes = {"gateway_timeout"};
  boost::json::value facts = Facts(ContractCardJson(c), "errors");
  EXPECT_EQ(boost::json::serialize(facts.at("definitive_codes")), R"(["card_declined"])");
  EXPECT_EQ(boost::json::serialize(facts.at("unknown_codes")), R"(["gateway_timeout"])");
  EXPECT_THAT(Answer(c, "errors"), HasSubstr("codes card_declined;"));
}

// Answer 3 states the table that the derivation and the tool adapters use
// (operation_id_facts.h); tests/card checks it against real runs.
TEST(ContractCardTest, OperationIdAnswerStatesTheDerivationAndTheDelivery) {
  const std::string answer = Answer(Payout(), "operation_id");
  EXPECT_THAT(answer, HasSubstr("Derived from the run and the step: namespace, workflow_id, "
                                "run_id and step_id (runs journaled before release 0.3: "
                                "workflow_id and step_id)"));
  EXPECT_THAT(answer, HasSubstr("a C++ tool reads ctx.operation_id"));
  EXPECT_THAT(answer, HasSubstr("idempotency_key_header, none by default"));
  EXPECT_THAT(answer, HasSubstr("in _meta as dev.reckon/operation-id"));
  boost::json::value facts = Facts(ContractCardJson(Payout()), "operation_id");
  EXPECT_EQ(facts.at("mcp_meta_key").as_string(), kMcpOperationIdMetaKey);
  EXPECT_EQ(facts.at("derived_from").as_array().size(), kRunScopedIdInputs.size());
}

TEST(ContractCardTest, ReconciliationAnswerFollowsTheMode) {
  ToolContract c = Payout();
  std::string lookup = Answer(c, "reconciliation");
  EXPECT_THAT(lookup, HasSubstr("hard deadline (2 s) plus a grace of 500 ms"));
  EXPECT_THAT(lookup, HasSubstr("up to 4 lookups (backoff 1 s, x2 each time, at most 30 s)"));
  EXPECT_THAT(lookup, HasSubstr("not_found authorizes one new attempt"));
  c.reconcile.mode = ReconcileMode::kNeedsHuman;
  std::string human = Answer(c, "reconciliation");
  EXPECT_THAT(human, HasSubstr("parked as needs_human at once"));
  EXPECT_THAT(human, Not(HasSubstr("grace")));
}

TEST(ContractCardTest, ApprovalAnswerNamesTheRuleAndTheIntentFields) {
  ToolContract c = Payout();
  c.approval.wait_deadline = 86400s;
  std::string approval = Answer(c, "approval");
  EXPECT_THAT(approval, HasSubstr("Approval is required when amount_cents > 10000"));
  EXPECT_THAT(approval, HasSubstr("expires 1 h after it is given"));
  EXPECT_THAT(approval, HasSubstr("within 24 h the operation is rejected"));
  EXPECT_THAT(approval,
              HasSubstr("Intent fields (in the intent hash): payee, amount_cents, memo."));
  EXPECT_THAT(approval, HasSubstr("of traces): card_token."));
  boost::json::value facts = Facts(ContractCardJson(c), "approval");
  EXPECT_EQ(facts.at("intent_fields").as_array().size(), 3u);

  c.secret_fields.clear();
  EXPECT_THAT(Answer(c, "approval"), HasSubstr("payee, amount_cents, memo, card_token."));
  EXPECT_THAT(Answer(Lookup(), "approval"),
              AllOf(HasSubstr("never required"),
                    HasSubstr("payee, and any member the schema does not declare")));
}

TEST(ContractCardTest, OperationIdAndDuplicatesDependOnTheClass) {
  EXPECT_THAT(Answer(Payout(), "operation_id"),
              AllOf(HasSubstr("namespace, workflow_id, run_id and step_id"),
                    HasSubstr("OperationPrepared"), HasSubstr("ctx.operation_id"),
                    HasSubstr("the header its tools file names"), HasSubstr("_meta"),
                    HasSubstr("the reconcile lookup searches")));
  EXPECT_THAT(Answer(Lookup(), "operation_id"), HasSubstr("nothing to deduplicate"));
  EXPECT_THAT(Answer(Payout(), "duplicates"),
              AllOf(HasSubstr("fences it"), HasSubstr("evidence that the operation committed")));
  EXPECT_THAT(Answer(Lookup(), "duplicates"), HasSubstr("a read has no effect"));
}

TEST(ContractCardTest, DuplicatesOfCallbacksAndSignalsAreAnswered) {
  EXPECT_THAT(Answer(Payout(), "duplicates"), HasSubstr("request id is applied once"));
  EXPECT_THAT(Answer(Payout(), "duplicates"), Not(HasSubstr("delivery id")));
  ToolContract async = Payout();
  async.completion.deadline = std::chrono::minutes(10);
  EXPECT_THAT(Answer(async, "duplicates"),
              AllOf(HasSubstr("within 10 min"), HasSubstr("delivery id"),
                    HasSubstr("reconciled, never retried blindly")));
  EXPECT_THAT(Answer(async, "evidence"), HasSubstr("AttemptAccepted and CompletionReceived"));
}

TEST(ContractCardTest, TextCardRendersEveryAnswerAndFlagsInvalidContracts) {
  std::string text = RenderContractCard(Payout());
  EXPECT_THAT(text, HasSubstr("Contract card: send_payout (non_repeatable_write)"));
  EXPECT_THAT(text, HasSubstr("\n1. What is the intended effect?\n   Pay an amount to a payee.\n"));
  EXPECT_THAT(text, HasSubstr("\n8. What evidence proves the final state?\n"));
  for (std::size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos;
       start = end + 1) {
    EXPECT_LE(end - start, 100u) << text.substr(start, end - start);
  }
  ToolContract broken = Payout();
  broken.reconcile.mode = ReconcileMode::kUnset;
  EXPECT_THAT(RenderContractCard(broken), HasSubstr("!! REFUSED at registration: contract "
                                                    "'send_payout': non_repeatable_write needs"));
  EXPECT_THAT(RenderContractCard(broken), HasSubstr("no reconcile policy is declared"));
}

}  // namespace
}  // namespace reckon
