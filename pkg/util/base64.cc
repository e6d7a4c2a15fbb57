#include "pkg/util/base64.h"

#include <array>
#include <cstdint>

namespace berth::util {
namespace {

constexpr std::string_view kStdAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kUrlAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr uint8_t kInvalid = 0xff;

using DecodeTable = std::array<uint8_t, 256>;

constexpr DecodeTable makeDecodeTable(std::string_view alphabet) {
  DecodeTable table{};
  for (uint8_t& v : table) {
    v = kInvalid;
  }
  for (size_t i = 0; i < alphabet.size(); ++i) {
    table[static_cast<unsigned char>(alphabet[i])] = static_cast<uint8_t>(i);
  }
  return table;
}

constexpr DecodeTable kStdDecode = makeDecodeTable(kStdAlphabet);
constexpr DecodeTable kUrlDecode = makeDecodeTable(kUrlAlphabet);

std::string encode(std::string_view data, std::string_view alphabet, bool pad) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  uint32_t bits = 0;
  int count = 0;
  for (unsigned char c : data) {
    bits = (bits << 8) | c;
    count += 8;
    while (count >= 6) {
      count -= 6;
      out += alphabet[(bits >> count) & 0x3F];
    }
  }
  if (count > 0) {
    out += alphabet[(bits << (6 - count)) & 0x3F];
  }
  while (pad && out.size() % 4 != 0) {
    out += '=';
  }
  return out;
}

bool isNewline(char c) { return c == '\n' || c == '\r'; }

Error illegalAt(size_t offset) {
  return invalidArgument("illegal base64 data at input byte " + std::to_string(offset));
}

}  // namespace

std::string encodeBase64(std::string_view data) { return encode(data, kStdAlphabet, true); }

std::string encodeBase64RawUrl(std::string_view data) { return encode(data, kUrlAlphabet, false); }

Result<std::string> decodeBase64(std::string_view text) {
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
      const uint8_t v = kStdDecode[static_cast<unsigned char>(c)];
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

Result<std::string> decodeBase64RawUrl(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3 + 2);
  uint32_t bits = 0;
  int count = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const uint8_t v = kUrlDecode[static_cast<unsigned char>(text[i])];
    if (v == kInvalid) {
      return illegalAt(i);
    }
    bits = (bits << 6) | v;
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xFF);
    }
  }
  // A lone trailing character carries no whole byte; leftover bits must be zero.
  if (text.size() % 4 == 1 || (count > 0 && (bits & ((1u << count) - 1)) != 0)) {
    return illegalAt(text.size() - 1);
  }
  return out;
}

}  // namespace berth::util
