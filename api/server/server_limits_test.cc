// Limits against abuse (docs/SECURITY.md), against a server hosted in this process (ServerHost
// on a thread of the test, so that the test can read Server::buffered_bytes() on its loop) in
// loopback development mode, through raw TCP sockets on 127.0.0.1 and the Client: a header that
// announces 8 MiB costs what arrives; a connection whose buffer cannot grow within the budget is
// closed with the reason while others are served; the connection over the maximum is told why;
// handshake and idle timeouts; a peer that never reads its replies holds a bounded amount and
// is closed; max in flight; the Client's calls fail with the server's reason; the flags are
// validated. Timeouts are short; nothing measures speed (waits poll a condition for up to 20 s).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <thread>

#include "reckon/protocol/client.h"
#include "reckon/protocol/close_reason.h"
#include "reckon/protocol/read_buffer.h"
#include "reckon/api/server/server_host.h"
#include "reckon/contract/contract_json.h"
#include "reckon/contract/testing/test_contracts.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace reckon::api {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;
using Message = std::unique_ptr<capnp::MallocMessageBuilder>;

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * 1024;

// --- raw sockets --------------------------------------------------------------------------------

// A blocking TCP connection to 127.0.0.1:port that the test drives byte by byte.
class RawConnection {
 public:
  // `receive_buffer` > 0: SO_RCVBUF, set before connecting (a peer that holds little).
  explicit RawConnection(std::uint16_t port, int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (receive_buffer > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawConnection() { Close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Sends all of `bytes` (blocking); false if the server closed the connection meanwhile.
  bool Send(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes = bytes.subspan(static_cast<std::size_t>(n));
    }
    return true;
  }
  // Sends what the socket takes now; the count.
  std::size_t SendSome(std::span<const std::byte> bytes) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    return n > 0 ? static_cast<std::size_t>(n) : 0;
  }

  // What the server sends until it closes the connection (waiting at most 20 s), and whether it
  // closed it.
  struct Received {
    std::vector<std::byte> bytes;
    bool closed = false;
  };
  Received ReadToEnd() {
    Received out;
    const auto deadline = SteadyClock::now() + 20s;
    pollfd p{fd_, POLLIN, 0};
    while (SteadyClock::now() < deadline && ::poll(&p, 1, 100) >= 0) {
      if ((p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      std::byte buffer[16 * 1024];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) {
        out.closed = true;
        break;
      }
      out.bytes.insert(out.bytes.end(), buffer, buffer + n);
    }
    return out;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// The first 8 bytes of a one-segment frame of `total` bytes, segment table included.
std::vector<std::byte> Header(std::size_t total) {
  std::vector<std::byte> out(8);
  const auto words = static_cast<std::uint32_t>((total - 8) / 8);
  std::memcpy(out.data() + 4, &words, 4);
  return out;
}

Message NewRequest() {
  auto message = std::make_unique<capnp::MallocMessageBuilder>();
  message->initRoot<wire::Request>();
  return message;
}

Message ListContracts() {
  auto message = NewRequest();
  message->getRoot<wire::Request>().initMethod().setListContracts();
  return message;
}

Message ListWorkflows() {
  auto message = NewRequest();
  message->getRoot<wire::Request>().initMethod().initListWorkflows();
  return message;
}

// `message` as a frame with request id `id`, as a raw peer sends it.
std::vector<std::byte> Encode(Message message, std::uint64_t id) {
  message->getRoot<wire::Request>().setId(id);
  Frame frame = EncodeFrame(*message);
  return {frame.bytes().begin(), frame.bytes().end()};
}

// The server's close reason among `bytes` (whole frames as received): the error of the
// Response with id 0, if one came.
std::optional<Error> CloseReasonIn(const std::vector<std::byte>& bytes) {
  const FrameLimits limits;
  std::span<const std::byte> rest(bytes);
  std::optional<Error> reason;
  while (rest.size() >= 8) {
    auto table = SegmentTableRemainder(rest.first<8>(), limits);
    if (!table || rest.size() < 8 + table.value()) break;
    auto body = BodyBytes(rest.first(8 + table.value()), limits);
    if (!body || rest.size() < 8 + table.value() + body.value()) break;
    const std::size_t total = 8 + table.value() + body.value();
    auto frame = ParseFrame(rest.first(total), limits);
    if (!frame) break;
    Reply reply(std::move(frame).value(), limits);
    if (reply.get().getId() == kCloseReasonId && reply.get().getResult().isError()) {
      reason = FromWire(reply.get().getResult().getError());
    }
    rest = rest.subspan(total);
  }
  return reason;
}

// --- the Client on the test's own loop ----------------------------------------------------------

asio::awaitable<void> ConnectTo(std::string address, std::shared_ptr<Client>* out,
                                std::optional<Error>* failed) {
  auto connect = Client::Connect(co_await asio::this_coro::executor, std::move(address));
  auto client = co_await std::move(connect);
  if (client) {
    *out = client.value();
  } else {
    failed->emplace(client.error());
  }
}

asio::awaitable<void> CallInto(std::shared_ptr<Client> client, Message message,
                               std::optional<Result<Reply>>* out) {
  auto call = client->Call(std::move(message), 10s);
  out->emplace(co_await std::move(call));
}

// --- the fixture --------------------------------------------------------------------------------

class ServerLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The server's warnings, for the test to read back.
    log_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("limits-test", log_));
  }
  void TearDown() override {
    if (host_) {
      host_->Stop();
      thread_.join();
      host_.reset();
    }
  }

  // Hosts a server with `options` on a thread, in loopback development mode.
  void Start(const ServerOptions& options) {
    ServerConfig config;
    config.journal_path = dir_.File("journal.db");
    config.listen = "127.0.0.1:0";
    config.quiet = true;
    config.insecure_dev = true;
    config.server = options;
    config.on_listening = [this](std::uint16_t port) { listening_.set_value(port); };
    auto host = ServerHost::Create(config);
    ASSERT_TRUE(host) << host.error().ToString();
    host_ = std::move(host).value();
    thread_ = std::thread([this] { host_->Run(); });
    auto port = listening_.get_future();
    ASSERT_EQ(port.wait_for(30s), std::future_status::ready);
    port_ = port.get();
    address_ = "127.0.0.1:" + std::to_string(port_);
  }

  // Runs `read` on the server's loop and returns its value.
  template <class F>
  auto OnServerLoop(F read) {
    std::promise<decltype(read())> done;
    asio::post(host_->executor(), [&] { done.set_value(read()); });
    return done.get_future().get();
  }
  std::size_t Buffered() {
    return OnServerLoop([this] { return host_->server().buffered_bytes(); });
  }
  std::size_t Connections() {
    return OnServerLoop([this] { return host_->server().connection_count(); });
  }

  // Polls `condition` (running the test's loop meanwhile) until it holds, for at most 20 s.
  bool Eventually(const std::function<bool()>& condition) {
    for (auto end = SteadyClock::now() + 20s; SteadyClock::now() < end;) {
      if (condition()) return true;
      io_.restart();
      io_.run_for(5ms);
    }
    return condition();
  }

  bool Logged(const std::string& text) const {
    for (const std::string& line : log_->last_formatted()) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }

  std::shared_ptr<Client> ConnectClient() {
    std::shared_ptr<Client> client;
    std::optional<Error> failed;
    asio::co_spawn(io_, ConnectTo(address_, &client, &failed), asio::detached);
    EXPECT_TRUE(Eventually([&] { return client || failed; }));
    EXPECT_FALSE(failed) << failed->ToString();
    return client;
  }
  // A client registered as a worker with a long tool poll in flight (its connection is busy);
  // the poll's end, if it ends before the test does, is recorded in `ended`.
  std::shared_ptr<Client> BusyClient(std::vector<std::string>* ended) {
    auto client = ConnectClient();
    if (!client) return nullptr;
    auto registration = NewRequest();
    registration->getRoot<wire::Request>().initMethod().initRegisterWorker().setWorkerId(
        "busy-" + std::to_string(++busy_));
    if (!Call(client, std::move(registration))) return nullptr;
    auto poll = NewRequest();
    poll->getRoot<wire::Request>().initMethod().initPollToolTask().setWaitMs(60000);
    asio::co_spawn(io_, RecordEnd(client, std::move(poll), ended), asio::detached);
    io_.restart();
    io_.run_for(50ms);
    return client;
  }
  static asio::awaitable<void> RecordEnd(std::shared_ptr<Client> client, Message message,
                                         std::vector<std::string>* ended) {
    auto call = client->Call(std::move(message), 120s);
    auto reply = co_await std::move(call);
    ended->push_back(reply ? "answered" : reply.error().ToString());
  }

  Result<Reply> Call(const std::shared_ptr<Client>& client, Message message) {
    std::optional<Result<Reply>> out;
    asio::co_spawn(io_, CallInto(client, std::move(message), &out), asio::detached);
    if (!Eventually([&] { return out.has_value(); })) {
      return Err(Errc::kDeadlineExceeded, "the test saw no reply");
    }
    return std::move(*out);
  }

  testing::TempDir dir_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> log_;
  std::unique_ptr<ServerHost> host_;
  std::thread thread_;
  std::promise<std::uint16_t> listening_;
  std::uint16_t port_ = 0;
  std::string address_;
  asio::io_context io_;  // the test's clients
  int busy_ = 0;
};

// --- memory -------------------------------------------------------------------------------------

// Peers that never finish a frame must outlive the test, not the handshake timeout.
ServerOptions Patient() {
  ServerOptions options;
  options.handshake_timeout = 120s;
  return options;
}

TEST_F(ServerLimitsTest, AHeaderThatAnnounces8MiBCostsOnlyWhatArrives) {
  Start(Patient());
  constexpr std::size_t kPeers = 10;
  const std::size_t announced = 8 * kMiB;
  std::vector<std::unique_ptr<RawConnection>> peers;
  for (std::size_t i = 0; i < kPeers; ++i) {
    peers.push_back(std::make_unique<RawConnection>(port_));
    ASSERT_TRUE(peers.back()->connected());
    // 16 bytes: the header and one word of the body, then silence.
    auto start = Header(announced);
    start.resize(16);
    ASSERT_TRUE(peers.back()->Send(start));
  }
  ASSERT_TRUE(Eventually([&] { return Connections() == kPeers; }));
  EXPECT_LE(Buffered(), kPeers * ReadBuffer::kKeepBytes)
      << "announcing " << kPeers << " x 8 MiB must not allocate it";

  // 100 KiB more on each: at most twice what arrived is held.
  const std::vector<std::byte> more(100 * kKiB, std::byte{0});
  for (auto& peer : peers) ASSERT_TRUE(peer->Send(more));
  ASSERT_TRUE(Eventually([&] { return Buffered() >= kPeers * (100 * kKiB + 16); }));
  EXPECT_LE(Buffered(), kPeers * 2 * (100 * kKiB + 16));

  for (auto& peer : peers) peer->Close();
  EXPECT_TRUE(Eventually([&] { return Connections() == 0 && Buffered() == 0; }))
      << Buffered() << " bytes still charged after every peer left";
}

TEST_F(ServerLimitsTest, ALargeRequestsBufferIsGivenBackOnceAnswered) {
  Start(ServerOptions{});
  auto client = ConnectClient();
  ASSERT_TRUE(client);
  auto start = NewRequest();
  auto s = start->getRoot<wire::Request>().initMethod().initStartWorkflow();
  s.setWorkflowId("big");
  s.setWorkflowType("nobody_hosts_this");
  s.setInputJson("\"" + std::string(2 * kMiB, 'x') + "\"");
  auto refused = Call(client, std::move(start));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kFailedPrecondition) << refused.error().ToString();
  // The connection stays open, and its 2 MiB buffer is given back.
  EXPECT_TRUE(Eventually([&] { return Buffered() <= ReadBuffer::kKeepBytes; })) << Buffered();
  EXPECT_TRUE(client->connected());
  EXPECT_TRUE(Call(client, ListWorkflows()));
}

