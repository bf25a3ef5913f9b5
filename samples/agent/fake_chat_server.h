// FakeChatServer: an OpenAI-compatible chat-completions endpoint on 127.0.0.1, for tests, the
// agent sample and the fake-chat-server binary. A real HTTP/1.1 server (Beast) on its own
// thread and io_context, so a test's own io_context can call it.
//
//   POST /v1/chat/completions   the next action (see below); counted and recorded
//   other method on that path   405, other paths 404 (neither counted)
//
// What a counted request gets, in this order:
//   1. the next queued one-off action, if any (FailNext, HangNext, ReplyNext; FIFO);
//   2. 400 with an OpenAI-shaped error if the body is not a JSON object with a string "model"
//      and an array "messages";
//   3. 200 with CompletionBody(scripted content, request's model). Which content: with
//      Options::reply_by kOrder the script advances per such reply; with kTurn it is the one at
//      the conversation's turn, the number of "assistant" messages in the request, so the same
//      conversation asked twice gets the same reply, as from a deterministic model (what a
//      crash test needs: a request re-sent after a crash must not skip ahead). Past the
//      script's end the last content repeats (an empty script gives 500).
// Failure bodies are OpenAI-shaped: {"error": {"message", "type", "code"}}. A hung request is
// read and never answered; its connection stays open until the client closes it or Stop().
//
// Lifecycle: construct, Start() once (binds, then serves on a new thread), Stop() (idempotent;
// the destructor calls it). Stop abandons requests in flight and closes every connection.
// Thread-safety: every public method may be called from any thread, concurrently with serving.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"

namespace reckon::agent {

struct FakeChatRequest {
  std::string body;
  std::optional<std::string> authorization;  // the Authorization header, if sent
};

class FakeChatServer {
 public:
  enum class ReplyBy { kOrder, kTurn };
  struct Options {
    std::uint16_t port = 0;             // 0: pick a free port
    std::vector<std::string> contents;  // assistant contents
    ReplyBy reply_by = ReplyBy::kOrder;
    // Called on the server thread after each counted request is recorded and before it is
    // answered, with the count so far. Must not call Stop().
    std::function<void(std::uint64_t count)> on_request;
  };

  explicit FakeChatServer(Options options);
  ~FakeChatServer();
  FakeChatServer(const FakeChatServer&) = delete;
  FakeChatServer& operator=(const FakeChatServer&) = delete;

  // Binds 127.0.0.1:options.port and starts serving. kUnavailable if the port cannot be bound;
  // kFailedPrecondition if already started.
  Result<void> Start();
  void Stop();

  // The bound port; 0 before Start.
  std::uint16_t port() const;
  // Counted requests so far, and the last one (nullopt before the first).
  std::uint64_t request_count() const;
  std::optional<FakeChatRequest> last_request() const;

  // Queue one-off actions for the next counted requests.
  void FailNext(int count, int status);          // `status` with an OpenAI-shaped error body
  void HangNext(int count);                      // never answer
  void ReplyNext(int status, std::string body);  // exactly this status and body (JSON or not)

  // A complete OpenAI chat.completion body with one choice: `content`, finish_reason "stop".
  static std::string CompletionBody(std::string_view content, std::string_view model);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace reckon::agent
