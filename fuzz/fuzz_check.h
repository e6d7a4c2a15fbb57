#pragma once
// Helpers shared by the fuzz targets. An invariant the code under test promises is checked on
// every input; a violation prints what broke and aborts, so libFuzzer saves the input as a crash
// just as it does for a sanitizer report.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace berth::fuzz {

inline std::string_view asText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline void check(bool holds, std::string_view invariant, std::string_view detail = {}) {
  if (holds) {
    return;
  }
  std::fprintf(stderr, "fuzz invariant violated: %.*s\n%.*s\n", static_cast<int>(invariant.size()),
               invariant.data(), static_cast<int>(detail.size()), detail.data());
  std::abort();
}

}  // namespace berth::fuzz
