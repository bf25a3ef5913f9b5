// The real `reckon server` out of file descriptors: its open-files limit is lowered to the
// descriptors it holds (tests/support/open_files_limit.h) while a peer waits in the backlog of
// each port (the wire protocol's and the console's HTTP), so every accept fails with EMFILE.
// Each accept loop must back off (the process stays nearly idle, one warning per port) rather
// than spin, and once the limit is back both ports serve again. Nothing measures speed: the
// CPU bound is a spinning loop's whole core against a few wake-ups.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/http_probe.h"
#include "tests/support/open_files_limit.h"
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

// CPU time process `pid` has used (user and system, every thread), from /proc/<pid>/stat.
std::chrono::milliseconds CpuOf(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string skip;
  for (int i = 3; i < 14; ++i) fields >> skip;  // state .. cmajflt: fields 3 to 13
  long long utime = 0, stime = 0;
  fields >> utime >> stime;
  return std::chrono::milliseconds((utime + stime) * 1000 / sysconf(_SC_CLK_TCK));
}

std::size_t Count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// What the server sends on `fd` until it closes it, for at most `timeout`.
std::string ReadUntilClosed(int fd, std::chrono::milliseconds timeout) {
  std::string out;
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    char buffer[4096];
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

TEST(AcceptBackoffServerTest, BothPortsBackOffWhileOutOfDescriptorsAndServeOnceTheyAreBack) {
  TempDir ports;
  auto started = ReckonServer::Start(
      RECKON_CLI_PATH,
      {"--http", "127.0.0.1:0", "--http-port-file", ports.File("http-port")});
  ASSERT_TRUE(started) << started.error().ToString();
  ReckonServer& server = *started.value();
  std::ifstream port_file(ports.File("http-port"));
  int http_port = 0;
  ASSERT_TRUE(port_file >> http_port) << "the server did not write --http-port-file";
  const std::string& address = server.address();
  const auto wire_port = static_cast<std::uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
  const pid_t pid = server.server_pid();
  ASSERT_NE(pid, 0);

  auto full = OpenFilesLimit::Exhaust(pid);
  ASSERT_TRUE(full) << full.error().ToString();
  RawSocket wire_peer("127.0.0.1", wire_port);
  RawSocket http_peer("127.0.0.1", static_cast<std::uint16_t>(http_port));
  ASSERT_TRUE(wire_peer.connected());
  ASSERT_TRUE(http_peer.connected());
  const auto cpu_before = CpuOf(pid);
  std::this_thread::sleep_for(1s);
  const auto cpu = CpuOf(pid) - cpu_before;
  const std::string log = ReadFile(server.dir().File("server.log"));
  EXPECT_LT(cpu, 300ms) << "an accept loop spun: " << cpu.count() << " ms of CPU in 1 s";
  // One warning per port for the whole episode, not one per failed accept.
  EXPECT_GE(Count(log, "accept failed"), 1u) << log.substr(0, 4000);
  EXPECT_LE(Count(log, "accept failed"), 2u) << log.substr(0, 4000);
  EXPECT_NE(log.find("ulimit -n"), std::string::npos) << log.substr(0, 4000);
  ASSERT_TRUE(full.value().Restore());

  // The peer that waited through it is served (no token: 401, but an HTTP reply).
  ASSERT_TRUE(http_peer.Send("GET /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  const std::string reply = ReadUntilClosed(http_peer.fd(), 5s);
  EXPECT_EQ(reply.rfind("HTTP/1.1 401", 0), 0u) << reply;
  // And the wire port serves a new client.
  const CliRun list = server.Cli({"list"});
  EXPECT_EQ(list.code(), 0) << list.Describe();
  EXPECT_TRUE(Eventually([&] {
    return Count(ReadFile(server.dir().File("server.log")), "accepting again after") >= 2;
  }, 5s)) << ReadFile(server.dir().File("server.log")).substr(0, 4000);
}

}  // namespace
}  // namespace reckon::testing