TEST_F(ServerLimitsTest, OverTheBudgetOnlyTheConnectionThatCannotGrowIsClosed) {
  ServerOptions options = Patient();
  options.limits.max_message_bytes = 2 * kMiB;
  options.max_buffered_bytes = 2 * kMiB;
  options.max_unread_reply_bytes = 64 * kKiB;
  Start(options);
  auto healthy = ConnectClient();
  ASSERT_TRUE(healthy);
  ASSERT_TRUE(Call(healthy, ListWorkflows()));

  // A holds 700 KiB of a 2 MiB frame: its buffer grows to 1 MiB, half the budget.
  RawConnection a(port_);
  ASSERT_TRUE(a.Send(Header(2 * kMiB)));
  ASSERT_TRUE(a.Send(std::vector<std::byte>(700 * kKiB, std::byte{0})));
  ASSERT_TRUE(Eventually([&] { return Buffered() >= 700 * kKiB; }));

  // B sends 1 MiB of another: its buffer cannot reach 1 MiB as well.
  RawConnection b(port_);
  (void)b.Send(Header(2 * kMiB));
  (void)b.Send(std::vector<std::byte>(1 * kMiB, std::byte{0}));  // may be cut short: closed
  const auto received = b.ReadToEnd();
  EXPECT_TRUE(received.closed);
  const auto reason = CloseReasonIn(received.bytes);
  ASSERT_TRUE(reason) << "no close reason in " << received.bytes.size() << " bytes";
  EXPECT_EQ(reason->code(), Errc::kResourceExhausted);
  EXPECT_NE(reason->message().find("--max-buffered-mib"), std::string::npos)
      << reason->message();
  EXPECT_TRUE(Logged("(max-buffered-mib)"));

  // The others are unaffected: the healthy client is answered, A is still connected.
  EXPECT_TRUE(Call(healthy, ListWorkflows()));
  EXPECT_TRUE(Eventually([&] { return Connections() == 2; }));
  EXPECT_LE(Buffered(), options.max_buffered_bytes);
}

