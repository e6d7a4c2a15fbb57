#include "pkg/client/base64.h"

#include <array>
#include <cstdint>

namespace berth::client {
namespace {

constexpr uint8_t kInvalid = 0xff;

constexpr std::array<uint8_t, 256> makeDecodeTable() {
  std::array<uint8_t, 256> table{};
  for (uint8_t& v : table) {
    v = kInvalid;
  }
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<uint8_t>(i);
  }
  return table;
}

constexpr std::array<uint8_t, 256> kDecode = makeDecodeTable();

bool isNewline(char c) { return c == '\n' || c == '\r'; }

util::Error illegalAt(size_t offset) {
  return util::invalidArgument("illegal base64 data at input byte " + std::to_string(offset));
}

}  // namespace

util::Result<std::string> decodeBase64(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  size_t i = 0;
  while (true) {
    // Gather one quantum of up to four symbols, skipping line breaks.
    std::array<uint8_t, 4> sym{};
    size_t n = 0;
    bool padded = false;
    while (n < 4) {
      if (i == text.size()) {
        if (n == 0) {
          return out;
        }
        // A final quantum must be completed with '=' padding.
        return illegalAt(i - n);
      }
      const char c = text[i++];
      if (isNewline(c)) {
        continue;
      }
      const uint8_t v = kDecode[static_cast<unsigned char>(c)];
      if (v != kInvalid) {
        sym[n++] = v;
        continue;
      }
      if (c != '=' || n < 2) {
        return illegalAt(i - 1);
      }
      // "xx==" needs a second '='; "xxx=" is complete.
      if (n == 2) {
        while (i < text.size() && isNewline(text[i])) {
          ++i;
        }
        if (i == text.size()) {
          return illegalAt(text.size());
        }
        if (text[i] != '=') {
          return illegalAt(i - 1);
        }
        ++i;
      }
      padded = true;
      break;
    }
    const uint32_t bits = (uint32_t{sym[0]} << 18) | (uint32_t{sym[1]} << 12) |
                          (uint32_t{sym[2]} << 6) | uint32_t{sym[3]};
    out += static_cast<char>((bits >> 16) & 0xff);
    if (n > 2) {
      out += static_cast<char>((bits >> 8) & 0xff);
    }
    if (n > 3) {
      out += static_cast<char>(bits & 0xff);
    }
    if (padded) {
      // Only line breaks may follow the padding.
      while (i < text.size() && isNewline(text[i])) {
        ++i;
      }
      if (i < text.size()) {
        return illegalAt(i);
      }
      return out;
    }
  }
}

}  // namespace berth::client
