// Test certificates for TLS tests, made fresh in a directory at run time (nothing is read from
// outside the repository, and nothing expires between runs): a CA, a server certificate it
// signs for 127.0.0.1 and localhost, a client certificate it signs (for mTLS), a second,
// unrelated CA with a client certificate of its own (what an untrusted party presents),
// server certificates of the first CA that expired, are not valid yet, or expire soon, and
// a client certificate of the first CA that expired yesterday.
// Keys are P-256. Every file is PEM, mode 0600 for keys.
#pragma once

#include <filesystem>
#include <string>

#include "reckon/base/error.h"

namespace reckon::testing {

struct TestCertificates {
  std::string ca;  // the CA's certificate
  std::string server_cert, server_key;  // CN=reckon-server, SAN IP:127.0.0.1, DNS:localhost
  std::string client_cert, client_key;  // CN=worker-1, signed by `ca`
  std::string other_ca;                 // an unrelated CA
  std::string other_client_cert, other_client_key;  // CN=intruder, signed by `other_ca`
  std::string other_server_cert, other_server_key;  // as the server's, signed by `other_ca`
  // As the server's, signed by `ca`, valid: from 30 days ago until yesterday; from tomorrow on;
  // from an hour ago until two days from now.
  std::string expired_server_cert, expired_server_key;
  std::string future_server_cert, future_server_key;
  std::string expiring_server_cert, expiring_server_key;
  std::string expired_client_cert, expired_client_key;  // CN=worker-expired, by `ca`; expired
};

// Writes the files into `dir` (which must exist). Errc::kInternal naming the OpenSSL step if
// one fails.
Result<TestCertificates> WriteTestCertificates(const std::filesystem::path& dir);

}  // namespace reckon::testing
