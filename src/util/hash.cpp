// md5_hex / sha256_hex through libcrypto's one-shot EVP_Digest.
#include "util/hash.hpp"

#include <openssl/evp.h>

#include "util/error.hpp"

namespace trex {

static std::string digest_hex(const EVP_MD* md, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out, &len, md, nullptr) != 1) throw Error("EVP_Digest failed");
  static const char* hex = "0123456789abcdef";
  std::string s(2 * len, '0');
  for (unsigned i = 0; i < len; ++i) {
    s[2 * i] = hex[out[i] >> 4];
    s[2 * i + 1] = hex[out[i] & 15];
  }
  return s;
}

std::string md5_hex(std::string_view data) { return digest_hex(EVP_md5(), data); }
std::string sha256_hex(std::string_view data) { return digest_hex(EVP_sha256(), data); }

Md5Hasher::Md5Hasher() {
  EVP_MD* md = EVP_MD_fetch(nullptr, "MD5", nullptr);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (md == nullptr || ctx == nullptr) {
    EVP_MD_free(md);
    EVP_MD_CTX_free(ctx);
    throw Error("libcrypto: MD5 is not available");
  }
  md_ = md;
  ctx_ = ctx;
}

Md5Hasher::~Md5Hasher() {
  EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_));
  EVP_MD_free(static_cast<EVP_MD*>(md_));
}

void Md5Hasher::hex(std::string_view data, char out[32]) {
  auto* ctx = static_cast<EVP_MD_CTX*>(ctx_);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestInit_ex2(ctx, static_cast<EVP_MD*>(md_), nullptr) != 1 ||
      EVP_DigestUpdate(ctx, data.data(), data.size()) != 1 || EVP_DigestFinal_ex(ctx, digest, &len) != 1 ||
      len != 16)
    throw Error("libcrypto: MD5 digest failed");
  static const char* hexdigits = "0123456789abcdef";
  for (unsigned i = 0; i < 16; ++i) {
    out[2 * i] = hexdigits[digest[i] >> 4];
    out[2 * i + 1] = hexdigits[digest[i] & 15];
  }
}

std::string Md5Hasher::hex(std::string_view data) {
  std::string s(32, '0');
  hex(data, s.data());
  return s;
}

}  // namespace trex
