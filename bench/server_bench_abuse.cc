// server_bench_abuse: what hostile or careless peers cost a `reckon server` process, read from
// its /proc/PID/status (VmRSS now, VmHWM its peak) before, during and after each scenario. Each
// scenario starts a fresh server (--insecure-dev on 127.0.0.1, default limits), so "before" is an
// idle server's footprint measured in the same run: the floor the other figures are read against.
//
//   announce  100 connections each send a 16-byte frame start whose header announces an 8 MiB
//             body, then nothing
//   idle      1,800 connections that send nothing: how many are closed at once (over
//             --max-connections the newest take the slots of the oldest, which are told why)
//             and how many after the handshake timeout
//   unread    8 connections send listContracts requests (40 contracts declared, so replies of
//             ~200 KiB) as fast as the server takes them and never read a reply
//
// Then peers that hold connection slots, each while a legitimate client sends one request every
// 500 ms on a fresh connection from an address of its own (127.0.0.100) for --seconds; printed:
// how many of its requests succeeded and their latency (p50, p99, max), beside the same
// client's figures for 5 s before the attack (the floor, same run), and how often the
// attackers had to reconnect. The attackers reconnect at once whenever the server closes one.
//
//   slowloris  300 connections to the --http port from 8 addresses (127.0.0.2-9), each sending
//              a request's headers and then one more byte every 5 s, never ending them;
//              legitimate: GET /api/v1/runs
//   idle-tls   the same number to the HTTPS --http port (TLS certificates made for the run),
//              half sending the start of a ClientHello and then nothing, half nothing at all;
//              legitimate: GET /api/v1/runs over HTTPS
//   wire-idle  1,100 connections to the protocol port from 8 addresses, half silent, half a
//              frame header and no body; legitimate: a Client's listWorkflows
//
//   server_bench_abuse --dir DIR [--reckon PATH] [--seconds S]
//                      [--only announce|idle|unread|slowloris|idle-tls|wire-idle]
//
// --reckon runs another build of `reckon` (e.g. one from before the limits) for comparison.
#include <CLI/CLI.hpp>
#include <arpa/inet.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <functional>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench/machine.h"
#include "reckon/protocol/client.h"
#include "reckon/contract/contract_json.h"
#include "reckon/contract/testing/test_contracts.h"
#include "tests/support/http_probe.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_certs.h"

namespace {

namespace asio = boost::asio;
using namespace reckon;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr std::size_t kMiB = 1024 * 1024;

// A `reckon server` process on 127.0.0.1 with a journal of its own.
struct Server {
  std::optional<testing::Subprocess> process;
  std::uint16_t port = 0;
  std::uint16_t http_port = 0;  // with `http`
};

// The port written to `file`, waiting up to 4 s; 0 if none came.
std::uint16_t ReadPort(const std::string& file) {
  std::uint16_t port = 0;
  for (int i = 0; i < 400 && port == 0; ++i) {
    std::ifstream in(file);
    if (!(in >> port)) std::this_thread::sleep_for(10ms);
  }
  return port;
}

// With `http`, an --http port too; `extra` goes on the command line as is.
Server StartServer(const std::string& reckon, const std::string& dir, bool http = false,
                   const std::vector<std::string>& extra = {}) {
  for (const char* suffix : {"", "-wal", "-shm", ".admin-token", ".lock"}) {
    std::filesystem::remove(dir + "/abuse.db" + suffix);
  }
  std::filesystem::remove(dir + "/abuse-port");
  std::filesystem::remove(dir + "/abuse-http-port");
  testing::SubprocessOptions options;
  options.args = {"server",  "--journal",  dir + "/abuse.db",   "--listen",
                  "127.0.0.1:0", "--port-file", dir + "/abuse-port", "--quiet",
                  "--trace", "/dev/null",  "--insecure-dev"};
  if (http) {
    options.args.insert(options.args.end(), {"--http", "127.0.0.1:0", "--http-port-file",
                                              dir + "/abuse-http-port"});
  }
  options.args.insert(options.args.end(), extra.begin(), extra.end());
  options.stderr_path = dir + "/abuse-server.log";
  Server server;
  server.process.emplace(std::move(testing::Subprocess::Start(reckon, options)).value());
  server.port = ReadPort(dir + "/abuse-port");
  if (http) server.http_port = ReadPort(dir + "/abuse-http-port");
  if (server.port == 0 || (http && server.http_port == 0)) {
    std::fprintf(stderr, "server did not start; see %s/abuse-server.log\n", dir.c_str());
    std::exit(1);
  }
  return server;
}

// A field of /proc/PID/status in KiB ("VmRSS", "VmHWM").
long StatusKiB(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

double RssMiB(const Server& server) { return StatusKiB(server.process->pid(), "VmRSS") / 1024.0; }
double PeakMiB(const Server& server) { return StatusKiB(server.process->pid(), "VmHWM") / 1024.0; }

int Connect(std::uint16_t port, int receive_buffer = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (receive_buffer > 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::fprintf(stderr, "connect: %s\n", std::strerror(errno));
    std::exit(1);
  }
  return fd;
}

// Whether the server has ended the connection on `fd` (reads and drops what it sent).
bool Ended(int fd) {
  pollfd p{fd, POLLIN, 0};
  while (::poll(&p, 1, 0) == 1) {
    char buffer[4096];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN)) return true;
    if (n < 0) return false;
  }
  return false;
}