// --- connections and time -----------------------------------------------------------------------

TEST_F(ServerLimitsTest, TheConnectionOverTheMaximumIsToldWhyWhenEveryoneIsBusy) {
  ServerOptions options = Patient();
  options.max_connections = 2;
  Start(options);
  std::vector<std::string> polls;
  auto first = BusyClient(&polls);
  auto second = BusyClient(&polls);
  ASSERT_TRUE(first && second);
  ASSERT_TRUE(Eventually([&] { return Connections() == 2; }));

  // A raw peer reads the reason...
  RawConnection third(port_);
  const auto received = third.ReadToEnd();
  EXPECT_TRUE(received.closed);
  const auto reason = CloseReasonIn(received.bytes);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->code(), Errc::kResourceExhausted);
  EXPECT_EQ(reason->message(),
            "the server has 2 connections, its maximum (--max-connections), each with requests "
            "in flight; retry later");

  // ...and the Client fails its call with it.
  auto client = ConnectClient();
  ASSERT_TRUE(client);
  auto refused = Call(client, ListWorkflows());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kUnavailable) << "a lost connection, with its cause";
  EXPECT_NE(refused.error().message().find("closed the connection: resource_exhausted: the "
                                           "server has 2 connections, its maximum "
                                           "(--max-connections), each with requests in flight; "
                                           "retry later"),
            std::string::npos)
      << refused.error().message();
  auto again = Call(client, ListWorkflows());
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message(), refused.error().message()) << "later calls fail the same";
  EXPECT_TRUE(Logged("(max-connections)"));
  EXPECT_TRUE(polls.empty()) << "the busy ones were not touched: " << polls.front();

  // Once one leaves, a new connection is served.
  first->Close();
  ASSERT_TRUE(Eventually([&] { return Connections() == 1; }));
  auto later = ConnectClient();
  ASSERT_TRUE(later);
  EXPECT_TRUE(Call(later, ListWorkflows()));
}

