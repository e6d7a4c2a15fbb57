#pragma once
// Health endpoints as k8s.io/apiserver's healthz package serves them for kube-scheduler, so probes
// and operators' scripts read the same answers: /healthz, /livez and /readyz run their named
// checks; all passing is 200 "ok" ("?verbose" lists each "[+]name ok" then "<endpoint> check
// passed"); any failing is 500 with "[-]name failed: reason withheld" for the failing ones (the
// endpoint is unauthenticated, so reasons are only logged). "/<endpoint>/<name>" runs one check.
// "?exclude=<name>" (repeatable) skips a check, listed as "[+]name excluded: ok"; a name that
// matches no check adds upstream's "warn: some health checks cannot be excluded" line.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/serving/server.h"
#include "pkg/util/result.h"

namespace berth::serving {

struct Check {
  std::string name;  // "ping", "leaderElection", "sched-handler-sync"
  std::function<util::Result<void>()> run;
};

// The answer of `endpoint` ("healthz", "livez", "readyz") for the request target `target`
// (path under /<endpoint>, and query), or nullopt when the target is not this endpoint's.
std::optional<Response> healthResponse(std::string_view endpoint, std::string_view target,
                                       const std::vector<Check>& checks);

// The check that always passes (healthz.PingHealthz).
Check pingCheck();

}  // namespace berth::serving