void Announce(const std::string& reckon, const std::string& dir) {
  Server server = StartServer(reckon, dir);
  std::this_thread::sleep_for(1s);
  const double before = RssMiB(server);
  std::vector<int> fds;
  // Segment count 1, one segment of (8 MiB - 8) / 8 words, then one word of it.
  std::array<std::uint32_t, 4> start{0, static_cast<std::uint32_t>((8 * kMiB - 8) / 8), 0, 0};
  for (int i = 0; i < 100; ++i) {
    fds.push_back(Connect(server.port));
    if (::send(fds.back(), start.data(), 16, MSG_NOSIGNAL) != 16) std::exit(1);
  }
  std::this_thread::sleep_for(2s);
  const double during = RssMiB(server);
  int ended = 0;
  for (int fd : fds) ended += Ended(fd) ? 1 : 0;
  for (int fd : fds) ::close(fd);
  std::this_thread::sleep_for(2s);
  const double after = RssMiB(server);
  std::printf("announce  100 connections x 16 bytes announcing an 8 MiB body: RSS before %.1f MiB,"
              " with them %.1f MiB (+%.1f), after they closed %.1f MiB (+%.1f), peak %.1f MiB; "
              "%d of 100 closed by the server meanwhile\n",
              before, during, during - before, after, after - before, PeakMiB(server), ended);
  (void)server.process->Terminate();
}

void Idle(const std::string& reckon, const std::string& dir) {
  Server server = StartServer(reckon, dir);
  std::this_thread::sleep_for(1s);
  const double before = RssMiB(server);
  constexpr int kPeers = 1800;
  std::vector<int> fds;
  for (int i = 0; i < kPeers; ++i) fds.push_back(Connect(server.port));
  const auto connected = SteadyClock::now();
  std::vector<bool> ended(kPeers, false);
  auto count = [&] {
    int n = 0;
    for (int i = 0; i < kPeers; ++i) {
      if (!ended[i] && Ended(fds[i])) ended[i] = true;
      n += ended[i] ? 1 : 0;
    }
    return n;
  };
  std::this_thread::sleep_for(2s);
  const int at_once = count();
  const double during = RssMiB(server);
  // The handshake timeout (10 s by default) closes the rest; wait at most 20 s for it.
  int later = at_once;
  while (SteadyClock::now() - connected < 20s && (later = count()) < kPeers) {
    std::this_thread::sleep_for(250ms);
  }
  const double waited =
      std::chrono::duration<double>(SteadyClock::now() - connected).count();
  const double held = RssMiB(server);
  for (int fd : fds) ::close(fd);
  std::this_thread::sleep_for(2s);
  const double after = RssMiB(server);
  std::printf("idle      %d connections sending nothing: %d closed within 2 s, %d within %.1f s; "
              "RSS before %.1f MiB, with them %.1f MiB (+%.1f), at %.1f s %.1f MiB, after %.1f "
              "MiB (+%.1f), peak %.1f MiB\n",
              kPeers, at_once, later, waited, before, during, during - before, waited, held,
              after, after - before, PeakMiB(server));
  (void)server.process->Terminate();
}

