#pragma once
// Parsing JSON from the network. nlohmann's parser is iterative, but copying, comparing or dumping
// a document recurses once per level, so a deep document from a peer would overflow the stack
// wherever it goes next. Go's decoder refuses nesting beyond 10,000 levels; so does this one.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

#include "pkg/util/result.h"

namespace berth::api {

inline constexpr size_t kMaxJsonDepth = 10000;

// The deepest nesting of arrays and objects in text (brackets inside strings do not count), up to
// limit + 1: the scan stops there.
size_t jsonDepth(std::string_view text, size_t limit = kMaxJsonDepth);

// text as a document: InvalidArgument "exceeded max depth of 10000" for deeper nesting, or
// nlohmann's parse error.
util::Result<nlohmann::json> parseJson(std::string_view text);

}  // namespace berth::api
