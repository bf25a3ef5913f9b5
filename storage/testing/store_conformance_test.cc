// The outbox and principal stores beside each journal backend (journal_conformance.h):
// compiled into each backend's test binary, which instantiates the suite.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "reckon/storage/testing/journal_conformance.h"
#include "reckon/storage/testing/reversing_codec.h"

namespace reckon::storage {
namespace {

AppendRequest PublishStep(std::int64_t next_seq, std::vector<OutboxMessage> outbox) {
  AppendRequest request;
  request.run = {"wf-1", "r1"};
  request.expected_next_seq = next_seq;
  request.now_us = 1000 * next_seq;
  if (next_seq == 1) {
    request.workflow_type = "order";
    request.events.push_back(WorkflowStarted{"order", "{}", ""});
  }
  request.events.push_back(MarkerRecorded{"publish#1", "publish", "{}"});
  request.outbox = std::move(outbox);
  return request;
}

PrincipalRow Principal(std::string name, std::string hash) {
  PrincipalRow row;
  row.name = std::move(name);
  row.role = "approver";
  row.scopes = {"tool:send_refund", "tool:payout"};
  row.token_hash = std::move(hash);
  row.created_at_us = 100;
  row.created_by = "admin";
  row.expires_at_us = 900;
  return row;
}

AuditRow Audit(std::string action, std::string subject) {
  return AuditRow{100, "admin", std::move(action), std::move(subject), "{}"};
}

TEST_P(JournalConformanceTest, OutboxMessagesComeWithTheStepsEvents) {
  auto store = backend_->OpenOutboxStore(nullptr);
  ASSERT_TRUE(store) << store.error().ToString();
  ASSERT_TRUE(journal_->Append(
      PublishStep(1, {OutboxMessage{"msg_a", "publish#1", "orders", std::string("he\0llo", 6)}})));
  auto due = store.value()->ListDue(5000, 10);
  ASSERT_TRUE(due) << due.error().ToString();
  ASSERT_EQ(due.value().size(), 1u);
  EXPECT_EQ(due.value()[0].message_id, "msg_a");
  EXPECT_EQ(due.value()[0].step_id, "publish#1");
  EXPECT_EQ(due.value()[0].subject, "orders");
  EXPECT_EQ(due.value()[0].payload, std::string("he\0llo", 6));
  EXPECT_EQ(due.value()[0].created_at_us, 1000);
  EXPECT_GT(due.value()[0].run_pk, 0);

  // A stale writer is refused: neither its events nor its message land.
  auto stale = journal_->Append(PublishStep(1, {OutboxMessage{"msg_b", "publish#1", "o", "x"}}));
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), Errc::kConflict);
  // A message id already in the outbox refuses the whole request, events included.
  auto again = journal_->Append(PublishStep(3, {OutboxMessage{"msg_a", "publish#1", "o", "y"}}));
  ASSERT_FALSE(again);
  auto events = journal_->ReadEvents(RunRef{"wf-1", "r1"});
  ASSERT_TRUE(events);
  EXPECT_EQ(events.value().size(), 2u);
  auto all = store.value()->List(false, 10);
  ASSERT_TRUE(all);
  ASSERT_EQ(all.value().size(), 1u);
  EXPECT_EQ(all.value()[0].payload, "") << "listings carry no payloads";
}

TEST_P(JournalConformanceTest, OutboxPayloadsAreSealedWhenTheJournalHasACodec) {
  ReversingCodec codec;
  journal_.reset();
  auto journal = backend_->Reopen(&codec);
  ASSERT_TRUE(journal) << journal.error().ToString();
  ASSERT_TRUE(journal.value()->Append(
      PublishStep(1, {OutboxMessage{"msg_s", "publish#1", "orders", "secret-amount"}})));
  EXPECT_EQ(Count("SELECT count(*) FROM outbox WHERE key_id = 'k1'"), 1);
  auto store = backend_->OpenOutboxStore(&codec);
  ASSERT_TRUE(store) << store.error().ToString();
  auto due = store.value()->ListDue(5000, 10);
  ASSERT_TRUE(due) << due.error().ToString();
  ASSERT_EQ(due.value().size(), 1u);
  EXPECT_EQ(due.value()[0].payload, "secret-amount");
  // Without the codec the store says which key it needs instead of returning sealed bytes.
  auto keyless = backend_->OpenOutboxStore(nullptr);
  ASSERT_TRUE(keyless);
  auto refused = keyless.value()->ListDue(5000, 10);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(refused.error().message().find("k1"), std::string::npos);
}