// Declares 40 contracts, so that each listContracts reply is large; returns its size in bytes.
std::size_t DeclareContracts(std::uint16_t port) {
  asio::io_context io;
  std::size_t reply_bytes = 0;
  bool done = false;
  auto run = [&]() -> asio::awaitable<void> {
    auto connect = api::Client::Connect(io.get_executor(), "127.0.0.1:" + std::to_string(port));
    auto client = co_await std::move(connect);
    if (!client) co_return;
    auto message = std::make_unique<capnp::MallocMessageBuilder>();
    auto reg = message->initRoot<api::wire::Request>().initMethod().initRegisterWorker();
    reg.setWorkerId("abuse-bench");
    auto tools = reg.initTools(40);
    for (unsigned i = 0; i < 40; ++i) {
      ToolContract contract = testing_contracts::Payout();
      contract.name = "payout_" + std::to_string(i);
      tools[i].setName(contract.name);
      tools[i].setContractJson(boost::json::serialize(ContractToJson(contract)));
    }
    auto registering = client.value()->Call(std::move(message), 10s);
    auto registered = co_await std::move(registering);
    if (registered) {
      auto list = std::make_unique<capnp::MallocMessageBuilder>();
      list->initRoot<api::wire::Request>().initMethod().setListContracts();
      auto listing = client.value()->Call(std::move(list), 10s);
      auto listed = co_await std::move(listing);
      if (listed) reply_bytes = listed.value().get().totalSize().wordCount * 8;
    }
    client.value()->Close();
    done = true;
  };
  asio::co_spawn(io, run(), asio::detached);
  for (int i = 0; i < 2000 && !done; ++i) io.run_one_for(10ms);
  if (reply_bytes == 0) {
    std::fprintf(stderr, "cannot declare the contracts\n");
    std::exit(1);
  }
  return reply_bytes;
}

