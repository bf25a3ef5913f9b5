#include "reckon/protocol/tls.h"

#include <openssl/crypto.h>
#include <boost/asio/ssl/error.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/buffer.hpp>

#include <cstdint>
#include <ctime>

#include "reckon/base/private_file.h"

namespace reckon::api {
namespace ssl = boost::asio::ssl;

namespace {

Error FileError(const std::string& flag, const std::string& file, std::string_view what,
                const boost::system::error_code& ec) {
  return Err(Errc::kInvalidArgument, flag + " " + file + ": " + std::string(what) + " (" +
                                         ec.message() + "); give a readable PEM file");
}

// Loads the private key in `file` (given with `flag`) into `context`, read as a private file:
// one that group or others may access is refused like a token file (base/private_file.h).
Result<void> UsePrivateKey(ssl::context& context, const std::string& flag,
                           const std::string& file) {
  RECKON_TRY(std::string pem, ReadPrivateFile(file, flag));
  boost::system::error_code ec;
  context.use_private_key(boost::asio::buffer(pem), ssl::context::pem, ec);
  OPENSSL_cleanse(pem.data(), pem.size());
  if (ec) return FileError(flag, file, "not a PEM private key", ec);
  return Ok();
}

// "2026-01-31T12:00:00Z", or "?" when OpenSSL cannot read the time.
std::string TimeText(const ASN1_TIME* time) {
  std::tm tm{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) return "?";
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string NowText() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// Refuses a server certificate that has expired or is not valid yet: every Reckon client
// verifies the server's certificate, so such a server could serve no client.
Result<void> RequireValidNow(ssl::context& context, const std::string& cert_file) {
  X509* cert = SSL_CTX_get0_certificate(context.native_handle());
  if (cert == nullptr) return Ok();
  const ASN1_TIME* not_after = X509_get0_notAfter(cert);
  const ASN1_TIME* not_before = X509_get0_notBefore(cert);
  if (X509_cmp_current_time(not_after) < 0) {
    return Err(Errc::kFailedPrecondition,
               "--tls-cert " + cert_file + ": the certificate expired on " +
                   TimeText(not_after) + " (it is now " + NowText() +
                   "), and clients refuse an expired certificate, so no client could connect: "
                   "renew it, then start the server again");
  }
  if (X509_cmp_current_time(not_before) > 0) {
    return Err(Errc::kFailedPrecondition,
               "--tls-cert " + cert_file + ": the certificate is not valid before " +
                   TimeText(not_before) + " (it is now " + NowText() +
                   "), and clients refuse it until then: check this machine's clock, or start "
                   "the server once the certificate is valid");
  }
  return Ok();
}

// TLS 1.2 at least, no compression or renegotiation.
Result<std::shared_ptr<ssl::context>> NewContext(ssl::context::method method) {
  auto context = std::make_shared<ssl::context>(method);
  SSL_CTX* native = context->native_handle();
  if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1) {
    return Err(Errc::kInternal, "OpenSSL refused TLS 1.2 as the minimum version");
  }
  SSL_CTX_set_options(native, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  return context;
}

}  // namespace

Result<std::shared_ptr<ssl::context>> MakeServerTlsContext(const TlsServerFiles& files) {
  if (files.cert_file.empty() || files.key_file.empty()) {
    return Err(Errc::kInvalidArgument,
               "TLS needs both --tls-cert and --tls-key (the certificate chain and its key)");
  }
  RECKON_TRY(std::shared_ptr<ssl::context> context, NewContext(ssl::context::tls_server));
  boost::system::error_code ec;
  context->use_certificate_chain_file(files.cert_file, ec);
  if (ec) return FileError("--tls-cert", files.cert_file, "not a PEM certificate chain", ec);
  RECKON_TRY(RequireValidNow(*context, files.cert_file));
  RECKON_TRY(UsePrivateKey(*context, "--tls-key", files.key_file));
  // Needed by OpenSSL to resume TLS 1.2 sessions of a server that verifies client certificates.
  static constexpr unsigned char kSessionContext[] = "reckon";
  SSL_CTX_set_session_id_context(context->native_handle(), kSessionContext,
                                 sizeof kSessionContext - 1);
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    ERR_clear_error();
    return Err(Errc::kInvalidArgument, "--tls-key " + files.key_file +
                                           " is not the key of the certificate in --tls-cert " +
                                           files.cert_file);
  }
  if (!files.client_ca_file.empty()) {
    context->load_verify_file(files.client_ca_file, ec);
    if (ec) return FileError("--client-ca", files.client_ca_file, "not PEM certificates", ec);
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(files.client_ca_file.c_str());
    if (names == nullptr) {
      ERR_clear_error();
      return Err(Errc::kInvalidArgument,
                 "--client-ca " + files.client_ca_file + ": no CA certificate in it");
    }
    SSL_CTX_set_client_CA_list(context->native_handle(), names);
    // A certificate is asked for and, if presented, must verify; whether one is required
    // depends on the role (workers: api/server/authorizer.h), known only after the handshake.
    context->set_verify_mode(ssl::verify_peer);
  } else {
    context->set_verify_mode(ssl::verify_none);
  }
  return context;
}

Result<std::shared_ptr<ssl::context>> MakeClientTlsContext(const TlsClientConfig& config) {
  RECKON_TRY(std::shared_ptr<ssl::context> context, NewContext(ssl::context::tls_client));
  boost::system::error_code ec;
  if (!config.ca_file.empty()) {
    context->load_verify_file(config.ca_file, ec);
    if (ec) return FileError("--ca", config.ca_file, "not PEM CA certificates", ec);
  } else {
    context->set_default_verify_paths(ec);
    if (ec) {
      return Err(Errc::kInvalidArgument,
                 "cannot load the system's CA certificates (" + ec.message() +
                     "); give the server's CA with --ca FILE");
    }
  }
  if (config.cert_file.empty() != config.key_file.empty()) {
    return Err(Errc::kInvalidArgument,
               "a client certificate needs both --cert and --key (the certificate and its key)");
  }
  if (!config.cert_file.empty()) {
    context->use_certificate_chain_file(config.cert_file, ec);
    if (ec) return FileError("--cert", config.cert_file, "not a PEM certificate chain", ec);
    RECKON_TRY(UsePrivateKey(*context, "--key", config.key_file));
    if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
      ERR_clear_error();
      return Err(Errc::kInvalidArgument, "--key " + config.key_file +
                                             " is not the key of the certificate in --cert " +
                                             config.cert_file);
    }
  }
  context->set_verify_mode(ssl::verify_peer);
  return context;
}

