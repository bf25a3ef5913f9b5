// Connection slots shared fairly (connection_slots.h), against the real `reckon server`: peers
// that open more connections than a port has slots and then send nothing, a request a byte at a
// time (slowloris) or half a TLS handshake hold them, and a legitimate request, from the same
// address or another, is still served at once; on the console's port the first request must
// be whole within --http-handshake-timeout-ms; one address's connections make room only among
// themselves (--max-connections-per-peer). Several peers are played by binding client sockets
// to 127.0.0.2, 127.0.0.3, ... Nothing measures speed: waits poll for a condition.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/http_probe.h"
#include "tests/support/reckon_server.h"

namespace reckon::testing {
namespace {

using namespace std::chrono_literals;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Token(const ReckonServer& server, const std::string& role) {
  std::ifstream in(server.TokenFile(role));
  std::string token;
  in >> token;
  return token;
}

// A request whose headers never end: what a slowloris peer sends before it trickles on.
constexpr std::string_view kSlowloris =
    "GET /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\nX-Wait: ";

// `count` attacker connections from `sources` in turn; each sends `first` (may be empty).
std::vector<RawSocket> Attack(std::uint16_t port, const std::vector<std::string>& sources,
                              int count, const std::vector<std::string_view>& first) {
  std::vector<RawSocket> peers;
  peers.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    peers.emplace_back(sources[static_cast<std::size_t>(i) % sources.size()], port);
    EXPECT_TRUE(peers.back().connected()) << "connection " << i;
    const std::string_view bytes = first[static_cast<std::size_t>(i) % first.size()];
    if (!bytes.empty()) peers.back().Send(bytes);
  }
  return peers;
}

// How many of `peers` the server has closed, once at least `at_least` are (waiting up to 20 s:
// the server takes the connections one by one).
int ClosedOnceAtLeast(std::vector<RawSocket>& peers, int at_least) {
  int closed = 0;
  Eventually(
      [&] {
        closed = 0;
        for (RawSocket& peer : peers) closed += peer.Ended() ? 1 : 0;
        return closed >= at_least;
      },
      20s);
  return closed;
}

class ConnectionSlotsServerTest : public ::testing::Test {
 protected:
  // A server with `options` and an --http port.
  void Start(ReckonServerOptions options) {
    options.extra_args.insert(options.extra_args.end(), {"--http", "127.0.0.1:0",
                                                         "--http-port-file",
                                                         ports_.File("http-port")});
    auto server = ReckonServer::Start(RECKON_CLI_PATH, std::move(options));
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
    std::ifstream port_file(ports_.File("http-port"));
    int port = 0;
    ASSERT_TRUE(port_file >> port) << "the server did not write --http-port-file";
    http_port_ = static_cast<std::uint16_t>(port);
    const std::string& address = server_->address();
    wire_port_ = static_cast<std::uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
  }

  // GET /api/v1/runs as the reader, from `source`.
  HttpResult ListRuns(const std::string& source) {
    HttpCall call;
    call.target = "/api/v1/runs";
    call.source = source;
    call.headers = {{"Authorization", "Bearer " + Token(*server_, "reader")}};
    if (server_->certificates()) call.tls = HttpTlsFiles{.ca = server_->certificates()->ca};
    return HttpOnce(http_port_, call);
  }

  std::string Log() const { return ReadFile(server_->dir().File("server.log")); }