void Unread(const std::string& reckon, const std::string& dir) {
  Server server = StartServer(reckon, dir);
  const std::size_t reply = DeclareContracts(server.port);
  std::this_thread::sleep_for(1s);
  const double before = RssMiB(server);
  // Requests, ids 1..2000, sent round and round.
  std::vector<std::byte> requests;
  for (std::uint64_t id = 1; id <= 2000; ++id) {
    capnp::MallocMessageBuilder message;
    auto request = message.initRoot<api::wire::Request>();
    request.setId(id);
    request.initMethod().setListContracts();
    api::Frame frame = api::EncodeFrame(message);
    requests.insert(requests.end(), frame.bytes().begin(), frame.bytes().end());
  }
  constexpr int kPeers = 8;
  std::vector<int> fds;
  std::vector<std::size_t> offset(kPeers, 0);
  std::vector<double> closed_at(kPeers, -1);
  std::vector<std::size_t> sent(kPeers, 0);
  for (int i = 0; i < kPeers; ++i) fds.push_back(Connect(server.port, 4096));
  const auto started = SteadyClock::now();
  double peak_during = before;
  int open = kPeers;
  auto last_sample = started;
  while (open > 0 && SteadyClock::now() - started < 45s) {
    for (int i = 0; i < kPeers; ++i) {
      if (closed_at[i] >= 0) continue;
      const ssize_t n = ::send(fds[i], requests.data() + offset[i], requests.size() - offset[i],
                               MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) {
        sent[i] += static_cast<std::size_t>(n);
        offset[i] = (offset[i] + static_cast<std::size_t>(n)) % requests.size();
      } else if (n < 0 && errno != EAGAIN) {
        closed_at[i] = std::chrono::duration<double>(SteadyClock::now() - started).count();
        --open;
      }
    }
    if (SteadyClock::now() - last_sample > 200ms) {
      peak_during = std::max(peak_during, RssMiB(server));
      last_sample = SteadyClock::now();
    }
    std::this_thread::sleep_for(2ms);
  }
  const double at_end = RssMiB(server);
  double first = 1e9, last = 0;
  std::size_t requests_sent = 0;
  for (int i = 0; i < kPeers; ++i) {
    if (closed_at[i] >= 0) {
      first = std::min(first, closed_at[i]);
      last = std::max(last, closed_at[i]);
    }
    requests_sent += sent[i];
  }
  for (int fd : fds) ::close(fd);
  std::this_thread::sleep_for(2s);
  const double after = RssMiB(server);
  std::printf("unread    %d connections never reading replies of %zu bytes (%.1f MiB of requests "
              "taken by the kernels): "
              "RSS before %.1f MiB, peak sampled %.1f MiB (+%.1f), at the end %.1f MiB, after "
              "they closed %.1f MiB (+%.1f), peak %.1f MiB; closed by the server: %d of %d",
              kPeers, reply, requests_sent / double(kMiB), before, peak_during,
              peak_during - before, at_end, after, after - before, PeakMiB(server), kPeers - open,
              kPeers);
  if (open < kPeers) std::printf(", at %.1f-%.1f s", first, last);
  std::printf("\n");
  (void)server.process->Terminate();
}

// --- peers that hold connection slots while a legitimate client works ---------------------------

// `count` attacker connections to `port` from 127.0.0.2-9, each sending its opening bytes (the
// openings in turn), each reconnected as soon as the server closes it; with `trickle`, each
// sends one more byte every 5 s. On a thread of its own until destroyed.
class Holders {
 public:
  Holders(std::uint16_t port, int count, std::vector<std::string> openings, std::string trickle)
      : port_(port), openings_(std::move(openings)), trickle_(std::move(trickle)) {
    for (int i = 0; i < count; ++i) Open(static_cast<std::size_t>(i));
    thread_ = std::thread([this] { Run(); });
  }
  ~Holders() {
    stop_ = true;
    thread_.join();
  }
  long reconnects() const { return reconnects_; }

 private:
  void Open(std::size_t i) {
    const std::string source = "127.0.0." + std::to_string(2 + i % 8);
    testing::RawSocket socket(source, port_);
    const std::string& opening = openings_[i % openings_.size()];
    if (!opening.empty()) socket.Send(opening);
    if (i < peers_.size()) {
      peers_[i] = std::move(socket);
    } else {
      peers_.push_back(std::move(socket));
    }
  }
  void Run() {
    auto next_trickle = SteadyClock::now() + 5s;
    std::vector<pollfd> fds;
    while (!stop_) {
      fds.clear();
      for (const auto& peer : peers_) fds.push_back({peer.fd(), POLLIN, 0});
      ::poll(fds.data(), fds.size(), 50);
      for (std::size_t i = 0; i < peers_.size(); ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0 && peers_[i].Ended()) {
          Open(i);
          ++reconnects_;
        }
      }
      if (!trickle_.empty() && SteadyClock::now() >= next_trickle) {
        for (auto& peer : peers_) peer.Send(trickle_);
        next_trickle = SteadyClock::now() + 5s;
      }
    }
  }

  std::uint16_t port_;
  std::vector<std::string> openings_;
  std::string trickle_;
  std::vector<testing::RawSocket> peers_;
  std::atomic<bool> stop_{false};
  std::atomic<long> reconnects_{0};
  std::thread thread_;
};

// How long the legitimate client works before each attack, for its floor.
constexpr int kFloorSeconds = 5;

