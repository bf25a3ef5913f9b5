// What the `reckon` subcommands that talk to a server share: the --server, --token-file, TLS
// (protocol/tls_flags.h) and --json flags, and one synchronous request/reply over a fresh
// connection.
//
// The server address comes from --server, else $RECKON_SERVER, else 127.0.0.1:7233. The API
// token from --token-file, else $RECKON_TOKEN_FILE, else ~/.config/reckon/token
// (protocol/credentials.h); never from the command line. Errors say what to do: an
// unreachable server names the address and suggests `reckon server`.
#pragma once

#include <CLI/CLI.hpp>
#include <capnp/message.h>

#include <chrono>
#include <memory>
#include <string>

#include "reckon/protocol/client.h"
#include "reckon/protocol/reckon.capnp.h"
#include "reckon/base/error.h"

namespace reckon::cli {

struct RemoteFlags {
  std::string server;
  std::string token_file;
  api::TlsClientConfig tls;  // --ca, --tls, --cert, --key, --server-name
  bool json = false;
};

// Adds --server and --token-file (and --json unless `with_json` is false) to `command`;
// `flags` must outlive it.
void AddRemoteFlags(CLI::App* command, RemoteFlags& flags, bool with_json = true);

// A Request message to fill: `NewRequest()->getRoot<api::wire::Request>().initMethod()...`.
std::unique_ptr<capnp::MallocMessageBuilder> NewRequest();

// Sends `request` to the server in `flags` and waits for its reply. In a cluster it follows a
// not_owner redirect to the workflow's owner, and while a shard has no owner (a failover)
// asks again for up to 15 s (docs/DEPLOYMENT.md, "Several nodes on PostgreSQL").
Result<api::Reply> CallServer(const RemoteFlags& flags,
                              std::unique_ptr<capnp::MallocMessageBuilder> request,
                              std::chrono::milliseconds timeout = std::chrono::seconds(30));

// "2026-11-30 07:22:09" (UTC) for microseconds since the epoch; "-" for 0.
std::string FormatTimeUs(std::int64_t us);

// Left-aligned columns separated by two spaces; the first row is the header.
std::string RenderTable(const std::vector<std::vector<std::string>>& rows);

}  // namespace reckon::cli
