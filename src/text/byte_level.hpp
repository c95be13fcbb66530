// GPT-2's byte-to-unicode map: every byte 0..255 gets a printable code point, so a byte-level BPE
// vocabulary stores byte strings as ordinary text ("Ġ" is the space byte 0x20).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace trex::text {

// Code point that stands for byte b.
const std::array<uint32_t, 256>& byte_to_codepoint();
// Byte a code point stands for, or -1 when it is not in the map.
int codepoint_to_byte(uint32_t cp);

void append_utf8(std::string& out, uint32_t cp);
// Maps raw bytes to their byte-level token text ("a b" -> "aĠb").
std::string bytes_to_token_text(std::string_view bytes);
// Inverse: token text back to raw bytes; false when a character is outside the map.
bool token_text_to_bytes(std::string_view token, std::string& out);

// Decodes one UTF-8 code point at s[i] (advancing i); -1 and one byte consumed when invalid.
int32_t next_codepoint(std::string_view s, size_t& i);

}  // namespace trex::text
