// The listener rule (listen.h): every row of its table, for both listeners; then the real
// `reckon server` started with --insecure-dev, TLS and a non-loopback --http (what an attacker
// found serving runs to anyone): it refuses to start and says what to do, and on loopback it
// still starts.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "reckon/api/server/listen.h"
#include "tests/support/http_probe.h"
#include "tests/support/reckon_server.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_certs.h"

namespace reckon::api {
namespace {

using namespace std::chrono_literals;

constexpr ListenerSecurity kPlain{.tls = false, .insecure_dev = false};
constexpr ListenerSecurity kTls{.tls = true, .insecure_dev = false};
constexpr ListenerSecurity kDevPlain{.tls = false, .insecure_dev = true};
constexpr ListenerSecurity kDevTls{.tls = true, .insecure_dev = true};

TEST(ListenTest, LoopbackServesEverythingOnBothListeners) {
  for (Listener which : {Listener::kProtocol, Listener::kHttp}) {
    for (const ListenerSecurity& security : {kPlain, kTls, kDevPlain, kDevTls}) {
      for (const char* address : {"127.0.0.1:0", "127.0.0.2:7233", "::1:0", "::ffff:127.0.0.1:0"}) {
        auto permit = CheckListener(which, address, security);
        ASSERT_TRUE(permit) << address << ": " << permit.error().ToString();
        EXPECT_TRUE(permit.value().loopback) << address;
        EXPECT_FALSE(permit.value().warning) << address;
      }
    }
  }
}

TEST(ListenTest, InsecureDevIsRefusedOffLoopbackOnEveryListenerWithOrWithoutTls) {
  for (Listener which : {Listener::kProtocol, Listener::kHttp}) {
    for (const ListenerSecurity& security : {kDevPlain, kDevTls}) {
      for (const char* address : {"0.0.0.0:8080", "10.1.2.3:0", ":::0"}) {
        auto refused = CheckListener(which, address, security);
        ASSERT_FALSE(refused) << address;
        EXPECT_EQ(refused.error().code(), Errc::kInvalidArgument);
        const std::string& message = refused.error().message();
        EXPECT_NE(message.find("--insecure-dev"), std::string::npos) << message;
        EXPECT_NE(message.find(std::string(ListenerFlag(which)) + " " + address),
                  std::string::npos)
            << message;
        EXPECT_NE(message.find("listen on 127.0.0.1, or drop --insecure-dev"), std::string::npos)
            << message;
      }
    }
  }
}

TEST(ListenTest, OffLoopbackWithoutTlsHttpIsRefusedAndTheProtocolPortWarns) {
  auto http = CheckListener(Listener::kHttp, "0.0.0.0:8080", kPlain);
  ASSERT_FALSE(http);
  EXPECT_NE(http.error().message().find("start the server with --tls-cert and --tls-key"),
            std::string::npos);
  auto protocol = CheckListener(Listener::kProtocol, "0.0.0.0:7233", kPlain);
  ASSERT_TRUE(protocol);
  ASSERT_TRUE(protocol.value().warning);
  EXPECT_NE(protocol.value().warning->find("without TLS"), std::string::npos);
  for (Listener which : {Listener::kProtocol, Listener::kHttp}) {
    auto served = CheckListener(which, "0.0.0.0:0", kTls);
    ASSERT_TRUE(served);
    EXPECT_FALSE(served.value().loopback);
    EXPECT_FALSE(served.value().warning);
  }
}

TEST(ListenTest, AHostThatIsNotAnIpAddressIsRefused) {
  auto refused = CheckListener(Listener::kHttp, "localhost:8080", kTls);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kInvalidArgument);
  EXPECT_NE(refused.error().message().find("--http address 'localhost' is not an IP address"),
            std::string::npos)
      << refused.error().message();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `reckon server` with TLS, --insecure-dev and `http`; runs until it exits or listens.
struct Started {
  std::optional<testing::Subprocess> process;
  std::optional<testing::ExitStatus> exited;
  int http_port = 0;
  std::string log;
};
Started StartDevServer(const testing::TempDir& dir, const testing::TestCertificates& certs,
                       const std::string& http) {
  testing::SubprocessOptions options;
  options.args = {"server", "--journal", dir.File("journal.db"), "--listen", "127.0.0.1:0",
                  "--port-file", dir.File("port"), "--http", http, "--http-port-file",
                  dir.File("http-port"), "--tls-cert", certs.server_cert, "--tls-key",
                  certs.server_key, "--insecure-dev", "--quiet"};
  options.stderr_path = dir.File("server.log");
  auto process = testing::Subprocess::Start(RECKON_CLI_PATH, options);
  EXPECT_TRUE(process) << process.error().ToString();
  Started started;
  if (!process) return started;
  started.process.emplace(std::move(process).value());
  testing::Eventually(
      [&] {
        std::ifstream file(dir.File("http-port"));
        if (file >> started.http_port && started.http_port > 0) return true;
        auto status = started.process->WaitFor(0ms);
        if (status) started.exited = status.value();
        return started.exited.has_value();
      },
      30s);
  started.log = ReadFile(dir.File("server.log"));
  return started;
}

TEST(ListenTest, TheRealServerRefusesInsecureDevOnANonLoopbackHttpPortEvenWithTls) {
  testing::TempDir dir;
  auto certs = testing::WriteTestCertificates(dir.path());
  ASSERT_TRUE(certs) << certs.error().ToString();
  Started started = StartDevServer(dir, certs.value(), "0.0.0.0:0");
  if (started.http_port > 0) {
    // What the attacker saw: the runs, to anyone, without a token.
    testing::HttpCall call;
    call.target = "/api/v1/runs";
    call.tls = testing::HttpTlsFiles{.ca = certs.value().ca};
    const testing::HttpResult runs = testing::HttpOnce(
        static_cast<std::uint16_t>(started.http_port), call);
    FAIL() << "the server listens on 0.0.0.0:" << started.http_port
           << " with --insecure-dev; GET /api/v1/runs without a token: " << runs.status << " "
           << runs.body << runs.error;
  }
  ASSERT_TRUE(started.exited) << "the server neither listened nor exited:\n" << started.log;
  EXPECT_FALSE(started.exited->Succeeded()) << started.exited->ToString();
  EXPECT_NE(started.log.find("--insecure-dev serves requests without a token, so every port of "
                             "the server must be on a loopback address"),
            std::string::npos)
      << started.log;
  EXPECT_NE(started.log.find("--http 0.0.0.0:0 is not"), std::string::npos) << started.log;
  EXPECT_FALSE(std::filesystem::exists(dir.File("journal.db")))
      << "refused before the journal is opened";
}

TEST(ListenTest, TheRealServerServesInsecureDevOnLoopbackWithTls) {
  testing::TempDir dir;
  auto certs = testing::WriteTestCertificates(dir.path());
  ASSERT_TRUE(certs) << certs.error().ToString();
  Started started = StartDevServer(dir, certs.value(), "127.0.0.1:0");
  ASSERT_GT(started.http_port, 0) << started.log;
  testing::HttpCall call;
  call.target = "/api/v1/runs";
  call.tls = testing::HttpTlsFiles{.ca = certs.value().ca};
  const testing::HttpResult runs =
      testing::HttpOnce(static_cast<std::uint16_t>(started.http_port), call);
  EXPECT_EQ(runs.status, 200u) << runs.body << runs.error;
  ASSERT_TRUE(started.process->Terminate());
}

}  // namespace
}  // namespace reckon::api
