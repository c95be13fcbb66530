// Hashes from OpenSSL's libcrypto (never hand-written): MD5 and SHA-256 as lowercase hex.
#pragma once
#include <string>
#include <string_view>

namespace trex {

std::string md5_hex(std::string_view data);
std::string sha256_hex(std::string_view data);

// MD5 for hot loops (e.g. the ORGEval WL refinement): the implementation is fetched once and one
// EVP_MD_CTX is reused, which avoids the per-call fetch and allocation of md5_hex. Same digests.
class Md5Hasher {
 public:
  Md5Hasher();
  ~Md5Hasher();
  Md5Hasher(const Md5Hasher&) = delete;
  Md5Hasher& operator=(const Md5Hasher&) = delete;
  void hex(std::string_view data, char out[32]);  // 32 lowercase hex digits, not NUL-terminated
  std::string hex(std::string_view data);

 private:
  void* md_ = nullptr;   // EVP_MD*
  void* ctx_ = nullptr;  // EVP_MD_CTX*
};

}  // namespace trex