TEST_F(ServerLimitsTest, ANewcomerTakesTheSlotOfTheOldestConnectionThatSentNothing) {
  ServerOptions options = Patient();
  options.max_connections = 2;
  Start(options);
  RawConnection silent(port_);
  ASSERT_TRUE(Eventually([&] { return Connections() == 1; }));
  auto answered = ConnectClient();  // sends a request and is answered: idle
  ASSERT_TRUE(answered);
  ASSERT_TRUE(Call(answered, ListWorkflows()));

  // Full: the newcomer takes the silent peer's slot, not the idle client's; the silent one is
  // told why.
  auto newcomer = ConnectClient();
  ASSERT_TRUE(newcomer);
  EXPECT_TRUE(Call(newcomer, ListWorkflows()));
  const auto received = silent.ReadToEnd();
  EXPECT_TRUE(received.closed);
  const auto reason = CloseReasonIn(received.bytes);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->code(), Errc::kResourceExhausted);
  EXPECT_EQ(reason->message(),
            "the server had 2 connections, its maximum (--max-connections), and this connection "
            "had not sent a whole request yet, so a new connection took its slot; connect again "
            "to send requests");
  EXPECT_TRUE(Call(answered, ListWorkflows())) << "the idle client kept its slot";

  // With both idle, the next newcomer takes the slot of the one idle the longest.
  ASSERT_TRUE(Call(newcomer, ListWorkflows()));
  auto third = ConnectClient();
  ASSERT_TRUE(third);
  EXPECT_TRUE(Call(third, ListWorkflows()));
  ASSERT_TRUE(Eventually([&] { return !answered->connected(); }));
  auto lost = Call(answered, ListWorkflows());
  ASSERT_FALSE(lost);
  EXPECT_NE(lost.error().message().find("had no request in flight, so a new connection took its "
                                        "slot"),
            std::string::npos)
      << lost.error().message();
  EXPECT_TRUE(Logged("(max-connections)"));
}

