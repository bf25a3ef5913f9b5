#include "tests/support/test_certs.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cstdio>
#include <memory>

namespace reckon::testing {
namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, PkeyFree>;
using Cert = std::unique_ptr<X509, X509Free>;

struct Identity {
  Key key;
  Cert cert;
};

Error Failed(const char* step) {
  return Err(Errc::kInternal, std::string("making test certificates: ") + step + " failed");
}

// Adds extension `nid` with `value` (OpenSSL's config syntax), issued by `issuer`.
bool AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
  if (extension == nullptr) return false;
  const bool added = X509_add_ext(cert, extension, -1) == 1;
  X509_EXTENSION_free(extension);
  return added;
}

// A certificate for `common_name`, signed by `issuer` (itself when null: a self-signed CA).
// Valid from `not_before_s` to `not_after_s` seconds from now.
struct Validity {
  long not_before_s = -3600;
  long not_after_s = 7L * 24 * 3600;
};

Result<Identity> Issue(const char* common_name, const Identity* issuer, bool is_ca,
                       const char* subject_alt_name, long serial, Validity validity = {}) {
  Identity made;
  made.key.reset(EVP_EC_gen("P-256"));
  if (!made.key) return Failed("EVP_EC_gen");
  made.cert.reset(X509_new());
  X509* cert = made.cert.get();
  if (cert == nullptr) return Failed("X509_new");
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), validity.not_before_s);
  X509_gmtime_adj(X509_getm_notAfter(cert), validity.not_after_s);
  X509_set_pubkey(cert, made.key.get());
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("reckon tests"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  X509* issuer_cert = issuer != nullptr ? issuer->cert.get() : cert;
  EVP_PKEY* issuer_key = issuer != nullptr ? issuer->key.get() : made.key.get();
  X509_set_issuer_name(cert, X509_get_subject_name(issuer_cert));
  bool ok = true;
  if (is_ca) {
    ok = ok && AddExtension(cert, issuer_cert, NID_basic_constraints, "critical,CA:TRUE");
    ok = ok && AddExtension(cert, issuer_cert, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    ok = ok && AddExtension(cert, issuer_cert, NID_basic_constraints, "critical,CA:FALSE");
    ok = ok && AddExtension(cert, issuer_cert, NID_key_usage, "critical,digitalSignature");
    ok = ok && AddExtension(cert, issuer_cert, NID_ext_key_usage, "serverAuth,clientAuth");
  }
  ok = ok && AddExtension(cert, issuer_cert, NID_subject_key_identifier, "hash");
  if (subject_alt_name != nullptr) {
    ok = ok && AddExtension(cert, issuer_cert, NID_subject_alt_name, subject_alt_name);
  }
  if (!ok) return Failed("adding an extension");
  if (X509_sign(cert, issuer_key, EVP_sha256()) == 0) return Failed("X509_sign");
  return made;
}

Result<void> WriteCert(const std::filesystem::path& path, X509* cert) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return Failed("opening a certificate file");
  const bool ok = PEM_write_X509(file, cert) == 1;
  std::fclose(file);
  if (!ok) return Failed("PEM_write_X509");
  return Ok();
}

Result<void> WriteKey(const std::filesystem::path& path, EVP_PKEY* key) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return Failed("opening a key file");
  ::chmod(path.c_str(), 0600);
  const bool ok = PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(file);
  if (!ok) return Failed("PEM_write_PrivateKey");
  return Ok();
}

}  // namespace

Result<TestCertificates> WriteTestCertificates(const std::filesystem::path& dir) {
  const char* server_names = "IP:127.0.0.1,DNS:localhost";
  RECKON_TRY(Identity ca, Issue("reckon test CA", nullptr, true, nullptr, 1));
  RECKON_TRY(Identity server, Issue("reckon-server", &ca, false, server_names, 2));
  RECKON_TRY(Identity client, Issue("worker-1", &ca, false, nullptr, 3));
  RECKON_TRY(Identity other_ca, Issue("some other CA", nullptr, true, nullptr, 4));
  RECKON_TRY(Identity intruder, Issue("intruder", &other_ca, false, nullptr, 5));
  RECKON_TRY(Identity impostor, Issue("reckon-server", &other_ca, false, server_names, 6));
  constexpr long kDay = 24L * 3600;
  RECKON_TRY(Identity expired, Issue("reckon-server", &ca, false, server_names, 7,
                                     Validity{-30 * kDay, -kDay}));
  RECKON_TRY(Identity future, Issue("reckon-server", &ca, false, server_names, 8,
                                    Validity{kDay, 30 * kDay}));
  RECKON_TRY(Identity expiring, Issue("reckon-server", &ca, false, server_names, 9,
                                      Validity{-3600, 2 * kDay + 3600}));
  RECKON_TRY(Identity expired_client, Issue("worker-expired", &ca, false, nullptr, 10,
                                            Validity{-2L * 24 * 3600, -24L * 3600}));
  TestCertificates files;
  auto file = [&dir](const char* name) { return (dir / name).string(); };
  files.ca = file("ca.pem");
  files.server_cert = file("server.pem");
  files.server_key = file("server.key");
  files.client_cert = file("client.pem");
  files.client_key = file("client.key");
  files.other_ca = file("other-ca.pem");
  files.other_client_cert = file("intruder.pem");
  files.other_client_key = file("intruder.key");
  files.other_server_cert = file("impostor.pem");
  files.other_server_key = file("impostor.key");
  files.expired_server_cert = file("expired.pem");
  files.expired_server_key = file("expired.key");
  files.future_server_cert = file("future.pem");
  files.future_server_key = file("future.key");
  files.expiring_server_cert = file("expiring.pem");
  files.expiring_server_key = file("expiring.key");
  files.expired_client_cert = file("expired-client.pem");
  files.expired_client_key = file("expired-client.key");
  RECKON_TRY(WriteCert(files.ca, ca.cert.get()));
  RECKON_TRY(WriteCert(files.server_cert, server.cert.get()));
  RECKON_TRY(WriteKey(files.server_key, server.key.get()));
  RECKON_TRY(WriteCert(files.client_cert, client.cert.get()));
  RECKON_TRY(WriteKey(files.client_key, client.key.get()));
  RECKON_TRY(WriteCert(files.other_ca, other_ca.cert.get()));
  RECKON_TRY(WriteCert(files.other_client_cert, intruder.cert.get()));
  RECKON_TRY(WriteKey(files.other_client_key, intruder.key.get()));
  RECKON_TRY(WriteCert(files.other_server_cert, impostor.cert.get()));
  RECKON_TRY(WriteKey(files.other_server_key, impostor.key.get()));
  RECKON_TRY(WriteCert(files.expired_server_cert, expired.cert.get()));
  RECKON_TRY(WriteKey(files.expired_server_key, expired.key.get()));
  RECKON_TRY(WriteCert(files.future_server_cert, future.cert.get()));
  RECKON_TRY(WriteKey(files.future_server_key, future.key.get()));
  RECKON_TRY(WriteCert(files.expiring_server_cert, expiring.cert.get()));
  RECKON_TRY(WriteKey(files.expiring_server_key, expiring.key.get()));
  RECKON_TRY(WriteCert(files.expired_client_cert, expired_client.cert.get()));
  RECKON_TRY(WriteKey(files.expired_client_key, expired_client.key.get()));
  return files;
}

}  // namespace reckon::testing
