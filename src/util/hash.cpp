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

}  // namespace trex
