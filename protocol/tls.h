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
// the flag it came from and OpenSSL's reason; nothing is half-configured. Private keys
// (--tls-key, --key) are private files (base/private_file.h): one that group or others may
// access is refused (kFailedPrecondition) with the chmod that fixes it, as a token file is.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "reckon/base/error.h"

struct ssl_st;  // OpenSSL's SSL

namespace reckon::api {

struct TlsServerFiles {
  std::string cert_file;       // --tls-cert
  std::string key_file;        // --tls-key
  std::string client_ca_file;  // --client-ca: verify client certificates against these CAs
  bool enabled() const { return !cert_file.empty() || !key_file.empty(); }
};

// Errc::kInvalidArgument also when only one of cert and key is given, or --client-ca without
// them. Errc::kFailedPrecondition when the certificate has expired or is not valid yet (the
// message gives its dates and the time now): every Reckon client verifies the server's
// certificate, so a server presenting it could serve no client, and refusing at start says so
// where the operator looks, instead of in every client's failed handshake.
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

// When the certificate `context` presents (read from `cert_file`) expires within `within`: a
// warning that says when and what to do; empty otherwise. For a server to log at start.
std::string CertificateExpiryWarning(boost::asio::ssl::context& context,
                                     const std::string& cert_file,
                                     std::chrono::seconds within = std::chrono::hours(14 * 24));

Result<std::shared_ptr<boost::asio::ssl::context>> MakeClientTlsContext(
    const TlsClientConfig& config);

// OpenSSL's reason for a failed handshake or read, e.g. "certificate verify failed"; with
// `verify_result` (SSL_get_verify_result) not X509_V_OK, the certificate's defect is added
// ("self-signed certificate in certificate chain").
std::string DescribeTlsError(const boost::system::error_code& ec, long verify_result);

// The subject of the certificate the peer of `ssl` presented, if the handshake verified it
// against the context's CAs ("/CN=worker-1"); "" when it presented none or it did not verify.
// `ssl` is a server's connection after its handshake (SSL*, from native_handle()).
std::string VerifiedPeerCertificate(ssl_st* ssl);

// Whether `ec` is a TLS alert by which the peer refused this side's certificate (unknown CA,
// expired, revoked, bad, or none when one is required): what a client reads when the server's
// --client-ca does not accept its --cert, during its handshake (TLS 1.2) or right after it
// (TLS 1.3, where the server checks the client's certificate after the client is done).
bool IsCertificateRefusal(const boost::system::error_code& ec);

// The first byte of every TLS connection (a handshake record). A server that sees it on a
// plaintext port, or does not see it on a TLS port, knows the two sides disagree.
constexpr std::byte kTlsHandshakeByte{0x16};

}  // namespace reckon::api