TEST_F(ServerLimitsTest, NoWholeRequestWithinTheHandshakeTimeoutCloses) {
  ServerOptions options;
  options.handshake_timeout = 200ms;
  Start(options);
  RawConnection silent(port_);
  RawConnection partial(port_);
  ASSERT_TRUE(partial.Send(Header(4 * kKiB)));  // a header, and nothing of the body
  for (RawConnection* peer : {&silent, &partial}) {
    const auto received = peer->ReadToEnd();
    EXPECT_TRUE(received.closed);
    const auto reason = CloseReasonIn(received.bytes);
    ASSERT_TRUE(reason);
    EXPECT_EQ(reason->code(), Errc::kDeadlineExceeded);
    EXPECT_NE(reason->message().find("within 200 ms of connecting (--handshake-timeout-ms)"),
              std::string::npos)
        << reason->message();
  }
  EXPECT_TRUE(Logged("(handshake-timeout-ms)"));
}

TEST_F(ServerLimitsTest, AnIdleConnectionIsClosedAndTheClientSaysWhy) {
  ServerOptions options;
  options.idle_timeout = 300ms;
  Start(options);
  auto client = ConnectClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(Call(client, ListWorkflows()));
  ASSERT_TRUE(Eventually([&] { return !client->connected(); }));
  auto refused = Call(client, ListWorkflows());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kUnavailable);
  EXPECT_NE(refused.error().message().find("closed the connection: deadline_exceeded: the "
                                           "connection was idle for 300 ms, with no request in "
                                           "flight (--idle-timeout-ms)"),
            std::string::npos)
      << refused.error().message();
  EXPECT_TRUE(Logged("(idle-timeout-ms)"));
}

// --- per connection -----------------------------------------------------------------------------

