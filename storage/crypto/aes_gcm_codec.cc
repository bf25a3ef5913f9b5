#include "reckon/storage/crypto/aes_gcm_codec.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <climits>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

namespace reckon::storage {
namespace {

constexpr int kNonceBytes = 12;
constexpr int kTagBytes = 16;
constexpr std::size_t kPooledNonces = 64;    // drawn from RAND_bytes at once
constexpr std::size_t kPooledContexts = 8;   // sealing contexts kept for reuse

struct ContextDeleter {
  void operator()(EVP_CIPHER_CTX* ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, ContextDeleter>;

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}
unsigned char* Bytes(std::string& s) { return reinterpret_cast<unsigned char*>(s.data()); }

// AES-256-GCM of `in` into `out` (as long as `in`) with a context already keyed for
// encryption, under `nonce`, `aad` authenticated; writes the tag.
bool Encrypt(EVP_CIPHER_CTX* ctx, const unsigned char* nonce, std::string_view aad,
             std::string_view in, unsigned char* out, unsigned char* tag) {
  int n = 0;
  int tail = 0;
  return EVP_EncryptInit_ex2(ctx, nullptr, nullptr, nonce, nullptr) == 1 &&
         EVP_EncryptUpdate(ctx, nullptr, &n, Bytes(aad), static_cast<int>(aad.size())) == 1 &&
         EVP_EncryptUpdate(ctx, out, &n, Bytes(in), static_cast<int>(in.size())) == 1 &&
         EVP_EncryptFinal_ex(ctx, out + n, &tail) == 1 &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, kTagBytes, tag) == 1;
}

enum class Opened { kOk, kRefused, kFailed };

// The inverse of Encrypt, with a fresh context: kRefused when the tag does not match (`out`
// then holds nothing anyone may use; the caller wipes it).
Opened Decrypt(const EVP_CIPHER* cipher, const unsigned char* key, const unsigned char* nonce,
               std::string_view aad, std::string_view in, const unsigned char* tag,
               unsigned char* out) {
  CipherContext ctx(EVP_CIPHER_CTX_new());
  // OpenSSL takes the expected tag through a non-const pointer; it only reads it.
  unsigned char expected[kTagBytes];
  std::memcpy(expected, tag, kTagBytes);
  int n = 0;
  int tail = 0;
  const bool ready =
      ctx && EVP_DecryptInit_ex2(ctx.get(), cipher, key, nonce, nullptr) == 1 &&
      EVP_DecryptUpdate(ctx.get(), nullptr, &n, Bytes(aad), static_cast<int>(aad.size())) == 1 &&
      EVP_DecryptUpdate(ctx.get(), out, &n, Bytes(in), static_cast<int>(in.size())) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, kTagBytes, expected) == 1;
  if (!ready) return Opened::kFailed;
  return EVP_DecryptFinal_ex(ctx.get(), out + n, &tail) == 1 ? Opened::kOk : Opened::kRefused;
}

Error CryptoFailure(const char* what) {
  return Err(Errc::kInternal, std::string("AES-256-GCM ") + what +
                                  " failed in OpenSSL; the payload was not sealed or opened");
}

}  // namespace

struct AesGcmCodec::Cipher {
  EVP_CIPHER* cipher = nullptr;
  std::mutex mutex;
  std::array<unsigned char, kNonceBytes * kPooledNonces> nonces{};  // mutex
  std::size_t nonces_used = kPooledNonces;                          // mutex
  std::vector<CipherContext> sealing;  // mutex; keyed with the sealing key, for encryption

  ~Cipher() { EVP_CIPHER_free(cipher); }

  // The next random nonce, and a sealing context if one is free. False if the generator failed.
  bool Take(unsigned char* nonce, CipherContext& ctx) {
    std::lock_guard<std::mutex> lock(mutex);
    if (nonces_used == kPooledNonces) {
      if (RAND_bytes(nonces.data(), static_cast<int>(nonces.size())) != 1) return false;
      nonces_used = 0;
    }
    std::memcpy(nonce, nonces.data() + nonces_used * kNonceBytes, kNonceBytes);
    ++nonces_used;
    if (!sealing.empty()) {
      ctx = std::move(sealing.back());
      sealing.pop_back();
    }
    return true;
  }
  void Give(CipherContext ctx) {
    std::lock_guard<std::mutex> lock(mutex);
    if (sealing.size() < kPooledContexts) sealing.push_back(std::move(ctx));
  }
};

