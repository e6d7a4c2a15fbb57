#pragma once
// Standard base64 (RFC 4648 alphabet, '=' padding), decoded as Go's encoding/json decodes []byte
// fields such as a kubeconfig's certificate-authority-data: CR and LF anywhere are ignored, the
// padding is required, and an error gives the offset of the first bad input byte.

#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace berth::client {

// "illegal base64 data at input byte N" on malformed input.
util::Result<std::string> decodeBase64(std::string_view text);

}  // namespace berth::client