  TempDir ports_;
  std::unique_ptr<ReckonServer> server_;
  std::uint16_t http_port_ = 0;
  std::uint16_t wire_port_ = 0;
};

TEST_F(ConnectionSlotsServerTest, AnHttpRequestIsServedWhileSlowlorisFromOnePeerHoldsEverySlot) {
  Start({});
  // 300 connections from one address, more than the port's 256 slots, each in the middle of
  // its headers. The address may hold 64 (--http-max-connections-per-peer): each one over
  // takes the slot of its oldest.
  std::vector<RawSocket> slow = Attack(http_port_, {"127.0.0.1"}, 300, {kSlowloris});
  const int closed = ClosedOnceAtLeast(slow, 300 - 64);
  EXPECT_GE(closed, 300 - 64) << "one address held more than its share";
  for (RawSocket& peer : slow) peer.Send("x");  // the ones left trickle on

  // Legitimate requests from the same address and from another are served.
  for (const char* source : {"127.0.0.1", "127.0.0.2", "127.0.0.1"}) {
    const HttpResult runs = ListRuns(source);
    EXPECT_EQ(runs.status, 200u) << source << ": " << runs.body << runs.error;
  }
  EXPECT_NE(Log().find("(http-max-connections-per-peer) for a newcomer from 127.0.0.1"),
            std::string::npos);
}

TEST_F(ConnectionSlotsServerTest, AnHttpsRequestIsServedWhileIdleTlsPeersHoldEverySlot) {
  Start({.tls = true});
  // 320 connections from eight addresses (40 each, under the per-address share): every slot
  // of the port is taken by a peer that sent half a ClientHello, or nothing.
  std::vector<std::string> sources;
  for (int i = 2; i <= 9; ++i) sources.push_back("127.0.0." + std::to_string(i));
  std::vector<RawSocket> idle = Attack(http_port_, sources, 320, {PartialClientHello(), ""});
  const int closed = ClosedOnceAtLeast(idle, 320 - 256);
  EXPECT_GE(closed, 320 - 256);

  for (const char* source : {"127.0.0.10", "127.0.0.2"}) {
    const HttpResult runs = ListRuns(source);
    EXPECT_EQ(runs.status, 200u) << source << ": " << runs.body << runs.error;
  }
  EXPECT_NE(Log().find("(http-max-connections) for a newcomer from 127.0.0.10"),
            std::string::npos);
}

TEST_F(ConnectionSlotsServerTest, TheFirstHttpRequestMustBeWholeWithinTheHandshakeTimeout) {
  Start({.extra_args = {"--http-handshake-timeout-ms", "300"}});
  RawSocket silent("127.0.0.1", http_port_);
  RawSocket trickling("127.0.0.1", http_port_);
  ASSERT_TRUE(trickling.Send(kSlowloris));
  // A byte every 50 ms: never idle for long, never done.
  const bool trickled_out = Eventually(
      [&] {
        trickling.Send("x");
        return trickling.Ended();
      },
      20s);
  EXPECT_TRUE(trickled_out) << "a request sent a byte at a time was never cut off";
  EXPECT_TRUE(silent.WaitEnded(20s));
  EXPECT_NE(Log().find("(http-handshake-timeout-ms): no whole request within 300 ms"),
            std::string::npos)
      << Log();
  EXPECT_EQ(ListRuns("127.0.0.1").status, 200u) << "a whole request is served as before";
}

TEST_F(ConnectionSlotsServerTest, AProtocolCallIsServedWhileIdlePeersHoldEverySlot) {
  Start({.extra_args = {"--max-connections", "64"}});
  // 80 connections from the CLI's own address: silent, or a frame header and no body.
  static constexpr char kHeader[] = {0, 0, 0, 0, 16, 0, 0, 0};
  std::vector<RawSocket> idle = Attack(wire_port_, {"127.0.0.1"}, 80,
                                       {"", std::string_view(kHeader, sizeof kHeader)});
  const int closed = ClosedOnceAtLeast(idle, 80 - 64);
  EXPECT_GE(closed, 80 - 64);
  const CliRun list = server_->Cli({"list"});
  EXPECT_EQ(list.code(), 0) << list.Describe();
  EXPECT_NE(Log().find("(max-connections) for a newcomer from 127.0.0.1"), std::string::npos);
}

TEST_F(ConnectionSlotsServerTest, OneAddressMakesRoomOnlyAmongItsOwnProtocolConnections) {
  Start({.extra_args = {"--max-connections-per-peer", "4"}});
  std::vector<RawSocket> other = Attack(wire_port_, {"127.0.0.2"}, 4, {""});
  std::vector<RawSocket> mine = Attack(wire_port_, {"127.0.0.1"}, 8, {""});
  // 127.0.0.1's four oldest gave their slots to its four newest; 127.0.0.2 kept all of its.
  std::vector<RawSocket> oldest;
  for (int i = 0; i < 4; ++i) oldest.push_back(std::move(mine[static_cast<std::size_t>(i)]));
  EXPECT_EQ(ClosedOnceAtLeast(oldest, 4), 4);
  const CliRun list = server_->Cli({"list"});
  EXPECT_EQ(list.code(), 0) << list.Describe();
  for (RawSocket& peer : other) EXPECT_FALSE(peer.Ended()) << "another address lost a slot";
  EXPECT_NE(Log().find("(max-connections-per-peer) for a newcomer from 127.0.0.1"),
            std::string::npos);
}

}  // namespace
}  // namespace reckon::testing
