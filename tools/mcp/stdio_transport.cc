#include "reckon/tools/mcp/stdio_transport.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <thread>

extern char** environ;

namespace reckon::tools {
namespace asio = boost::asio;
namespace json = boost::json;
using local_socket = asio::local::stream_protocol::socket;

namespace {

constexpr std::size_t kMaxLineBytes = 16 * 1024 * 1024;

// One request waiting for its answer. Lives in the waiting coroutine's frame; the life's
// `pending` map points to it only while that coroutine waits.
struct Pending {
  asio::steady_timer* wake = nullptr;
  std::optional<json::value> response;
  bool written = false;  // its whole line was handed to the server
  bool ended = false;    // the life ended before an answer
  std::string reason;
  std::string message;
};

}  // namespace

struct StdioTransport::Life {
  explicit Life(asio::any_io_executor executor) : to_child(executor), from_child(executor) {}

  pid_t pid = -1;
  std::string name;
  local_socket to_child;    // the server's stdin
  local_socket from_child;  // the server's stdout
  bool ended = false;
  bool initialized = false;
  std::int64_t next_id = 1;
  std::map<std::int64_t, Pending*> pending;
  std::deque<std::pair<std::int64_t, std::string>> outbox;  // id (0: no answer awaited), line
  bool writing = false;
};

namespace {

using Life = StdioTransport::Life;

asio::awaitable<void> Reap(pid_t pid) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    int status = 0;
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid || (got < 0 && errno != EINTR)) co_return;
    timer.expires_after(std::chrono::milliseconds(20));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

// Ends a life: the server is killed and reaped, and every waiting request learns it.
void End(const std::shared_ptr<Life>& life, const std::string& reason, const std::string& message) {
  if (life->ended) return;
  life->ended = true;
  spdlog::warn("MCP server {}: {}", life->name, message);
  boost::system::error_code ignored;
  life->to_child.close(ignored);
  life->from_child.close(ignored);
  if (life->pid > 0) {
    ::kill(life->pid, SIGKILL);
    asio::co_spawn(life->to_child.get_executor(), Reap(life->pid), asio::detached);
  }
  for (auto& [id, pending] : life->pending) {
    pending->ended = true;
    pending->reason = reason;
    pending->message = message;
    pending->wake->cancel();
  }
  life->outbox.clear();
}

asio::awaitable<void> WriteLoop(std::shared_ptr<Life> life) {
  while (!life->outbox.empty() && !life->ended) {
    auto [id, line] = std::move(life->outbox.front());
    life->outbox.pop_front();
    auto [ec, n] = co_await asio::async_write(life->to_child, asio::buffer(line),
                                              asio::as_tuple(asio::use_awaitable));
    if (ec) {
      // A line cut short is no request: the server never saw its newline.
      End(life, "connection_lost", "writing to the server's stdin failed: " + ec.message());
      break;
    }
    if (auto it = life->pending.find(id); id != 0 && it != life->pending.end()) {
      it->second->written = true;
    }
  }
  life->writing = false;
}

void Enqueue(const std::shared_ptr<Life>& life, std::int64_t id, const json::object& message) {
  life->outbox.emplace_back(id, json::serialize(message) + "\n");
  if (!life->writing) {
    life->writing = true;
    asio::co_spawn(life->to_child.get_executor(), WriteLoop(life), asio::detached);
  }
}

void HandleLine(const std::shared_ptr<Life>& life, std::string_view line) {
  boost::system::error_code ec;
  json::value message = json::parse(line, ec);
  Result<JsonRpcMessage> kind = ec ? Result<JsonRpcMessage>(Err(Errc::kInvalidArgument, ec.message()))
                                   : ClassifyMessage(message);
  if (!kind) {
    End(life, "bad_reply",
        "the server wrote a line that is not a JSON-RPC message (" + kind.error().message() +
            "): " + std::string(line.substr(0, 200)));
    return;
  }
  switch (kind.value().kind) {
    case JsonRpcMessage::Kind::kResponse: {
      auto it = kind.value().id ? life->pending.find(*kind.value().id) : life->pending.end();
      if (it == life->pending.end()) return;  // an answer nobody waits for any more
      it->second->response = std::move(message);
      it->second->wake->cancel();
      return;
    }
    case JsonRpcMessage::Kind::kRequest:
      Enqueue(life, 0, AnswerServerRequest(kind.value()));
      return;
    case JsonRpcMessage::Kind::kNotification:
      return;  // logging and progress notifications are not used
  }
}

asio::awaitable<void> ReadLoop(std::shared_ptr<Life> life) {
  std::string buffer;
  for (;;) {
    auto [ec, n] = co_await asio::async_read_until(
        life->from_child, asio::dynamic_buffer(buffer, kMaxLineBytes), '\n',
        asio::as_tuple(asio::use_awaitable));
    if (ec) {
      End(life, "connection_lost",
          ec == asio::error::not_found ? "the server wrote a line over 16 MiB"
                                       : "the server closed its stdout (" + ec.message() + ")");
      co_return;
    }
    std::string_view line(buffer.data(), n - 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) HandleLine(life, line);
    if (life->ended) co_return;
    buffer.erase(0, n);
  }
}

// One request on one life. Never co_awaits after a cancellation.
asio::awaitable<McpReply> Exchange(std::shared_ptr<Life> life, std::string method,
                                   json::object params, McpTransport::Deadline deadline) {
  if (life->ended) co_return ReplyNotSent("connection_lost", "the server is not running");
  const std::int64_t id = life->next_id++;
  Pending pending;
  asio::steady_timer wake(life->to_child.get_executor());
  wake.expires_at(deadline);
  pending.wake = &wake;
  life->pending[id] = &pending;
  Enqueue(life, id, JsonRpcRequest(id, method, std::move(params)));
  const std::tuple<boost::system::error_code> waited =
      co_await wake.async_wait(asio::as_tuple(asio::use_awaitable));
  const boost::system::error_code ec = std::get<0>(waited);
  life->pending.erase(id);
  const std::string what = "MCP server " + life->name + ": " + method + ": ";
  if (pending.response) co_return ReplyFromResponse(*pending.response, life->name);
  if (pending.ended) {
    co_return pending.written ? ReplyUnknown(pending.reason, what + pending.message)
                              : ReplyNotSent(pending.reason, what + pending.message);
  }
  const std::string reason = ec == asio::error::operation_aborted ? "cancelled" : "deadline";
  for (auto it = life->outbox.begin(); it != life->outbox.end(); ++it) {
    if (it->first == id) {  // never handed to the server
      life->outbox.erase(it);
      co_return ReplyNotSent(reason, what + "gave up (" + reason + ") before sending it");
    }
  }
  Enqueue(life, 0,
          JsonRpcNotification("notifications/cancelled",
                              json::object{{"requestId", id}, {"reason", reason}}));
  co_return ReplyUnknown(reason, what + "no answer before the " + reason +
                                     "; the server may have acted on it");
}

}  // namespace

