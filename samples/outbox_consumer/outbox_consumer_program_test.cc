// reckon-outbox-consumer as a process against a real nats-server (tests/support/nats_server.h):
// messages published with Nats-Msg-Id (through the outbox's NatsPublisher) are processed once,
// a copy the broker stored again (past its duplicate window) is skipped and counted durably,
// a broker that is down at the start is waited for, and bad flags or a missing stream end the
// program with a message that says what to fix.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include "reckon/outbox/nats_publisher.h"
#include "reckon/testkit/gtest.h"
#include "tests/support/nats_server.h"
#include "tests/support/reckon_server.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace reckon::samples {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;
using testing::Subprocess;
using testing::SubprocessOptions;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ConsumerProgramTest : public ::testing::Test {
 protected:
  void StartBroker(std::chrono::milliseconds duplicate_window = 2min) {
    auto started = testing::NatsServer::Start({.program = RECKON_NATS_SERVER, .dir = dir_.path()});
    ASSERT_TRUE(started) << started.error().ToString();
    broker_ = std::move(started).value();
    auto declared = broker_->AddStream("ORDERS", {"orders.>"}, duplicate_window);
    ASSERT_TRUE(declared) << declared.error().ToString();
  }

  Result<Subprocess> StartConsumer(std::vector<std::string> extra = {}) {
    SubprocessOptions options;
    options.args = {"--nats-url", broker_->url(),  "--stream", "ORDERS", "--subject", "orders.>",
                    "--durable",  "orders-sample", "--db",     db(),     "--ack-wait-ms", "1000"};
    options.args.insert(options.args.end(), extra.begin(), extra.end());
    options.stderr_path = log();
    return Subprocess::Start(RECKON_OUTBOX_CONSUMER, std::move(options));
  }

  // Runs the program with `args` to its end: its exit status and stdout.
  std::pair<testing::ExitStatus, std::string> Run(std::vector<std::string> args) {
    SubprocessOptions options;
    options.args = std::move(args);
    options.stderr_path = log();
    auto process = Subprocess::Start(RECKON_OUTBOX_CONSUMER, std::move(options));
    EXPECT_TRUE(process);
    if (!process) return {};
    auto out = process.value().ReadAll(30s);
    auto status = process.value().Wait();
    return {status.value(), out ? out.value() : ""};
  }

  // The report; with `quiet`, a failed one (no database yet) is an empty object.
  json::object Report(bool quiet = false) {
    auto [status, out] = Run({"--report", "--json", "--db", db()});
    if (!quiet) {
      EXPECT_TRUE(status.Succeeded()) << status.ToString() << "\n" << ReadFile(log());
    }
    boost::system::error_code ec;
    json::value parsed = json::parse(out, ec);
    if (ec || !parsed.is_object()) return {};
    return parsed.as_object();
  }
  std::int64_t Count(const char* key) {
    json::object report = Report(/*quiet=*/true);
    return report.contains(key) ? report.at(key).to_number<std::int64_t>() : -1;
  }

  void Publish(const std::string& id, const std::string& payload) {
    outbox::NatsPublisher publisher(outbox::NatsPublisherOptions{.url = broker_->url()});
    auto acked = publisher.Publish("orders.created", id, payload);
    ASSERT_TRUE(acked) << acked.error().ToString();
  }

  std::string db() const { return dir_.File("consumer.db"); }
  std::string log() const { return dir_.File("consumer.log"); }

  testing::TempDir dir_;
  std::unique_ptr<testing::NatsServer> broker_;
};

TEST_F(ConsumerProgramTest, ProcessesEachMessageOnceAndStopsOnSigterm) {
  ASSERT_NO_FATAL_FAILURE(StartBroker());
  ASSERT_NO_FATAL_FAILURE(Publish("msg_1", R"({"n":1})"));
  ASSERT_NO_FATAL_FAILURE(Publish("msg_2", R"({"n":2})"));
  ASSERT_NO_FATAL_FAILURE(Publish("msg_1", R"({"n":1})"));  // the broker drops this copy
  auto consumer = StartConsumer();
  ASSERT_TRUE(consumer) << consumer.error().ToString();
  EXPECT_TRUE(testing::Eventually([&] { return Count("processed") == 2; }))
      << ReadFile(log());
  ASSERT_NO_FATAL_FAILURE(Publish("msg_3", R"({"n":3})"));
  EXPECT_TRUE(testing::Eventually([&] { return Count("processed") == 3; })) << ReadFile(log());
  auto stopped = consumer.value().Terminate(10s);
  ASSERT_TRUE(stopped);
  EXPECT_TRUE(stopped.value().Succeeded()) << stopped.value().ToString() << ReadFile(log());
  json::object report = Report();
  EXPECT_EQ(report.at("effects").to_number<std::int64_t>(), 3);
  EXPECT_EQ(report.at("effect_ids").to_number<std::int64_t>(), 3);
  EXPECT_EQ(report.at("duplicates_skipped").to_number<std::int64_t>(), 0);

  auto [status, text] = Run({"--report", "--db", db()});
  EXPECT_TRUE(status.Succeeded());
  EXPECT_EQ(text, "processed 3\nduplicates_skipped 0\neffects 3\neffect_ids 3\n");
}

