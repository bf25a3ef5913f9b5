// TLS for the Reckon protocol: the server's and the client's OpenSSL contexts, built from PEM
// files, and the words a failed handshake is explained with. docs/SECURITY.md
// ("Transport: TLS and client certificates")
// says how to deploy it; api/server/server.h and protocol/client.h use it.
//
// Both sides speak TLS 1.2 or 1.3 only. The server presents `cert_file` (a PEM chain, its own
// certificate first) and, with `client_ca_file`, asks clients for a certificate: one that
// does not chain to those CAs fails the handshake; none is accepted by TLS, and the server
// then refuses the requests that need one (workers': api/server/authorizer.h). The client verifies the server's
// certificate against `ca_file` (or the system's store) and checks that it names the host it
// dialled (or `server_name`), DNS name or IP address alike.
//
// Errors: a file that cannot be read or parsed yields Errc::kInvalidArgument naming the file,
// the flag it came from and OpenSSL's reason; nothing is half-configured.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "reckon/base/error.h"

namespace reckon::api {

struct TlsServerFiles {
  std::string cert_file;       // --tls-cert
  std::string key_file;        // --tls-key
  std::string client_ca_file;  // --client-ca: verify client certificates against these CAs
  bool enabled() const { return !cert_file.empty() || !key_file.empty(); }
};

// Errc::kInvalidArgument also when only one of cert and key is given, or --client-ca without
// them.
Result<std::shared_ptr<boost::asio::ssl::context>> MakeServerTlsContext(
    const TlsServerFiles& files);

struct TlsClientConfig {
  bool enabled = false;     // --tls: use TLS and the system's CA store
  std::string ca_file;      // --ca (or $RECKON_CA): trust these CAs instead; implies TLS
  std::string cert_file;    // --cert: the client certificate, for a server with --client-ca
  std::string key_file;     // --key
  std::string server_name;  // --server-name: the name to verify; empty: the host dialled
  bool on() const { return enabled || !ca_file.empty() || !cert_file.empty(); }
};

Result<std::shared_ptr<boost::asio::ssl::context>> MakeClientTlsContext(
    const TlsClientConfig& config);

// OpenSSL's reason for a failed handshake or read, e.g. "certificate verify failed"; with
// `verify_result` (SSL_get_verify_result) not X509_V_OK, the certificate's defect is added
// ("self-signed certificate in certificate chain").
std::string DescribeTlsError(const boost::system::error_code& ec, long verify_result);

// The first byte of every TLS connection (a handshake record). A server that sees it on a
// plaintext port, or does not see it on a TLS port, knows the two sides disagree.
constexpr std::byte kTlsHandshakeByte{0x16};

}  // namespace reckon::api
