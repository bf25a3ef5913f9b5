#include "reckon/storage/history_file.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "reckon/base/base64.h"
#include "reckon/storage/event_codec.h"
#include "reckon/storage/payload_codec.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

namespace json = boost::json;

HistoryFile SampleHistory() {
  HistoryFile h{"refund-1", "run-abc", "refund", {}};
  std::vector<EventBody> bodies = {
      WorkflowStarted{"refund", R"({"payment_id":"pay-1","reason":"dup"})", "", "alice"},
      OperationPrepared{"lookup_payment#1", "op-1", "lookup_payment", "ch", "ih",
                        SideEffect::kReadOnly, R"({"payment_id":"pay-1"})", 2, true},
      AttemptStarted{"op-1", 1, "local", 1234, ""},
      OperationCommitted{"op-1", 1, R"({"amount_cents":1500})", "", CommitSource::kAttempt},
      TimerStarted{"sleep#2", 99},
      TimerFired{"sleep#2"},
      SignalReceived{"approved", R"("yes")", "bob"},
      MarkerRecorded{"now#3", "now", "1700000000000000"},
      WorkflowCompleted{R"({"refund_id":"re_1"})"},
  };
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    h.events.push_back(Event{static_cast<std::int64_t>(i) + 1,
                             1700000000000000 + static_cast<std::int64_t>(i), bodies[i]});
  }
  return h;
}

void ExpectSame(const HistoryFile& a, const HistoryFile& b) {
  EXPECT_EQ(a.workflow_id, b.workflow_id);
  EXPECT_EQ(a.run_id, b.run_id);
  EXPECT_EQ(a.workflow_type, b.workflow_type);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].seq, b.events[i].seq);
    EXPECT_EQ(a.events[i].recorded_at_us, b.events[i].recorded_at_us);
    EXPECT_EQ(a.events[i].body.index(), b.events[i].body.index());
    EXPECT_EQ(EncodeEventBody(a.events[i].body), EncodeEventBody(b.events[i].body)) << i;
  }
}

// The formatted sample, parsed as JSON, for a test to damage.
json::object SampleDocument() {
  auto text = FormatHistory(SampleHistory());
  EXPECT_TRUE(text) << text.error().message();
  return json::parse(text.value()).as_object();
}

json::object& EventAt(json::object& doc, std::size_t i) {
  return doc["events"].as_array()[i].as_object();
}

// Parses the damaged document and returns the error's message (the test fails on success).
std::string ParseError(const json::object& doc) {
  auto parsed = ParseHistory(json::serialize(doc));
  EXPECT_FALSE(parsed);
  if (parsed) return "";
  EXPECT_EQ(parsed.error().code(), Errc::kInvalidArgument) << parsed.error().message();
  return parsed.error().message();
}

TEST(HistoryFileTest, RoundTripsEveryFieldOfTheEvents) {
  auto text = FormatHistory(SampleHistory());
  ASSERT_TRUE(text) << text.error().message();
  auto parsed = ParseHistory(text.value());
  ASSERT_TRUE(parsed) << parsed.error().message();
  ExpectSame(parsed.value(), SampleHistory());
  // Formatting what was read gives the same text: the file is a fixed point.
  auto again = FormatHistory(parsed.value());
  ASSERT_TRUE(again);
  EXPECT_EQ(again.value(), text.value());
}

TEST(HistoryFileTest, WritesOneEventPerLineWithAReadableCopy) {
  json::object doc = SampleDocument();
  EXPECT_EQ(doc["format"], "reckon-history/1");
  const json::object& prepared = EventAt(doc, 1);
  EXPECT_EQ(prepared.at("type"), "OperationPrepared");
  EXPECT_EQ(prepared.at("event").as_object().at("stepId"), "lookup_payment#1");
  auto text = FormatHistory(SampleHistory());
  ASSERT_TRUE(text);
  std::size_t lines = 0;
  for (char c : text.value()) lines += c == '\n';
  EXPECT_EQ(lines, 5 + SampleHistory().events.size() + 1);
}

TEST(HistoryFileTest, IgnoresTheReadableCopyAndUnknownKeysOnRead) {
  json::object doc = SampleDocument();
  EventAt(doc, 1)["event"] = json::object{{"stepId", "edited by hand"}};
  EventAt(doc, 2).erase("event");
  doc["exported_by"] = "a note";
  auto parsed = ParseHistory(json::serialize(doc));
  ASSERT_TRUE(parsed) << parsed.error().message();
  ExpectSame(parsed.value(), SampleHistory());
}

TEST(HistoryFileTest, WritesAndReadsAFile) {
  testing::TempDir dir;
  const std::string path = dir.File("refund-1.json");
  ASSERT_TRUE(WriteHistoryFile(path, SampleHistory()));
  auto read = ReadHistoryFile(path);
  ASSERT_TRUE(read) << read.error().message();
  ExpectSame(read.value(), SampleHistory());
  EXPECT_FALSE(std::ifstream(path + ".tmp"));
}

TEST(HistoryFileTest, AMissingFileIsNotFoundAndNamed) {
  testing::TempDir dir;
  auto read = ReadHistoryFile(dir.File("absent.json"));
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), Errc::kNotFound);
  EXPECT_NE(read.error().message().find("absent.json"), std::string::npos);
}

TEST(HistoryFileTest, ErrorsOfAFileNameTheFile) {
  testing::TempDir dir;
  const std::string path = dir.File("broken.json");
  std::ofstream(path) << "{\"format\": \"reckon-history/2\"}";
  auto read = ReadHistoryFile(path);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(read.error().message().rfind(path + ": history: \"format\" is 'reckon-history/2'", 0),
            0u)
      << read.error().message();
}

