#include "bench/nats_broker.h"

#include <arpa/inet.h>
#include <nats/nats.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace reckon::bench {
namespace {

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  return ok ? ntohs(addr.sin_port) : -1;
}

}  // namespace

struct NatsBroker::Client {
  natsConnection* conn = nullptr;
  jsCtx* js = nullptr;
  ~Client() {
    if (js != nullptr) jsCtx_Destroy(js);
    if (conn != nullptr) natsConnection_Destroy(conn);
  }
};

NatsBroker::NatsBroker(const std::string& dir, const std::string& stream,
                       const std::string& subjects)
    : port_(FreePort()), stream_(stream), client_(std::make_unique<Client>()) {
  const std::string store = dir + "/jetstream";
  std::filesystem::remove_all(store);
  testing::SubprocessOptions options;
  options.args = {"-js", "-sd", store, "-a", "127.0.0.1", "-p", std::to_string(port_)};
  options.stderr_path = dir + "/nats-server.log";
  auto started = testing::Subprocess::Start(RECKON_NATS_SERVER, options);
  if (!started) {
    std::fprintf(stderr, "cannot start nats-server: %s\n", started.error().ToString().c_str());
    std::exit(1);
  }
  server_.emplace(std::move(started).value());
  natsOptions* opts = nullptr;
  natsOptions_Create(&opts);
  natsOptions_SetURL(opts, url().c_str());
  natsOptions_SetMaxReconnect(opts, 400);
  natsOptions_SetReconnectWait(opts, 25);
  natsOptions_SetRetryOnFailedConnect(opts, true, nullptr, nullptr);
  natsStatus s = natsConnection_Connect(&client_->conn, opts);
  natsOptions_Destroy(opts);
  if (s == NATS_OK) s = natsConnection_JetStream(&client_->js, client_->conn, nullptr);
  if (s == NATS_OK) {
    jsStreamConfig config;
    jsStreamConfig_Init(&config);
    const char* subject_list[] = {subjects.c_str()};
    config.Name = stream_.c_str();
    config.Subjects = subject_list;
    config.SubjectsLen = 1;
    config.Storage = js_FileStorage;
    jsStreamInfo* info = nullptr;
    jsErrCode error = static_cast<jsErrCode>(0);
    s = js_AddStream(&info, client_->js, &config, nullptr, &error);
    if (info != nullptr) jsStreamInfo_Destroy(info);
  }
  if (s != NATS_OK) {
    std::fprintf(stderr, "nats-server did not come up with JetStream (%s); see %s/nats-server.log\n",
                 natsStatus_GetText(s), dir.c_str());
    std::exit(1);
  }
}

NatsBroker::~NatsBroker() {
  client_.reset();
  if (server_) (void)server_->Terminate(std::chrono::seconds(5));
}

std::int64_t NatsBroker::StreamMessages() {
  jsStreamInfo* info = nullptr;
  jsErrCode error = static_cast<jsErrCode>(0);
  if (js_GetStreamInfo(&info, client_->js, stream_.c_str(), nullptr, &error) != NATS_OK) {
    return -1;
  }
  const auto count = static_cast<std::int64_t>(info->State.Msgs);
  jsStreamInfo_Destroy(info);
  return count;
}

}  // namespace reckon::bench
