#pragma once
// Private to pkg/config: turning configuration text into JSON values.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/config/decoder.h"
#include "pkg/util/result.h"

namespace berth::config::internal {

// Parses one JSON document (text starting with '{') or one YAML document. YAML plain scalars are
// typed as sigs.k8s.io/yaml types them (2 is a number, "2" a string, yes/true a bool, ~ null). A
// key given twice in one mapping is an error, as in upstream's strict decoding. Messages carry no
// source prefix.
util::Result<Json> parseDocument(std::string_view text);

}  // namespace berth::config::internal