TEST(HistoryFileTest, RefusesAnotherFormatVersion) {
  json::object doc = SampleDocument();
  doc["format"] = "reckon-history/2";
  EXPECT_NE(ParseError(doc).find("which this release cannot read (it reads 'reckon-history/1')"),
            std::string::npos);
  doc["format"] = "something-else";
  EXPECT_NE(ParseError(doc).find("not a Reckon history file"), std::string::npos);
  doc.erase("format");
  EXPECT_NE(ParseError(doc).find("\"format\" is missing"), std::string::npos);
}

TEST(HistoryFileTest, RefusesTextThatIsNotAJsonObject) {
  EXPECT_FALSE(ParseHistory("{\"format\": "));
  EXPECT_NE(ParseHistory("[1, 2]").error().message().find("not a JSON object"), std::string::npos);
}

TEST(HistoryFileTest, RefusesBadBase64NamingTheEvent) {
  json::object doc = SampleDocument();
  EventAt(doc, 2)["payload"] = "AAAA*AAA";
  const std::string message = ParseError(doc);
  EXPECT_NE(message.find("events[2] (seq 3): \"payload\" is not base64"), std::string::npos)
      << message;
  EXPECT_NE(message.find("'*' at offset 4"), std::string::npos) << message;
}

TEST(HistoryFileTest, RefusesAPayloadThatDoesNotDecode) {
  json::object doc = SampleDocument();
  EventAt(doc, 3)["payload"] = EncodeBase64("not a capnp message");
  const std::string message = ParseError(doc);
  EXPECT_NE(message.find("events[3] (seq 4): \"payload\" is not an EventPayload"),
            std::string::npos)
      << message;
}

TEST(HistoryFileTest, RefusesATypeThatIsNotThePayloads) {
  json::object doc = SampleDocument();
  EventAt(doc, 3)["type"] = "OperationRejected";
  EXPECT_NE(ParseError(doc).find("\"type\" is 'OperationRejected' but the payload is "
                                 "OperationCommitted"),
            std::string::npos);
}

TEST(HistoryFileTest, RefusesASeqGap) {
  json::object doc = SampleDocument();
  doc["events"].as_array().erase(doc["events"].as_array().begin() + 4);
  const std::string message = ParseError(doc);
  EXPECT_NE(message.find("events[4] has seq 6 where 5 belongs"), std::string::npos) << message;
  // Writing checks the same: a history with a gap is never written.
  HistoryFile history = SampleHistory();
  history.events.erase(history.events.begin() + 4);
  auto text = FormatHistory(history);
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message().find("has seq 6 where 5 belongs"), std::string::npos);
}

TEST(HistoryFileTest, RefusesMissingOrMistypedFields) {
  json::object doc = SampleDocument();
  EventAt(doc, 0).erase("recorded_at_us");
  EXPECT_NE(ParseError(doc).find("events[0]: \"recorded_at_us\" is missing"), std::string::npos);
  doc = SampleDocument();
  EventAt(doc, 0)["seq"] = "1";
  EXPECT_NE(ParseError(doc).find("events[0]: \"seq\" must be an integer"), std::string::npos);
  doc = SampleDocument();
  doc["run_id"] = 7;
  EXPECT_NE(ParseError(doc).find("\"run_id\" must be a string"), std::string::npos);
  doc = SampleDocument();
  doc["events"] = json::array();
  EXPECT_NE(ParseError(doc).find("\"events\" is empty"), std::string::npos);
}

TEST(HistoryFileTest, RefusesARunThatDoesNotBeginWithItsStart) {
  json::object doc = SampleDocument();
  doc["workflow_type"] = "agent_loop";
  EXPECT_NE(ParseError(doc).find("\"workflow_type\" is 'agent_loop' but the run's "
                                 "WorkflowStarted says 'refund'"),
            std::string::npos);
  HistoryFile history = SampleHistory();
  history.events.erase(history.events.begin());
  for (std::size_t i = 0; i < history.events.size(); ++i) history.events[i].seq = i + 1;
  auto text = FormatHistory(history);
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message().find("the first event is OperationPrepared, not "
                                        "WorkflowStarted"),
            std::string::npos);
}

// A codec that "seals" by copying: enough to build the journal's sealed form of an event.
class CopyCodec final : public PayloadCodec {
 public:
  Result<SealedPayload> Seal(std::string_view plaintext, std::string_view) const override {
    return SealedPayload{id_, std::string(plaintext)};
  }
  Result<std::string> Open(std::string_view, std::string_view box,
                           std::string_view) const override {
    return std::string(box);
  }
  const std::string& sealing_key_id() const override { return id_; }

 private:
  std::string id_ = "k1";
};

TEST(HistoryFileTest, RefusesASealedPayload) {
  const CopyCodec codec;
  const HistoryFile history = SampleHistory();
  auto sealed = EncodeStoredEvent(history.events[3].body,
                                  EventPlace{history.workflow_id, history.run_id, 4}, &codec);
  ASSERT_TRUE(sealed) << sealed.error().message();
  ASSERT_NE(sealed.value(), EncodeEventBody(history.events[3].body));
  json::object doc = SampleDocument();
  EventAt(doc, 3)["payload"] = EncodeBase64(sealed.value());
  const std::string message = ParseError(doc);
  EXPECT_NE(message.find("events[3] (seq 4): \"payload\" is not an EventPayload"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("sealed event (payload key 'k1')"), std::string::npos) << message;
}

}  // namespace
}  // namespace reckon::storage