std::string CertificateExpiryWarning(ssl::context& context, const std::string& cert_file,
                                     std::chrono::seconds within) {
  X509* cert = SSL_CTX_get0_certificate(context.native_handle());
  if (cert == nullptr) return {};
  int days = 0;
  int seconds = 0;
  const ASN1_TIME* not_after = X509_get0_notAfter(cert);
  if (ASN1_TIME_diff(&days, &seconds, nullptr, not_after) != 1) return {};
  const std::int64_t left = std::int64_t{days} * 86400 + seconds;
  if (left >= within.count()) return {};
  const std::string in = left >= 86400 ? std::to_string(left / 86400) + " day(s)"
                                       : std::to_string(left / 3600) + " hour(s)";
  return "--tls-cert " + cert_file + ": the certificate expires on " + TimeText(not_after) +
         " (in " + in + "); renew it and restart the server before then: clients refuse an "
         "expired certificate";
}

std::string VerifiedPeerCertificate(SSL* ssl) {
  X509* certificate = SSL_get0_peer_certificate(ssl);
  if (certificate == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return "";
  char subject[256] = {};
  X509_NAME_oneline(X509_get_subject_name(certificate), subject, sizeof subject);
  return subject;
}

bool IsCertificateRefusal(const boost::system::error_code& ec) {
  if (!ec || ec.category() != boost::asio::error::get_ssl_category()) return false;
  switch (ERR_GET_REASON(static_cast<unsigned long>(ec.value()))) {
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
      return true;
    default:
      return false;
  }
}

std::string DescribeTlsError(const boost::system::error_code& ec, long verify_result) {
  std::string text = ec.message();
  if (verify_result != X509_V_OK) {
    text += " (";
    text += X509_verify_cert_error_string(verify_result);
    text += ")";
  }
  return text;
}

}  // namespace reckon::api
