#include "reckon/protocol/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace reckon::api {
namespace ssl = boost::asio::ssl;

namespace {

Error FileError(const std::string& flag, const std::string& file, std::string_view what,
                const boost::system::error_code& ec) {
  return Err(Errc::kInvalidArgument, flag + " " + file + ": " + std::string(what) + " (" +
                                         ec.message() + "); give a readable PEM file");
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
  context->use_private_key_file(files.key_file, ssl::context::pem, ec);
  if (ec) return FileError("--tls-key", files.key_file, "not a PEM private key", ec);
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
    context->use_private_key_file(config.key_file, ssl::context::pem, ec);
    if (ec) return FileError("--key", config.key_file, "not a PEM private key", ec);
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