Result<std::unique_ptr<AesGcmCodec>> AesGcmCodec::Create(PayloadKeySet keys) {
  if (keys.keys.empty() || keys.sealing >= keys.keys.size()) {
    return Err(Errc::kInvalidArgument, "a payload codec needs at least one key and a sealing key");
  }
  auto cipher = std::make_unique<Cipher>();
  cipher->cipher = EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr);
  if (cipher->cipher == nullptr) {
    return Err(Errc::kInternal, "this OpenSSL offers no AES-256-GCM; payloads cannot be sealed");
  }
  return std::unique_ptr<AesGcmCodec>(new AesGcmCodec(std::move(keys), std::move(cipher)));
}

AesGcmCodec::AesGcmCodec(PayloadKeySet keys, std::unique_ptr<Cipher> cipher)
    : keys_(std::move(keys)), cipher_(std::move(cipher)) {}

AesGcmCodec::~AesGcmCodec() = default;

const std::string& AesGcmCodec::sealing_key_id() const { return keys_.keys[keys_.sealing].id; }

const PayloadKey* AesGcmCodec::Find(std::string_view key_id) const {
  for (const PayloadKey& key : keys_.keys) {
    if (key.id == key_id) return &key;
  }
  return nullptr;
}

std::string AesGcmCodec::KnownIds() const {
  std::string ids;
  for (const PayloadKey& key : keys_.keys) ids += (ids.empty() ? "" : ", ") + key.id;
  return ids;
}

Result<SealedPayload> AesGcmCodec::Seal(std::string_view plaintext,
                                        std::string_view context) const {
  if (plaintext.size() > INT_MAX - kNonceBytes - kTagBytes || context.size() > INT_MAX) {
    return Err(Errc::kInvalidArgument, "a payload of " + std::to_string(plaintext.size()) +
                                           " bytes is too large to seal");
  }
  const PayloadKey& key = keys_.keys[keys_.sealing];
  SealedPayload sealed{key.id, std::string(kNonceBytes + plaintext.size() + kTagBytes, '\0')};
  unsigned char* nonce = Bytes(sealed.box);
  unsigned char* out = nonce + kNonceBytes;
  CipherContext ctx;
  if (!cipher_->Take(nonce, ctx)) return CryptoFailure("nonce generation");
  if (!ctx) {
    ctx.reset(EVP_CIPHER_CTX_new());
    if (!ctx || EVP_EncryptInit_ex2(ctx.get(), cipher_->cipher, key.bytes.data(), nullptr,
                                    nullptr) != 1) {
      return CryptoFailure("key setup");
    }
  }
  if (!Encrypt(ctx.get(), nonce, context, plaintext, out, out + plaintext.size())) {
    return CryptoFailure("encryption");  // the context is dropped, not reused
  }
  cipher_->Give(std::move(ctx));
  return sealed;
}

Result<std::string> AesGcmCodec::Open(std::string_view key_id, std::string_view box,
                                      std::string_view context) const {
  const PayloadKey* key = Find(key_id);
  if (key == nullptr) {
    return Err(Errc::kFailedPrecondition,
               "the payload is sealed with payload key '" + std::string(key_id) +
                   "', which payload key file '" + keys_.source + "' does not hold (it holds " +
                   KnownIds() + "); add the key '" + std::string(key_id) +
                   "' back to the file: without it these payloads cannot be read");
  }
  if (box.size() < kNonceBytes + kTagBytes || box.size() > INT_MAX || context.size() > INT_MAX) {
    return Err(Errc::kCorruption, "a payload sealed with key '" + key->id + "' is " +
                                      std::to_string(box.size()) +
                                      " bytes long, too short to be a sealed box");
  }
  const std::string_view ciphertext =
      box.substr(kNonceBytes, box.size() - kNonceBytes - kTagBytes);
  std::string plaintext(ciphertext.size(), '\0');
  const Opened opened = Decrypt(cipher_->cipher, key->bytes.data(), Bytes(box), context,
                                ciphertext, Bytes(box) + box.size() - kTagBytes,
                                Bytes(plaintext));
  if (opened == Opened::kOk) return plaintext;
  OPENSSL_cleanse(plaintext.data(), plaintext.size());
  if (opened == Opened::kFailed) return CryptoFailure("decryption");
  return Err(Errc::kCorruption,
             "a payload sealed with key '" + key->id + "' does not authenticate: it was "
             "altered or moved from another event, or the key file holds a different key "
             "under the id '" + key->id + "'");
}

Result<std::unique_ptr<PayloadCodec>> OpenPayloadKeyFile(const std::string& path) {
  RECKON_TRY(PayloadKeySet keys, ReadPayloadKeyFile(path));
  RECKON_TRY(std::unique_ptr<AesGcmCodec> codec, AesGcmCodec::Create(std::move(keys)));
  return std::unique_ptr<PayloadCodec>(std::move(codec));
}

}  // namespace reckon::storage
