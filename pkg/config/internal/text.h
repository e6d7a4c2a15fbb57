#pragma once
// Private to pkg/config: turning configuration text into JSON values, and the small value syntaxes
// the configuration uses (Go durations, Kubernetes qualified names and label values).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace berth::config::internal {

// Ordered, so that the first error reported is the first in the file.
using Json = nlohmann::ordered_json;

// Parses one JSON document (text starting with '{') or one YAML document. YAML plain scalars are
// typed as sigs.k8s.io/yaml types them (2 is a number, "2" a string, yes/true a bool, ~ null). A
// key given twice in one mapping is an error, as in upstream's strict decoding. Messages carry no
// source prefix.
util::Result<Json> parseDocument(std::string_view text);

// Go's time.ParseDuration ("1m30s", "500ms", "-1.5h", "0"), in nanoseconds; nullopt when invalid.
std::optional<int64_t> parseGoDuration(std::string_view text);

// Why `name` is not a Kubernetes qualified name ("example.com/gpu", "cpu"); nullopt when it is.
std::optional<std::string> qualifiedNameProblem(std::string_view name);

// Why `value` is not a valid label value (empty, or up to 63 alphanumerics, '-', '_', '.'); nullopt
// when it is.
std::optional<std::string> labelValueProblem(std::string_view value);

// A short rendering of a value for messages: "3", "\"abc\"", "a list".
std::string describe(const Json& value);

}  // namespace berth::config::internal