TEST_F(ServerLimitsTest, APeerThatNeverReadsHoldsABoundedAmountAndIsClosed) {
  ServerOptions options;
  options.max_unread_reply_bytes = 64 * kKiB;
  options.unread_reply_timeout = 300ms;
  Start(options);
  // Forty contracts make every listContracts reply tens of KiB.
  auto worker = ConnectClient();
  ASSERT_TRUE(worker);
  auto registration = NewRequest();
  auto reg = registration->getRoot<wire::Request>().initMethod().initRegisterWorker();
  reg.setWorkerId("contracts");
  auto tools = reg.initTools(40);
  for (unsigned i = 0; i < 40; ++i) {
    ToolContract contract = testing_contracts::Payout();
    contract.name = "payout_" + std::to_string(i);
    tools[i].setName(contract.name);
    tools[i].setContractJson(boost::json::serialize(ContractToJson(contract)));
  }
  ASSERT_TRUE(Call(worker, std::move(registration)));
  auto listed = Call(worker, ListContracts());
  ASSERT_TRUE(listed);
  const std::size_t reply = listed.value().get().totalSize().wordCount * 8 + 64;
  ASSERT_GT(reply, 16 * kKiB);
  worker->Close();
  ASSERT_TRUE(Eventually([&] { return Connections() == 0; }));

  // The peer sends requests as long as the server takes them and never reads a reply.
  RawConnection peer(port_, /*receive_buffer=*/4096);
  std::vector<std::byte> requests;
  for (std::uint64_t id = 1; id <= 2000; ++id) {
    auto one = Encode(ListContracts(), id);
    requests.insert(requests.end(), one.begin(), one.end());
  }
  std::span<const std::byte> unsent(requests);
  std::size_t peak = 0;
  for (int idle = 0; idle < 50 && !unsent.empty();) {
    const std::size_t n = peer.SendSome(unsent);
    unsent = unsent.subspan(n);
    idle = n == 0 ? idle + 1 : 0;
    peak = std::max(peak, Buffered());
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_GT(requests.size() - unsent.size(), 100 * requests.size() / 2000)
      << "the peer sent fewer than 100 requests";
  // Queued replies stop the reading: what the server holds stays near the bound (the bound and
  // one reply, twice, since a batch being written counts until it is all written; the read
  // buffer). Without the bound, 2,000 replies would be queued.
  const std::size_t bound =
      2 * (options.max_unread_reply_bytes + reply) + ReadBuffer::kKeepBytes + 64 * kKiB;
  ASSERT_TRUE(Eventually([&] {
    peak = std::max(peak, Buffered());
    return Connections() == 0;
  })) << "the connection was not closed";
  EXPECT_LE(peak, bound) << "replies of " << reply << " bytes each";
  EXPECT_TRUE(Logged("(unread-reply-timeout-ms)"));
  EXPECT_TRUE(Eventually([&] { return Buffered() == 0; }));
}

// Records which call completed in which place.
asio::awaitable<void> CallAndRecord(std::shared_ptr<Client> client, Message message,
                                    std::string name, std::vector<std::string>* order) {
  auto call = client->Call(std::move(message), 10s);
  auto reply = co_await std::move(call);
  order->push_back(reply ? name : name + " failed: " + reply.error().ToString());
}

TEST_F(ServerLimitsTest, AConnectionIsNotReadPastMaxInFlight) {
  ServerOptions options;
  options.max_in_flight = 2;
  Start(options);
  auto client = ConnectClient();
  ASSERT_TRUE(client);
  auto registration = NewRequest();
  registration->getRoot<wire::Request>().initMethod().initRegisterWorker().setWorkerId("w");
  ASSERT_TRUE(Call(client, std::move(registration)));
  // Two long polls fill the connection; the list behind them is read only once one is answered,
  // so its reply comes after a poll's, although a list is answered at once.
  std::vector<std::string> order;
  auto poll = [] {
    auto message = NewRequest();
    message->getRoot<wire::Request>().initMethod().initPollToolTask().setWaitMs(500);
    return message;
  };
  asio::co_spawn(io_, CallAndRecord(client, poll(), "poll", &order), asio::detached);
  asio::co_spawn(io_, CallAndRecord(client, poll(), "poll", &order), asio::detached);
  asio::co_spawn(io_, CallAndRecord(client, ListWorkflows(), "list", &order), asio::detached);
  ASSERT_TRUE(Eventually([&] { return order.size() == 3; }));
  EXPECT_EQ(order[0], "poll");
  EXPECT_NE(std::find(order.begin(), order.end(), "list"), order.end()) << order.back();
}

// --- flags --------------------------------------------------------------------------------------

TEST(ServerLimitFlagsTest, ZeroAndAbsurdValuesAreRefusedWithTheRange) {
  testing::TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--max-connections", "0"}, "--max-connections must be from 1 to 1000000"},
      {{"--max-buffered-mib", "4"}, "--max-buffered-mib must be from 8 to 1048576"},
      {{"--max-buffered-mib", "99999999999999"}, "--max-buffered-mib must be from 8"},
      {{"--max-in-flight", "0"}, "--max-in-flight must be from 1 to 65536"},
      {{"--max-unread-reply-kib", "-1"}, "--max-unread-reply-kib must be from 1 to 262144"},
      {{"--idle-timeout-ms", "0"}, "--idle-timeout-ms must be from 10 to 86400000"},
      {{"--handshake-timeout-ms", "5"}, "--handshake-timeout-ms must be from 10"},
      {{"--unread-reply-timeout-ms", "0"}, "--unread-reply-timeout-ms must be from 10"},
      {{"--max-connections-per-peer", "0"}, "--max-connections-per-peer must be from 1"},
      {{"--http-max-connections", "0"}, "--http-max-connections must be from 1 to 1000000"},
      {{"--http-max-connections-per-peer", "0"}, "--http-max-connections-per-peer must be from 1"},
      {{"--http-handshake-timeout-ms", "5"}, "--http-handshake-timeout-ms must be from 10"},
  };
  int n = 0;
  for (const auto& [flags, expected] : cases) {
    testing::SubprocessOptions options;
    options.args = {"server", "--journal", dir.File("journal.db"), "--listen", "127.0.0.1:0"};
    options.args.insert(options.args.end(), flags.begin(), flags.end());
    options.stderr_path = dir.File("err-" + std::to_string(++n));
    auto server = testing::Subprocess::Start(RECKON_CLI_PATH, options);
    ASSERT_TRUE(server) << server.error().ToString();
    auto status = server.value().WaitFor(30s);
    ASSERT_TRUE(status) << status.error().ToString();
    EXPECT_EQ(status.value().code, 2) << flags[0] << ": " << status.value().ToString();
    std::ifstream err(options.stderr_path);
    const std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("reckon server: " + expected), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace reckon::api
