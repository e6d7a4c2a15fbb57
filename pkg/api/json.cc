#include "pkg/api/json.h"

#include <string>

namespace berth::api {

size_t jsonDepth(std::string_view text, size_t limit) {
  size_t depth = 0;
  size_t deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        inString = false;
      }
    } else if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      if (++depth > deepest && (deepest = depth) > limit) {
        return deepest;
      }
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

util::Result<nlohmann::json> parseJson(std::string_view text) {
  if (jsonDepth(text) > kMaxJsonDepth) {
    return util::invalidArgument("exceeded max depth of " + std::to_string(kMaxJsonDepth));
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return util::invalidArgument(e.what());
  }
}

}  // namespace berth::api
