#include "pkg/leaderelection/lease_client.h"

#include <utility>

#include "pkg/client/request.h"

namespace berth::leaderelection {

client::ApiResult<nlohmann::json> RestLeaseClient::get(const std::string& ns,
                                                       const std::string& name,
                                                       std::stop_token stop) {
  return rest_.get(client::kLeases, ns, name, {}, std::move(stop));
}

client::ApiResult<nlohmann::json> RestLeaseClient::create(const std::string& ns,
                                                          const nlohmann::json& lease,
                                                          std::stop_token stop) {
  return rest_.create(client::kLeases, ns, lease, std::move(stop));
}

client::ApiResult<nlohmann::json> RestLeaseClient::update(const std::string& ns,
                                                          const std::string& name,
                                                          const nlohmann::json& lease,
                                                          std::stop_token stop) {
  return rest_.update(client::kLeases, ns, name, lease, {}, std::move(stop));
}

}  // namespace berth::leaderelection
