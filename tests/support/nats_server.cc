#include "tests/support/nats_server.h"

#include <arpa/inet.h>
#include <nats/nats.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "tests/support/crash_support.h"

namespace reckon::testing {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

// A client connection for one admin call.
struct Client {
  natsConnection* conn = nullptr;
  jsCtx* js = nullptr;
  ~Client() {
    if (js != nullptr) jsCtx_Destroy(js);
    if (conn != nullptr) natsConnection_Destroy(conn);
  }
};

std::string NatsText(natsStatus status, jsErrCode js_error = static_cast<jsErrCode>(0)) {
  std::string text = natsStatus_GetText(status);
  const char* last = nats_GetLastError(nullptr);
  if (last != nullptr && *last != '\0') text += std::string(" (") + last + ")";
  if (js_error != 0) text += ", JetStream error " + std::to_string(static_cast<int>(js_error));
  return text;
}

// One connection attempt, no retry: the caller loops.
Result<std::unique_ptr<Client>> Connect(const std::string& url) {
  natsOptions* opts = nullptr;
  if (natsOptions_Create(&opts) != NATS_OK) return Err(Errc::kInternal, "natsOptions_Create");
  natsStatus s = natsOptions_SetURL(opts, url.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, 1000);
  if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts, false);
  auto client = std::make_unique<Client>();
  if (s == NATS_OK) s = natsConnection_Connect(&client->conn, opts);
  natsOptions_Destroy(opts);
  if (s == NATS_OK) s = natsConnection_JetStream(&client->js, client->conn, nullptr);
  if (s != NATS_OK) return Err(Errc::kUnavailable, "connecting to " + url + ": " + NatsText(s));
  return client;
}

}  // namespace

int FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  return ok ? ntohs(addr.sin_port) : -1;
}

Result<std::unique_ptr<NatsServer>> NatsServer::Start(NatsServerOptions options) {
  std::unique_ptr<NatsServer> server(new NatsServer(std::move(options)));
  server->port_ = FreeLoopbackPort();
  if (server->port_ <= 0) return Err(Errc::kUnavailable, "no free port on 127.0.0.1");
  RECKON_TRY(server->Launch());
  return server;
}

NatsServer::~NatsServer() = default;  // the Subprocess SIGKILLs and reaps

Result<void> NatsServer::Launch() {
  SubprocessOptions options;
  options.args = {"-js", "-sd", (options_.dir / "jetstream").string(), "-a", "127.0.0.1",
                  "-p", std::to_string(port_)};
  options.stderr_path = log_path();
  std::ofstream(log_path(), std::ios::app) << "=== nats-server life " << ++lives_ << "\n";
  RECKON_TRY(Subprocess process, Subprocess::Start(options_.program, std::move(options)));
  process_.emplace(std::move(process));
  const SteadyClock::time_point deadline = SteadyClock::now() + options_.ready_timeout;
  std::string last_error;
  for (;;) {
    auto client = Connect(url());
    if (client) {
      jsAccountInfo* info = nullptr;
      jsErrCode js_error = static_cast<jsErrCode>(0);
      natsStatus s = js_GetAccountInfo(&info, client.value()->js, nullptr, &js_error);
      if (info != nullptr) jsAccountInfo_Destroy(info);
      if (s == NATS_OK) return Ok();
      last_error = "JetStream not ready: " + NatsText(s, js_error);
    } else {
      last_error = client.error().message();
    }
    if (auto ended = process_->WaitFor(0ms); ended) {
      return Err(Errc::kInternal, "nats-server " + ended.value().ToString() +
                                      " before it served:\n" + Tail(log_path()));
    }
    if (SteadyClock::now() >= deadline) {
      return Err(Errc::kDeadlineExceeded, "nats-server on port " + std::to_string(port_) +
                                              " not ready in time (" + last_error + "):\n" +
                                              Tail(log_path()));
    }
    std::this_thread::sleep_for(20ms);
  }
}

Result<void> NatsServer::Kill() {
  if (!running()) return Err(Errc::kFailedPrecondition, "nats-server is not running");
  RECKON_TRY(process_->Kill(SIGKILL));
  RECKON_TRY(ExitStatus status, process_->Wait());
  (void)status;
  return Ok();
}

Result<void> NatsServer::Pause() {
  if (!running()) return Err(Errc::kFailedPrecondition, "nats-server is not running");
  return process_->Kill(SIGSTOP);
}

Result<void> NatsServer::Resume() {
  if (!running()) return Err(Errc::kFailedPrecondition, "nats-server is not running");
  return process_->Kill(SIGCONT);
}

Result<void> NatsServer::Restart() {
  if (running()) return Err(Errc::kFailedPrecondition, "nats-server is still running");
  return Launch();
}

Result<void> NatsServer::Stop() {
  if (!running()) return Ok();
  // SIGINT: nats-server shuts down and exits 0 (on SIGTERM it exits 1).
  RECKON_TRY(process_->Kill(SIGINT));
  Result<ExitStatus> status = process_->WaitFor(10s);
  if (!status) {
    (void)process_->Kill(SIGKILL);
    (void)process_->Wait();
    return Err(Errc::kInternal, "nats-server did not stop within 10 s of SIGINT:\n" +
                                    Tail(log_path()));
  }
  if (!status.value().Succeeded()) {
    return Err(Errc::kInternal, "nats-server " + status.value().ToString() + " on SIGINT:\n" +
                                    Tail(log_path()));
  }
  return Ok();
}

Result<void> NatsServer::AddStream(const std::string& name,
                                   const std::vector<std::string>& subjects,
                                   std::chrono::milliseconds duplicate_window) {
  RECKON_TRY(auto client, Connect(url()));
  std::vector<const char*> subject_ptrs;
  for (const std::string& subject : subjects) subject_ptrs.push_back(subject.c_str());
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = name.c_str();
  config.Subjects = subject_ptrs.data();
  config.SubjectsLen = static_cast<int>(subject_ptrs.size());
  config.Storage = js_FileStorage;
  config.Duplicates = std::chrono::nanoseconds(duplicate_window).count();
  jsStreamInfo* info = nullptr;
  jsErrCode js_error = static_cast<jsErrCode>(0);
  natsStatus s = js_AddStream(&info, client->js, &config, nullptr, &js_error);
  if (info != nullptr) jsStreamInfo_Destroy(info);
  if (s != NATS_OK) {
    return Err(Errc::kInternal, "declaring stream " + name + ": " + NatsText(s, js_error));
  }
  return Ok();
}

Result<NatsStreamState> NatsServer::StreamState(const std::string& name) {
  RECKON_TRY(auto client, Connect(url()));
  jsStreamInfo* info = nullptr;
  jsErrCode js_error = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&info, client->js, name.c_str(), nullptr, &js_error);
  if (s != NATS_OK) {
    return Err(Errc::kInternal, "stream info of " + name + ": " + NatsText(s, js_error));
  }
  NatsStreamState state{static_cast<std::int64_t>(info->State.Msgs),
                        static_cast<std::int64_t>(info->State.LastSeq)};
  jsStreamInfo_Destroy(info);
  return state;
}

}  // namespace reckon::testing
