#pragma once
// The z-pages kube-scheduler serves next to /metrics, as k8s.io/component-base shapes them:
//   /configz: every registered component configuration as one JSON object, kube-scheduler's under
//     "componentconfig" (configz.write), application/json;
//   /flagz and /statusz: text/plain for people, not scrapers: a header naming the component and
//     a warning, then "name<delim>value" lines whose delimiter is picked at random once per
//     process (upstream randomizes it so nobody parses the page). Both answer 406 unless the
//     Accept header takes text/plain (httputil.AcceptableMediaType).

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/serving/server.h"

namespace berth::serving {

// httputil.AcceptableMediaType: some entry of `accept` is text/plain, text/* or */* with no
// parameter but charset=utf-8 (q does not count). An empty header accepts nothing, as upstream.
bool acceptsPlainText(std::string_view accept);

// The 406 answer of a z-page to a client that does not take text/plain.
Response notAcceptable();

// One of upstream's delimiters (":", ": ", "=", " "), chosen at random on the first call.
std::string_view zpageDelimiter();

// `{"<name>": <config>}` for one registered configuration; `configJson` is serialized JSON.
Response configzResponse(std::string_view name, std::string_view configJson);

// /flagz: the flags sorted by name with their values.
Response flagzResponse(std::string_view component, const std::map<std::string, std::string>& flags,
                       std::string_view delimiter);

struct StatuszInfo {
  std::chrono::system_clock::time_point started;
  std::chrono::system_clock::time_point now;
  std::string compiler;  // in place of upstream's "Go version"
  std::string binaryVersion;
  std::vector<std::string> paths;  // the paths this port serves
};

// /statusz: start time (Go's time.UnixDate, UTC), uptime, compiler and binary version, paths.
Response statuszResponse(std::string_view component, const StatuszInfo& info,
                         std::string_view delimiter);

}  // namespace berth::serving
