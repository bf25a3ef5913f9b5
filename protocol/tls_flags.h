// The TLS flags every program that connects to a `reckon server` takes (the `reckon` CLI,
// workers, benchmarks), so they read the same everywhere:
//
//   --ca FILE           trust the CAs in FILE (else $RECKON_CA, else, with --tls, the system's)
//   --tls               use TLS with the system's CA store
//   --cert F --key F    present this client certificate (a server with --client-ca needs one;
//                       else $RECKON_CERT and $RECKON_KEY)
//   --server-name NAME  verify the server's certificate for NAME instead of the host dialled
//
// Any of --ca, $RECKON_CA, --cert, $RECKON_CERT or --tls turns TLS on; with none, the connection is plaintext.
#pragma once

#include <CLI/CLI.hpp>

#include "reckon/protocol/tls.h"

namespace reckon::api {

// Adds the flags above to `app`; `config` must outlive it.
void AddTlsClientFlags(CLI::App& app, TlsClientConfig& config);

// After parsing: takes $RECKON_CA when --ca was not given, and $RECKON_CERT and $RECKON_KEY
// when --cert was not given.
void ApplyTlsEnvironment(TlsClientConfig& config);

}  // namespace reckon::api
