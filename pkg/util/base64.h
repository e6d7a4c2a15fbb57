#pragma once
// Base64 in the two alphabets berth meets (RFC 4648): the standard one with '=' padding, as Go's
// encoding/json writes []byte fields (a kubeconfig's certificate-authority-data), and the URL-safe
// one without padding (base64.RawURLEncoding), as kube-apiserver writes list continue tokens.
// Decode errors read as Go's CorruptInputError: "illegal base64 data at input byte N".

#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace berth::util {

// base64.StdEncoding.EncodeToString.
std::string encodeBase64(std::string_view data);
// As encoding/json decodes []byte: CR and LF anywhere are ignored and the padding is required.
Result<std::string> decodeBase64(std::string_view text);

// base64.RawURLEncoding.EncodeToString.
std::string encodeBase64RawUrl(std::string_view data);
// base64.RawURLEncoding.DecodeString, strict: the bits left over after the last whole byte must
// be zero, so every token has exactly one spelling.
Result<std::string> decodeBase64RawUrl(std::string_view text);

}  // namespace berth::util
