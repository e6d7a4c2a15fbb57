#include "pkg/apiserver/continue_token.h"

#include <nlohmann/json.hpp>

#include "pkg/api/json.h"
#include "pkg/apiserver/patch.h"
#include "pkg/util/base64.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

// Go's path.Clean leaves "/" + start unchanged: no empty, "." or ".." segment, no trailing "/".
bool isCleanKey(std::string_view key) {
  if (key == "/") {
    return true;
  }
  size_t pos = 1;
  while (pos <= key.size()) {
    size_t end = key.find('/', pos);
    if (end == std::string_view::npos) {
      end = key.size();
    }
    std::string_view segment = key.substr(pos, end - pos);
    if (segment.empty() || segment == "." || segment == "..") {
      return false;
    }
    pos = end + 1;
  }
  return true;
}

}  // namespace

std::string encodeContinue(int64_t rv, std::string_view start) {
  return util::encodeBase64RawUrl(R"({"v":"meta.k8s.io/v1","rv":)" + std::to_string(rv) +
                                  R"(,"start":)" + dumpJson(json(start)) + "}");
}

util::Result<ContinueToken> decodeContinue(std::string_view text) {
  const std::string invalid = "continue key is not valid";
  auto data = util::decodeBase64RawUrl(text);
  if (!data) {
    return util::invalidArgument(invalid + ": " + data.error().message);
  }
  json token = api::jsonDepth(*data) > api::kMaxJsonDepth ? json(json::value_t::discarded)
                                                          : json::parse(*data, nullptr, false);
  if (token.is_discarded()) {
    return util::invalidArgument(invalid + ": invalid character in continue token JSON");
  }
  if (!token.is_object()) {
    return util::invalidArgument(invalid + ": json: cannot unmarshal " +
                                 std::string(goJsonKind(token)) +
                                 " into Go value of type storage.continueToken");
  }
  auto field = [&](const char* name, bool number) -> util::Result<json> {
    auto it = token.find(name);
    if (it == token.end() || it->is_null()) {
      return number ? json(0) : json("");
    }
    if (number ? !it->is_number_integer() : !it->is_string()) {
      return util::invalidArgument(invalid + ": json: cannot unmarshal " +
                                   std::string(goJsonKind(*it)) +
                                   " into Go struct field continueToken." + name + " of type " +
                                   (number ? "int64" : "string"));
    }
    return *it;
  };
  auto version = field("v", false);
  auto rv = field("rv", true);
  auto start = field("start", false);
  for (const auto* f : {&version, &rv, &start}) {
    if (!f->ok()) {
      return f->error();
    }
  }
  if (*version != "meta.k8s.io/v1") {
    return util::invalidArgument(
        "continue key is not valid: server does not recognize this encoded version " +
        version->get<std::string>());
  }
  ContinueToken out{rv->get<int64_t>(), start->get<std::string>()};
  if (out.rv == 0) {
    return util::invalidArgument(
        "continue key is not valid: incorrect encoded start resourceVersion (version "
        "meta.k8s.io/v1)");
  }
  if (out.start.empty()) {
    return util::invalidArgument(
        "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)");
  }
  std::string key = out.start.starts_with('/') ? out.start : "/" + out.start;
  if (!isCleanKey(key)) {
    return util::invalidArgument(invalid + ": " + out.start);
  }
  out.start = key.substr(1);
  return out;
}

}  // namespace berth::apiserver