Result<std::vector<std::string>> SplitCommandLine(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0; else word += c;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else if (quote == '"') {
      if (c == '"') quote = 0; else word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) {
    return Err(Errc::kInvalidArgument,
               std::string("MCP command: unterminated ") + quote + " quote in '" +
                   std::string(line) + "'");
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return Err(Errc::kInvalidArgument, "MCP command: empty; give 'COMMAND ARGS'");
  return words;
}

StdioTransport::StdioTransport(asio::any_io_executor executor, std::vector<std::string> argv)
    : executor_(executor), argv_(std::move(argv)) {
  name_ = "stdio '";
  for (std::size_t i = 0; i < argv_.size(); ++i) name_ += (i > 0 ? " " : "") + argv_[i];
  name_ += "'";
}

StdioTransport::~StdioTransport() {
  if (!life_ || life_->ended || life_->pid <= 0) return;
  life_->ended = true;
  boost::system::error_code ignored;
  life_->to_child.close(ignored);  // EOF on its stdin: the way MCP asks a server to stop
  life_->from_child.close(ignored);
  ::kill(life_->pid, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    int status = 0;
    if (::waitpid(life_->pid, &status, WNOHANG) != 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(life_->pid, SIGKILL);
  int status = 0;
  ::waitpid(life_->pid, &status, 0);
}

asio::awaitable<McpReply> StdioTransport::Request(std::string method, json::object params,
                                                  Deadline deadline) {
  for (int round = 0;; ++round) {
    std::shared_ptr<Life> life;
    McpReply ready = co_await Ready(deadline, life);
    if (ready.status != McpReply::Status::kResult) co_return ready;
    McpReply reply = co_await Exchange(life, method, params, deadline);
    // The server was gone before the line reached it: nothing happened; once more, on a new one.
    if (round == 0 && reply.status == McpReply::Status::kNotSent &&
        reply.reason == "connection_lost") {
      continue;
    }
    co_return reply;
  }
}

asio::awaitable<McpReply> StdioTransport::Ready(Deadline deadline, std::shared_ptr<Life>& out) {
  for (;;) {
    if (life_ && !life_->ended && life_->initialized) {
      out = life_;
      McpReply ok;
      ok.status = McpReply::Status::kResult;
      co_return ok;
    }
    if (!starting_) {
      McpReply started = co_await Start(deadline);
      if (started.status != McpReply::Status::kResult) co_return started;
      continue;  // takes the new life above
    }
    asio::steady_timer wait(executor_);
    wait.expires_at(deadline);
    waiters_.push_back(&wait);
    auto [ec] = co_await wait.async_wait(asio::as_tuple(asio::use_awaitable));
    std::erase(waiters_, &wait);
    asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
    if (state.cancelled() != asio::cancellation_type::none) {
      co_return ReplyNotSent("cancelled", "MCP server " + name_ + ": cancelled while it started");
    }
    if (!ec && starting_) {
      co_return ReplyNotSent("deadline", "MCP server " + name_ + ": still starting at the deadline");
    }
  }
}

asio::awaitable<McpReply> StdioTransport::Start(Deadline deadline) {
  starting_ = true;
  struct Done {  // wakes whoever waited for this start, however it ends
    StdioTransport* self;
    ~Done() {
      self->starting_ = false;
      for (asio::steady_timer* waiter : self->waiters_) waiter->cancel();
    }
  } done{this};
  int in_pair[2];
  int out_pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) != 0) {
    co_return ReplyNotSent("not_started", "MCP server " + name_ + ": socketpair: " + std::strerror(errno));
  }
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, out_pair) != 0) {
    ::close(in_pair[0]);
    ::close(in_pair[1]);
    co_return ReplyNotSent("not_started", "MCP server " + name_ + ": socketpair: " + std::strerror(errno));
  }
  ::shutdown(in_pair[1], SHUT_RD);  // the child only reads its stdin, we only write it
  ::shutdown(out_pair[1], SHUT_WR);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pair[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pair[0], 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all;
  sigset_t none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> argv;
  for (std::string& arg : argv_) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(in_pair[0]);
  ::close(out_pair[0]);
  if (spawned != 0) {
    ::close(in_pair[1]);
    ::close(out_pair[1]);
    co_return ReplyNotSent("not_started", "MCP server " + name_ + ": cannot run '" + argv_[0] +
                                              "': " + std::strerror(spawned));
  }
  ++starts_;
  auto life = std::make_shared<Life>(executor_);
  life->pid = pid;
  life->name = name_ + " (pid " + std::to_string(pid) + ")";
  life->to_child.assign(asio::local::stream_protocol(), in_pair[1]);
  life->from_child.assign(asio::local::stream_protocol(), out_pair[1]);
  life_ = life;
  asio::co_spawn(executor_, ReadLoop(life), asio::detached);
  McpReply init = co_await Exchange(life, "initialize", InitializeParams(), deadline);
  Result<std::string> version = init.status == McpReply::Status::kResult
                                    ? CheckInitializeResult(init.result)
                                    : Result<std::string>(Err(Errc::kUnavailable, init.message));
  if (!version) {
    End(life, "not_started", "initialize failed: " + version.error().message());
    co_return ReplyNotSent(init.reason == "cancelled" ? "cancelled" : "not_started",
                           "MCP server " + name_ + " did not start: " + version.error().message());
  }
  Enqueue(life, 0, JsonRpcNotification("notifications/initialized", {}));
  life->initialized = true;
  McpReply ok;
  ok.status = McpReply::Status::kResult;
  co_return ok;
}

}  // namespace reckon::tools
