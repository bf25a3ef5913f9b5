#include "reckon/api/cli/remote.h"

#include "reckon/protocol/call_once.h"
#include "reckon/protocol/credentials.h"
#include "reckon/protocol/tls_flags.h"


#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string_view>
#include <thread>

namespace reckon::cli {

void AddRemoteFlags(CLI::App* command, RemoteFlags& flags, bool with_json) {
  const char* env = std::getenv("RECKON_SERVER");
  flags.server = env != nullptr && *env != '\0' ? env : "127.0.0.1:7233";
  command->add_option("--server", flags.server,
                      "reckon server address HOST:PORT (default $RECKON_SERVER or 127.0.0.1:7233)")
      ->type_name("HOST:PORT");
  command->add_option("--token-file", flags.token_file,
                      "File holding your API token (default $RECKON_TOKEN_FILE, then "
                      "~/.config/reckon/token)")
      ->type_name("FILE");
  api::AddTlsClientFlags(*command, flags.tls);
  if (with_json) command->add_flag("--json", flags.json, "Print JSON for scripts instead of tables");
}

std::unique_ptr<capnp::MallocMessageBuilder> NewRequest() {
  auto message = std::make_unique<capnp::MallocMessageBuilder>();
  message->initRoot<api::wire::Request>();
  return message;
}

namespace {

std::unique_ptr<capnp::MallocMessageBuilder> CopyOf(capnp::MallocMessageBuilder& request) {
  auto copy = std::make_unique<capnp::MallocMessageBuilder>();
  copy->setRoot(request.getRoot<api::wire::Request>().asReader());
  return copy;
}

}  // namespace

// A cluster (docs/DEPLOYMENT.md, "Several nodes on PostgreSQL"): a not_owner reply names the owner,
// and the same request goes there; an unavailable reply from a cluster ("cluster: ... no owner
// right now") or an owner that cannot be reached means a failover is under way, so the request is
// sent again to the server first asked, every 250 ms, for up to 15 s.
Result<api::Reply> CallServer(const RemoteFlags& flags,
                              std::unique_ptr<capnp::MallocMessageBuilder> request,
                              std::chrono::milliseconds timeout) {
  RECKON_TRY(std::string token, api::LoadClientToken(flags.token_file));
  api::ClientOptions options;
  options.token = std::move(token);
  options.tls = flags.tls;
  api::ApplyTlsEnvironment(options.tls);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  std::string server = flags.server;
  int redirects = 0;  // followed in a row; retries after a failover do not count
  for (;;) {
    Result<api::Reply> reply = api::CallOnce(server, options, CopyOf(*request), timeout);
    const bool redirected_here = server != flags.server;
    bool again = false;
    server = flags.server;
    if (!reply) {
      const Error& error = reply.error();
      if (error.code() == Errc::kNotOwner && !error.redirect().empty() && redirects < 8) {
        ++redirects;
        server = error.redirect();
        continue;
      }
      redirects = 0;
      // A failover is under way: no owner yet, or the owner we were sent to is gone (ask the
      // first server again; it learns the new owner).
      again = (error.code() == Errc::kUnavailable && error.message().starts_with("cluster:")) ||
              (redirected_here && error.code() == Errc::kUnavailable);
    }
    if (!again || std::chrono::steady_clock::now() >= give_up) return reply;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

std::string FormatTimeUs(std::int64_t us) {
  if (us <= 0) return "-";
  const std::time_t seconds = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

std::string RenderTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace reckon::cli
