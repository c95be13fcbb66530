// Hashes from OpenSSL's libcrypto (never hand-written): MD5 and SHA-256 as lowercase hex.
#pragma once
#include <string>
#include <string_view>

namespace trex {

std::string md5_hex(std::string_view data);
std::string sha256_hex(std::string_view data);

}  // namespace trex
