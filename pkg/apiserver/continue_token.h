#pragma once
// List continue tokens as kube-apiserver writes them (apiserver/pkg/storage/continue.go): opaque
// base64url of {"v":"meta.k8s.io/v1","rv":N,"start":KEY}, naming the resourceVersion the first page
// was served at and the key the next page starts from.

#include <cstdint>
#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace berth::apiserver {

struct ContinueToken {
  int64_t rv = 0;     // < 0: continue at the current state (the token an expired list returns)
  std::string start;  // the key to go on from, relative to the list's key prefix
};

// {"v":"meta.k8s.io/v1","rv":N,"start":"..."} in Go's field order, base64url without padding.
std::string encodeContinue(int64_t rv, std::string_view start);
// DecodeContinue; the message is what follows "invalid continue token: ".
util::Result<ContinueToken> decodeContinue(std::string_view text);

inline constexpr std::string_view kContinueExpired =
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list.";

}  // namespace berth::apiserver
