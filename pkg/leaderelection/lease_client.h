#pragma once
// LeaseClient: the three calls leader election makes on a coordination.k8s.io/v1 Lease (client-go's
// resourcelock.LeaseLock transport). The elector is written against this interface, which it
// declares, so its logic is tested with an in-memory lease; the daemon's adapter over the REST
// client lives with the daemon's wiring (cmd/berth/rest_adapters.h).
//
// update() is a PUT of the whole object: the object carries the metadata.resourceVersion it was
// read with, so the server answers 409 Conflict when another candidate wrote in between
// (optimistic concurrency is what makes the election safe).

#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>

#include "pkg/util/result.h"

namespace berth::leaderelection {

// What the elector needs to know of a failed call: whether the Lease does not exist (it then
// creates it), and what to log.
struct LeaseFailure {
  bool notFound = false;
  std::string message;  // "leases.coordination.k8s.io \"berth\" not found (404 NotFound)"
};
using LeaseResult = util::Result<nlohmann::json, LeaseFailure>;

class LeaseClient {
 public:
  virtual ~LeaseClient() = default;

  // The Lease, or a failure with notFound when it does not exist.
  virtual LeaseResult get(const std::string& ns, const std::string& name, std::stop_token stop) = 0;
  // Creates the Lease; returns it as stored (with its resourceVersion).
  virtual LeaseResult create(const std::string& ns, const nlohmann::json& lease,
                             std::stop_token stop) = 0;
  // Replaces the Lease; `lease` carries metadata.resourceVersion. Returns it as stored.
  virtual LeaseResult update(const std::string& ns, const std::string& name,
                             const nlohmann::json& lease, std::stop_token stop) = 0;
};

}  // namespace berth::leaderelection
