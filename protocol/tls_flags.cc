#include "reckon/protocol/tls_flags.h"

#include <cstdlib>

namespace reckon::api {

void AddTlsClientFlags(CLI::App& app, TlsClientConfig& config) {
  app.add_option("--ca", config.ca_file,
                 "Trust the CA certificates in this PEM file for the server's certificate "
                 "(default $RECKON_CA); turns TLS on");
  app.add_flag("--tls", config.enabled, "Use TLS, trusting the system's CA store");
  app.add_option("--cert", config.cert_file,
                 "Client certificate (PEM), for a server started with --client-ca");
  app.add_option("--key", config.key_file, "The client certificate's private key (PEM)");
  app.add_option("--server-name", config.server_name,
                 "Name the server's certificate must carry (default: the host in the address)");
}

namespace {

void FromEnvironment(std::string& value, const char* name) {
  if (!value.empty()) return;
  if (const char* set = std::getenv(name); set != nullptr && *set != '\0') value = set;
}

}  // namespace

void ApplyTlsEnvironment(TlsClientConfig& config) {
  FromEnvironment(config.ca_file, "RECKON_CA");
  if (config.cert_file.empty() && config.key_file.empty()) {
    FromEnvironment(config.cert_file, "RECKON_CERT");
    FromEnvironment(config.key_file, "RECKON_KEY");
  }
}

}  // namespace reckon::api
