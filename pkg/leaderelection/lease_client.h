#pragma once
// LeaseClient: the three calls leader election makes on a coordination.k8s.io/v1 Lease (client-go's
// resourcelock.LeaseLock transport). The elector is written against this interface so its logic is
// tested with an in-memory lease; RestLeaseClient is the production adapter over RestClient.
//
// update() is a PUT of the whole object: the object carries the metadata.resourceVersion it was
// read with, so the server answers 409 Conflict when another candidate wrote in between
// (optimistic concurrency is what makes the election safe).

#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>

#include "pkg/client/failure.h"
#include "pkg/client/rest.h"

namespace berth::leaderelection {

class LeaseClient {
 public:
  virtual ~LeaseClient() = default;

  // The Lease, or a NotFound failure when it does not exist.
  virtual client::ApiResult<nlohmann::json> get(const std::string& ns, const std::string& name,
                                                std::stop_token stop) = 0;
  // Creates the Lease; returns it as stored (with its resourceVersion).
  virtual client::ApiResult<nlohmann::json> create(const std::string& ns,
                                                   const nlohmann::json& lease,
                                                   std::stop_token stop) = 0;
  // Replaces the Lease; `lease` carries metadata.resourceVersion. Returns it as stored.
  virtual client::ApiResult<nlohmann::json> update(const std::string& ns, const std::string& name,
                                                   const nlohmann::json& lease,
                                                   std::stop_token stop) = 0;
};

// Leases through kube-apiserver. A hung call is bounded by the RestClient's requestTimeout and
// retries, so the daemon should give this client a requestTimeout below the renew deadline.
class RestLeaseClient final : public LeaseClient {
 public:
  explicit RestLeaseClient(client::RestClient& rest) : rest_(rest) {}

  // LeaseClient
  client::ApiResult<nlohmann::json> get(const std::string& ns, const std::string& name,
                                        std::stop_token stop) override;
  client::ApiResult<nlohmann::json> create(const std::string& ns, const nlohmann::json& lease,
                                           std::stop_token stop) override;
  client::ApiResult<nlohmann::json> update(const std::string& ns, const std::string& name,
                                           const nlohmann::json& lease,
                                           std::stop_token stop) override;

 private:
  client::RestClient& rest_;
};

}  // namespace berth::leaderelection