TEST_P(JournalConformanceTest, OutboxRecordsEveryAttemptAndTheAck) {
  auto opened = backend_->OpenOutboxStore(nullptr);
  ASSERT_TRUE(opened) << opened.error().ToString();
  OutboxStore& store = *opened.value();
  ASSERT_TRUE(journal_->Append(PublishStep(1, {OutboxMessage{"msg_r", "publish#1", "o", "p"}})));
  ASSERT_TRUE(store.RecordAttempt(OutboxAttempt{"msg_r", 2000, false, false, 0, "no responders",
                                                9000}));
  EXPECT_TRUE(store.ListDue(5000, 10).value().empty());  // not due before its retry time
  EXPECT_EQ(store.NextDueAt().value(), std::optional<std::int64_t>(9000));
  ASSERT_EQ(store.ListDue(9000, 10).value().size(), 1u);
  ASSERT_TRUE(store.RecordAttempt(OutboxAttempt{"msg_r", 9000, true, true, 42, "", 0}));
  EXPECT_TRUE(store.ListDue(100000, 10).value().empty());
  EXPECT_EQ(store.NextDueAt().value(), std::nullopt);
  auto rows = store.List(false, 10);
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows.value().size(), 1u);
  EXPECT_EQ(rows.value()[0].attempts, 2);
  EXPECT_EQ(rows.value()[0].stream_seq, 42);
  EXPECT_EQ(rows.value()[0].published_at_us, 9000);
  EXPECT_TRUE(store.List(true, 10).value().empty());
  auto attempts = store.ListAttempts("msg_r");
  ASSERT_TRUE(attempts);
  ASSERT_EQ(attempts.value().size(), 2u);
  EXPECT_EQ(attempts.value()[0].outcome, "failed");
  EXPECT_EQ(attempts.value()[0].error, "no responders");
  EXPECT_EQ(attempts.value()[1].outcome, "duplicate");
  EXPECT_EQ(attempts.value()[1].stream_seq, 42);
  auto unknown = store.RecordAttempt(OutboxAttempt{"msg_none", 1, true, false, 1, "", 0});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), Errc::kNotFound);
}

TEST_P(JournalConformanceTest, OutboxBacklogCountsUnacknowledgedMessagesAndDatesTheOldest) {
  auto opened = backend_->OpenOutboxStore(nullptr);
  ASSERT_TRUE(opened) << opened.error().ToString();
  OutboxStore& store = *opened.value();
  EXPECT_EQ(store.PendingBacklog().value().pending, 0);
  EXPECT_EQ(store.PendingBacklog().value().oldest_created_at_us, 0);
  ASSERT_TRUE(journal_->Append(PublishStep(1, {OutboxMessage{"msg_1", "publish#1", "o", "a"}})));
  ASSERT_TRUE(journal_->Append(PublishStep(3, {OutboxMessage{"msg_2", "publish#1", "o", "b"}})));
  auto backlog = store.PendingBacklog();
  ASSERT_TRUE(backlog) << backlog.error().ToString();
  EXPECT_EQ(backlog.value().pending, 2);
  const std::int64_t first_created = backlog.value().oldest_created_at_us;
  EXPECT_GT(first_created, 0);
  // A failed attempt leaves it pending; an ack takes it out, and the next one is the oldest.
  ASSERT_TRUE(store.RecordAttempt(OutboxAttempt{"msg_1", 4000, false, false, 0, "down", 9000}));
  EXPECT_EQ(store.PendingBacklog().value().pending, 2);
  ASSERT_TRUE(store.RecordAttempt(OutboxAttempt{"msg_1", 9000, true, false, 1, "", 0}));
  EXPECT_EQ(store.PendingBacklog().value().pending, 1);
  EXPECT_GT(store.PendingBacklog().value().oldest_created_at_us, first_created);
  ASSERT_TRUE(store.RecordAttempt(OutboxAttempt{"msg_2", 9000, true, false, 2, "", 0}));
  EXPECT_EQ(store.PendingBacklog().value().pending, 0);
  EXPECT_EQ(store.PendingBacklog().value().oldest_created_at_us, 0);
}