// Past the broker's duplicate window a republished id is stored again; the consumer skips the
// copy, and the count of skipped copies survives a SIGKILL of the consumer.
TEST_F(ConsumerProgramTest, SkipsACopyPastTheBrokersWindowAndCountsItDurably) {
  ASSERT_NO_FATAL_FAILURE(StartBroker(100ms));
  ASSERT_NO_FATAL_FAILURE(Publish("msg_1", "one"));
  auto consumer = StartConsumer();
  ASSERT_TRUE(consumer) << consumer.error().ToString();
  EXPECT_TRUE(testing::Eventually([&] { return Count("processed") == 1; })) << ReadFile(log());
  std::this_thread::sleep_for(300ms);  // past the window: the broker stores the copy
  ASSERT_NO_FATAL_FAILURE(Publish("msg_1", "one"));
  EXPECT_TRUE(testing::Eventually([&] { return Count("duplicates_skipped") == 1; }))
      << ReadFile(log());
  RECKON_ASSERT_OK(consumer.value().Kill(SIGKILL));
  (void)consumer.value().Wait();
  json::object report = Report();
  EXPECT_EQ(report.at("processed").to_number<std::int64_t>(), 1);
  EXPECT_EQ(report.at("effects").to_number<std::int64_t>(), 1);
  EXPECT_EQ(report.at("duplicates_skipped").to_number<std::int64_t>(), 1);
}

TEST_F(ConsumerProgramTest, WaitsForABrokerThatIsDownAtTheStart) {
  ASSERT_NO_FATAL_FAILURE(StartBroker());
  RECKON_ASSERT_OK(broker_->Kill());
  auto consumer = StartConsumer();
  ASSERT_TRUE(consumer) << consumer.error().ToString();
  EXPECT_TRUE(testing::Eventually(
      [&] { return ReadFile(log()).find("waiting for the broker") != std::string::npos; }))
      << ReadFile(log());
  RECKON_ASSERT_OK(broker_->Restart());
  ASSERT_NO_FATAL_FAILURE(Publish("msg_1", "one"));
  EXPECT_TRUE(testing::Eventually([&] { return Count("processed") == 1; })) << ReadFile(log());
  auto stopped = consumer.value().Terminate(10s);
  ASSERT_TRUE(stopped);
  EXPECT_TRUE(stopped.value().Succeeded()) << stopped.value().ToString();
}

TEST_F(ConsumerProgramTest, AMissingStreamEndsTheProgramWithWhatToDo) {
  ASSERT_NO_FATAL_FAILURE(StartBroker());
  auto [status, out] = Run({"--nats-url", broker_->url(), "--stream", "INVOICES", "--subject",
                            "invoices.>", "--durable", "d", "--db", db()});
  EXPECT_EQ(status.code, 1) << status.ToString();
  EXPECT_NE(ReadFile(log()).find("no stream 'INVOICES'"), std::string::npos) << ReadFile(log());
  EXPECT_NE(ReadFile(log()).find("declare it first"), std::string::npos);
}

TEST_F(ConsumerProgramTest, BadFlagsNameTheFlag) {
  auto [missing, out1] = Run({"--db", db(), "--stream", "S", "--subject", "s.>", "--durable", "d"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(ReadFile(log()).find("missing --nats-url"), std::string::npos) << ReadFile(log());
  auto [dotted, out2] = Run({"--db", db(), "--nats-url", "nats://127.0.0.1:1", "--stream", "S",
                             "--subject", "s.>", "--durable", "a.b"});
  EXPECT_EQ(dotted.code, 2);
  EXPECT_NE(ReadFile(log()).find("--durable 'a.b'"), std::string::npos) << ReadFile(log());
  auto [report, out3] = Run({"--report", "--db", dir_.File("absent.db")});
  EXPECT_EQ(report.code, 1);
  EXPECT_NE(ReadFile(log()).find("no database at"), std::string::npos);
}

}  // namespace
}  // namespace reckon::samples
