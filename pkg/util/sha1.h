#pragma once
// SHA-1 (FIPS 180-4), for the keys upstream derives with it: a CSI driver's attach limit resource
// name when the driver's name is too long for one. Not for anything that needs a secure hash.

#include <string>
#include <string_view>

namespace berth::util {

// The digest of `data` in lower-case hex (40 characters), as hex.EncodeToString(sha1.Sum(data)).
std::string sha1Hex(std::string_view data);

}  // namespace berth::util