// One legitimate request: true if it succeeded; `why` says why not.
using LegitRequest = std::function<bool(std::string& why)>;

struct LegitFigures {
  int attempts = 0;
  int succeeded = 0;
  std::vector<double> ms;  // of the successful ones
  std::string first_failure;
};

// `request` every 500 ms for `seconds`.
LegitFigures RunLegit(int seconds, const LegitRequest& request) {
  LegitFigures figures;
  const auto end = SteadyClock::now() + std::chrono::seconds(seconds);
  while (SteadyClock::now() < end) {
    const auto started = SteadyClock::now();
    std::string why;
    ++figures.attempts;
    if (request(why)) {
      ++figures.succeeded;
      figures.ms.push_back(
          std::chrono::duration<double, std::milli>(SteadyClock::now() - started).count());
    } else if (figures.first_failure.empty()) {
      figures.first_failure = why;
    }
    std::this_thread::sleep_until(started + 500ms);
  }
  return figures;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto k = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(k, values.size() - 1)];
}

// `floor`: the same legitimate requests before the attack, in the same run.
void PrintHeld(const char* name, const std::string& attack, const LegitFigures& floor,
               const LegitFigures& legit, const Holders& holders, const Server& server,
               double before) {
  std::printf("%-10s %s: legitimate requests %d of %d succeeded (%.1f%%), latency p50 %.1f ms, "
              "p99 %.1f ms, max %.1f ms (floor without the attack: %d of %d, p50 %.1f ms, p99 "
              "%.1f ms); attackers reconnected %ld times; RSS before %.1f MiB, now %.1f MiB, "
              "peak %.1f MiB",
              name, attack.c_str(), legit.succeeded, legit.attempts,
              legit.attempts > 0 ? 100.0 * legit.succeeded / legit.attempts : 0.0,
              Percentile(legit.ms, 0.5), Percentile(legit.ms, 0.99),
              legit.ms.empty() ? 0.0 : *std::max_element(legit.ms.begin(), legit.ms.end()),
              floor.succeeded, floor.attempts, Percentile(floor.ms, 0.5),
              Percentile(floor.ms, 0.99), holders.reconnects(), before, RssMiB(server),
              PeakMiB(server));
  if (!legit.first_failure.empty()) std::printf("; first failure: %s", legit.first_failure.c_str());
  std::printf("\n");
}

LegitRequest HttpLegit(std::uint16_t port, std::optional<testing::HttpTlsFiles> tls) {
  return [port, tls](std::string& why) {
    testing::HttpCall call;
    call.target = "/api/v1/runs";
    call.source = "127.0.0.100";
    call.tls = tls;
    const testing::HttpResult result = testing::HttpOnce(port, call);
    if (result.status == 200) return true;
    why = result.status != 0 ? "HTTP " + std::to_string(result.status) + " " + result.body
                             : result.error;
    return false;
  };
}

void Slowloris(const std::string& reckon, const std::string& dir, int seconds) {
  Server server = StartServer(reckon, dir, true);
  std::this_thread::sleep_for(1s);
  const double before = RssMiB(server);
  const LegitRequest request = HttpLegit(server.http_port, std::nullopt);
  const LegitFigures floor = RunLegit(kFloorSeconds, request);
  Holders holders(server.http_port, 300,
                  {"GET /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Wait: "}, "x");
  std::this_thread::sleep_for(1s);
  const LegitFigures legit = RunLegit(seconds, request);
  PrintHeld("slowloris", "300 connections to --http from 8 addresses, headers a byte per 5 s",
            floor, legit, holders, server, before);
  (void)server.process->Terminate();
}

