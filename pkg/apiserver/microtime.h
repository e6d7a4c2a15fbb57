#pragma once
// metav1.MicroTime on the wire: RFC 3339 with exactly six fractional digits, the Go layout
// "2006-01-02T15:04:05.000000Z07:00". kube-apiserver decodes such fields with time.Parse and
// encodes them back in UTC, so "…T09:00:00.000000+01:00" is stored as "…T08:00:00.000000Z" and
// anything else ("…T08:00:00Z", three digits, a space for the T) fails to decode with Go's
// *time.ParseError text, which is what clients see in the 400 BadRequest.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "pkg/apiserver/resource_info.h"
#include "pkg/util/result.h"

namespace berth::apiserver {

// The canonical UTC form of a MicroTime value, or an InvalidArgument Error whose message is the
// text of the *time.ParseError Go reports for it (`parsing time "x" as "2006-…": cannot parse …`).
util::Result<std::string> parseMicroTime(std::string_view text);

// Checks every MicroTime field of `object` (a Lease's acquire and renew times, an Event's
// eventTime) and rewrites it in its canonical UTC form, as the apiserver's decode and encode do;
// the error is Go's, for a decode error message.
util::Result<void> normalizeMicroTimes(Resource resource, nlohmann::json& object);

}  // namespace berth::apiserver
