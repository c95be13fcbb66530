// GPT-2 byte-to-unicode map (bytes_to_unicode in the original encoder.py) and UTF-8 helpers.
#include "text/byte_level.hpp"

#include <unordered_map>

namespace trex::text {

const std::array<uint32_t, 256>& byte_to_codepoint() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    std::array<bool, 256> printable{};
    for (int b = '!'; b <= '~'; ++b) printable[b] = true;
    for (int b = 0xA1; b <= 0xAC; ++b) printable[b] = true;
    for (int b = 0xAE; b <= 0xFF; ++b) printable[b] = true;
    uint32_t n = 0;
    for (int b = 0; b < 256; ++b) t[b] = printable[b] ? uint32_t(b) : 256 + n++;
    return t;
  }();
  return table;
}

int codepoint_to_byte(uint32_t cp) {
  static const std::array<int16_t, 324> inverse = [] {
    std::array<int16_t, 324> inv;
    inv.fill(-1);
    const auto& t = byte_to_codepoint();
    for (int b = 0; b < 256; ++b) inv[t[b]] = int16_t(b);
    return inv;
  }();
  return cp < inverse.size() ? inverse[cp] : -1;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(char(cp));
  } else if (cp < 0x800) {
    out.push_back(char(0xC0 | (cp >> 6)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(char(0xE0 | (cp >> 12)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (cp >> 18)));
    out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  }
}

std::string bytes_to_token_text(std::string_view bytes) {
  const auto& t = byte_to_codepoint();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) append_utf8(out, t[b]);
  return out;
}

int32_t next_codepoint(std::string_view s, size_t& i) {
  auto u = [&](size_t k) { return uint32_t(static_cast<unsigned char>(s[k])); };
  uint32_t c = u(i);
  if (c < 0x80) {
    ++i;
    return int32_t(c);
  }
  int len = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (c >= 0xF5) len = 0;
  if (len == 0 || i + len > s.size()) {
    ++i;
    return -1;
  }
  uint32_t cp = c & (0xFF >> (len + 1));
  for (int k = 1; k < len; ++k) {
    uint32_t cc = u(i + k);
    if ((cc & 0xC0) != 0x80) {
      ++i;
      return -1;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp < 0xE000))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
    ++i;
    return -1;
  }
  i += len;
  return int32_t(cp);
}

bool token_text_to_bytes(std::string_view token, std::string& out) {
  size_t i = 0;
  while (i < token.size()) {
    int32_t cp = next_codepoint(token, i);
    int b = cp < 0 ? -1 : codepoint_to_byte(uint32_t(cp));
    if (b < 0) return false;
    out.push_back(char(b));
  }
  return true;
}

}  // namespace trex::text
