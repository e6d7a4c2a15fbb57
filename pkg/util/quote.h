#pragma once
// quoteGo: a string as Go's %q (strconv.Quote) prints it, for error messages that must read as
// upstream's. Valid UTF-8 is kept as is; invalid bytes and control characters are escaped.

#include <string>
#include <string_view>

namespace berth::util {

// "a\"b" -> "\"a\\\"b\""; "\n" -> "\"\\n\""; "\xff" -> "\"\\xff\"".
std::string quoteGo(std::string_view text);

}  // namespace berth::util
