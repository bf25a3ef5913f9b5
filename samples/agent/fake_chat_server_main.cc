// fake-chat-server: FakeChatServer as a process, for multi-process tests of the agent.
//
//   fake-chat-server --port 0 --script FILE [--count-file FILE] [--reply-by order|turn]
//
// FILE holds a JSON array of strings, the assistant contents to reply: in order (the default),
// or by the conversation's turn (--reply-by turn: the number of assistant messages in the
// request, so a conversation re-sent after a crash gets the same reply); past its end the last
// one repeats. On start it prints exactly one line, "listening on 127.0.0.1:PORT", to
// stdout; errors go to stderr. If --count-file is given it holds the number of counted requests
// (see fake_chat_server.h) as decimal text plus a newline: written as 0 before the line is
// printed, then rewritten after each request and before it is answered, atomically (write
// FILE.tmp, rename). SIGTERM or SIGINT stops it with exit code 0. Exit code 1: unreadable or
// invalid script, or the port cannot be bound; bad flags: CLI11's codes (100 and up).
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "samples/agent/fake_chat_server.h"

namespace {

using reckon::agent::FakeChatServer;

struct Flags {
  std::uint16_t port = 0;
  std::string script;
  std::string count_file;
  FakeChatServer::ReplyBy reply_by = FakeChatServer::ReplyBy::kOrder;
};

reckon::Result<std::vector<std::string>> ReadScript(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return reckon::Err(reckon::Errc::kNotFound, "cannot read the script " + path);
  std::stringstream text;
  text << in.rdbuf();
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(text.str(), ec);
  if (ec) {
    return reckon::Err(reckon::Errc::kInvalidArgument,
                       "the script " + path + " is not JSON: " + ec.message());
  }
  if (!value.is_array() || value.as_array().empty()) {
    return reckon::Err(reckon::Errc::kInvalidArgument,
                       "the script " + path + " must be a non-empty JSON array of strings");
  }
  std::vector<std::string> contents;
  for (const boost::json::value& item : value.as_array()) {
    if (!item.is_string()) {
      return reckon::Err(reckon::Errc::kInvalidArgument,
                         "the script " + path + " has an element #" +
                             std::to_string(contents.size()) + " that is not a string");
    }
    contents.emplace_back(item.as_string());
  }
  return contents;
}

// Writes "count\n" to `path` via a temporary file and rename, so readers never see a partial
// file. Failures go to stderr (a test will notice the stale count).
void WriteCount(const std::string& path, std::uint64_t count) {
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << count << "\n";
    if (!out.flush()) {
      std::cerr << "fake-chat-server: cannot write " << temporary << "\n";
      return;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::cerr << "fake-chat-server: cannot rename " << temporary << " to " << path << "\n";
  }
}

int Run(const Flags& flags) {
  reckon::Result<std::vector<std::string>> script = ReadScript(flags.script);
  if (!script) {
    std::cerr << "fake-chat-server: " << script.error().ToString() << "\n";
    return 1;
  }
  // Blocked before the server thread starts, so that thread inherits the mask and sigwait
  // below receives the signals.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  FakeChatServer::Options options;
  options.port = flags.port;
  options.contents = std::move(script).value();
  options.reply_by = flags.reply_by;
  if (!flags.count_file.empty()) {
    WriteCount(flags.count_file, 0);
    options.on_request = [path = flags.count_file](std::uint64_t count) {
      WriteCount(path, count);
    };
  }
  FakeChatServer server(std::move(options));
  reckon::Result<void> started = server.Start();
  if (!started) {
    std::cerr << "fake-chat-server: " << started.error().ToString() << "\n";
    return 1;
  }
  std::cout << "listening on 127.0.0.1:" << server.port() << std::endl;
  int signal = 0;
  sigwait(&stop_signals, &signal);
  server.Stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fake-chat-server: an OpenAI-compatible chat endpoint replying from a script"};
  Flags flags;
  app.add_option("--port", flags.port, "TCP port on 127.0.0.1 (0: pick a free one)");
  app.add_option("--script", flags.script, "JSON array of assistant contents")->required();
  app.add_option("--count-file", flags.count_file,
                 "file rewritten with the number of requests after each one");
  const std::map<std::string, FakeChatServer::ReplyBy> reply_by{
      {"order", FakeChatServer::ReplyBy::kOrder}, {"turn", FakeChatServer::ReplyBy::kTurn}};
  app.add_option("--reply-by", flags.reply_by,
                 "order: the script advances per reply; turn: the reply at the conversation's "
                 "turn (its number of assistant messages)")
      ->transform(CLI::CheckedTransformer(reply_by, CLI::ignore_case));
  CLI11_PARSE(app, argc, argv);
  try {
    return Run(flags);
  } catch (const std::exception& e) {
    std::cerr << "fake-chat-server: fatal: " << e.what() << "\n";
    return 1;
  }
}