void IdleTls(const std::string& reckon, const std::string& dir, int seconds) {
  const std::string certs_dir = dir + "/abuse-certs";
  std::filesystem::create_directories(certs_dir);
  auto certs = testing::WriteTestCertificates(certs_dir);
  if (!certs) {
    std::fprintf(stderr, "%s\n", certs.error().ToString().c_str());
    std::exit(1);
  }
  Server server = StartServer(reckon, dir, true,
                              {"--tls-cert", certs.value().server_cert, "--tls-key",
                               certs.value().server_key});
  std::this_thread::sleep_for(1s);
  const double before = RssMiB(server);
  const LegitRequest request =
      HttpLegit(server.http_port, testing::HttpTlsFiles{.ca = certs.value().ca});
  const LegitFigures floor = RunLegit(kFloorSeconds, request);
  Holders holders(server.http_port, 300,
                  {std::string(testing::PartialClientHello()), std::string()}, "");
  std::this_thread::sleep_for(1s);
  const LegitFigures legit = RunLegit(seconds, request);
  PrintHeld("idle-tls", "300 connections to the HTTPS --http port from 8 addresses, half a "
            "ClientHello or nothing", floor, legit, holders, server, before);
  (void)server.process->Terminate();
}

void WireIdle(const std::string& reckon, const std::string& dir, int seconds) {
  Server server = StartServer(reckon, dir);
  std::this_thread::sleep_for(1s);
  const double before = RssMiB(server);
  const std::uint16_t port = server.port;
  const LegitRequest request = [port](std::string& why) {
    asio::io_context io;
    bool ok = false;
    auto run = [&]() -> asio::awaitable<void> {
      auto connect = api::Client::Connect(io.get_executor(), "127.0.0.1:" + std::to_string(port));
      auto client = co_await std::move(connect);
      if (!client) {
        why = client.error().ToString();
        co_return;
      }
      auto list = std::make_unique<capnp::MallocMessageBuilder>();
      list->initRoot<api::wire::Request>().initMethod().initListWorkflows();
      auto calling = client.value()->Call(std::move(list), 10s);
      auto listed = co_await std::move(calling);
      ok = static_cast<bool>(listed);
      if (!listed) why = listed.error().ToString();
      client.value()->Close();
    };
    asio::co_spawn(io, run(), asio::detached);
    io.run_for(15s);
    if (!ok && why.empty()) why = "no reply within 15 s";
    return ok;
  };
  const LegitFigures floor = RunLegit(kFloorSeconds, request);
  const std::array<std::uint32_t, 2> header{0, 16};  // one segment of 16 words, then nothing
  Holders holders(server.port, 1100,
                  {std::string(), std::string(reinterpret_cast<const char*>(header.data()), 8)},
                  "");
  std::this_thread::sleep_for(1s);
  const LegitFigures legit = RunLegit(seconds, request);
  PrintHeld("wire-idle", "1,100 connections to --listen from 8 addresses, silent or a frame "
            "header", floor, legit, holders, server, before);
  (void)server.process->Terminate();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("What abusive peers cost a reckon server process (RSS)");
  std::string dir;
  std::string reckon = RECKON_CLI_PATH;
  std::string only;
  app.add_option("--dir", dir, "Scratch directory for the server's journal and log")->required();
  app.add_option("--reckon", reckon, "The reckon binary to run")->capture_default_str();
  int seconds = 30;
  app.add_option("--only", only, "announce | idle | unread | slowloris | idle-tls | wire-idle");
  app.add_option("--seconds", seconds, "How long the legitimate client works during each held "
                 "scenario")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(dir);
  // 1,800 connections need as many descriptors here, and the server its own.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  std::printf("%s\n", bench::DescribeMachine(dir).c_str());
  std::printf("server: %s (default limits, --insecure-dev)\n", reckon.c_str());
  if (only.empty() || only == "announce") Announce(reckon, dir);
  if (only.empty() || only == "idle") Idle(reckon, dir);
  if (only.empty() || only == "unread") Unread(reckon, dir);
  if (only.empty() || only == "slowloris") Slowloris(reckon, dir, seconds);
  if (only.empty() || only == "idle-tls") IdleTls(reckon, dir, seconds);
  if (only.empty() || only == "wire-idle") WireIdle(reckon, dir, seconds);
  return 0;
}