TEST_P(JournalConformanceTest, OutboxAttemptsOfAPassAreRecordedAllOrNothing) {
  auto opened = backend_->OpenOutboxStore(nullptr);
  ASSERT_TRUE(opened) << opened.error().ToString();
  OutboxStore& store = *opened.value();
  ASSERT_TRUE(journal_->Append(PublishStep(1, {OutboxMessage{"msg_1", "publish#1", "o", "a"}})));
  ASSERT_TRUE(journal_->Append(PublishStep(3, {OutboxMessage{"msg_2", "publish#1", "o", "b"}})));
  const std::vector<OutboxAttempt> with_unknown = {
      {"msg_1", 5000, true, false, 1, "", 0}, {"msg_none", 5000, true, false, 2, "", 0}};
  auto refused = store.RecordAttempts(with_unknown);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kNotFound);
  EXPECT_EQ(store.PendingBacklog().value().pending, 2);  // msg_1's ack was not kept either
  EXPECT_TRUE(store.ListAttempts("msg_1").value().empty());
  const std::vector<OutboxAttempt> pass = {{"msg_1", 6000, true, false, 1, "", 0},
                                           {"msg_2", 6000, false, false, 0, "down", 9000}};
  ASSERT_TRUE(store.RecordAttempts(pass));
  EXPECT_EQ(store.PendingBacklog().value().pending, 1);
  EXPECT_EQ(store.ListAttempts("msg_2").value().at(0).outcome, "failed");
  EXPECT_EQ(store.NextDueAt().value(), std::optional<std::int64_t>(9000));
}

TEST_P(JournalConformanceTest, PrincipalsAreCreatedFoundByHashAndListed) {
  auto opened = backend_->OpenPrincipalStore();
  ASSERT_TRUE(opened) << opened.error().ToString();
  PrincipalStore& store = *opened.value();
  ASSERT_TRUE(store.Create(Principal("ann", "h1"), Audit("token_create", "ann")));
  auto found = store.FindByTokenHash("h1");
  ASSERT_TRUE(found);
  ASSERT_TRUE(found.value().has_value());
  const PrincipalRow& ann = *found.value();
  EXPECT_EQ(ann.name, "ann");
  EXPECT_EQ(ann.role, "approver");
  EXPECT_EQ(ann.scopes, (std::vector<std::string>{"tool:send_refund", "tool:payout"}));
  EXPECT_EQ(ann.expires_at_us, 900);
  EXPECT_EQ(ann.revoked_at_us, 0);
  EXPECT_FALSE(store.FindByTokenHash("h2").value().has_value());
  auto all = store.List();
  ASSERT_TRUE(all);
  ASSERT_EQ(all.value().size(), 1u);
}

TEST_P(JournalConformanceTest, APrincipalNameIsUniqueAmongLiveOnesAndFreeAgainAfterRevoke) {
  auto opened = backend_->OpenPrincipalStore();
  ASSERT_TRUE(opened) << opened.error().ToString();
  PrincipalStore& store = *opened.value();
  ASSERT_TRUE(store.Create(Principal("ann", "h1"), Audit("token_create", "ann")));
  auto twice = store.Create(Principal("ann", "h2"), Audit("token_create", "ann"));
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code(), Errc::kAlreadyExists);
  EXPECT_NE(twice.error().message().find("revoke it first"), std::string::npos);

  auto revoked = store.Revoke("ann", 200, "root", Audit("token_revoke", "ann"));
  ASSERT_TRUE(revoked) << revoked.error().ToString();
  EXPECT_EQ(revoked.value().revoked_at_us, 200);
  EXPECT_EQ(revoked.value().token_hash, "h1");
  EXPECT_EQ(store.FindByTokenHash("h1").value()->revoked_by, "root");
  auto again = store.Revoke("ann", 300, "root", Audit("token_revoke", "ann"));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), Errc::kNotFound);

  ASSERT_TRUE(store.Create(Principal("ann", "h2"), Audit("token_create", "ann")));
  EXPECT_EQ(store.List().value().size(), 2u);  // the revoked one stays listed
  auto audit = store.ReadAudit();
  ASSERT_TRUE(audit);
  ASSERT_EQ(audit.value().size(), 3u);  // create, revoke, create: the failed ones left none
  EXPECT_EQ(audit.value()[1].action, "token_revoke");
}

TEST_P(JournalConformanceTest, AFailedPrincipalCreateLeavesNoAuditRow) {
  auto opened = backend_->OpenPrincipalStore();
  ASSERT_TRUE(opened) << opened.error().ToString();
  PrincipalStore& store = *opened.value();
  ASSERT_TRUE(store.Create(Principal("ann", "h1"), Audit("token_create", "ann")));
  ASSERT_FALSE(store.Create(Principal("bob", "h1"), Audit("token_create", "bob")));  // same hash
  EXPECT_EQ(store.ReadAudit().value().size(), 1u);
  EXPECT_EQ(store.List().value().size(), 1u);
}

}  // namespace
}  // namespace reckon::storage
