#pragma once
// The daemon's adapters from the scheduler's interfaces onto the API server: ClusterApi over
// client::RestClient (the Binding of a scheduling decision, the PodScheduled=False condition,
// Events, the read-back of a pod), the VolumeWriter of VolumeBinding's PreBind, the pod, node and
// object Feeds over informers, and leader election's LeaseClient.

#include <memory>
#include <optional>
#include <string>

#include "pkg/api/types.h"
#include "pkg/client/rest.h"
#include "pkg/events/recorder.h"
#include "pkg/framework/handle.h"
#include "pkg/informer/store.h"
#include "pkg/leaderelection/lease_client.h"
#include "pkg/scheduler/cluster_api.h"
#include "pkg/scheduler/feeds.h"

namespace berth::cmd {

// Binds by POSTing exactly one v1 Binding per call (the client never retries a POST). A failure
// comes back as an Error status carrying the server's message.
class RestClusterApi final : public scheduler::ClusterApi {
 public:
  explicit RestClusterApi(client::RestClient& client) : client_(client) {}

  // framework::PodBinder
  framework::Status bind(const api::Pod& pod, const std::string& node) override;

  // events::Sink
  Outcome create(events::Api api, const std::string& ns, const nlohmann::json& event) override;
  Outcome patch(events::Api api, const std::string& ns, const std::string& name,
                const nlohmann::json& patch) override;

  // scheduler::ClusterApi
  util::Result<std::optional<api::Pod>> getPod(const std::string& ns,
                                               const std::string& name) override;
  util::Result<void> patchPodStatus(const std::string& ns, const std::string& name,
                                    const nlohmann::json& patch) override;
  util::Result<void> deletePod(const std::string& ns, const std::string& name,
                               const std::string& uid) override;

 private:
  client::RestClient& client_;
};

// VolumeBinding's PreBind writes as UPDATEs (PUT) that keep every field berth does not decode: it
// GETs the object, refuses with a conflict when the server's resourceVersion is not the one given
// (the version the plugin read), replaces only what the plugin sets (a PV's spec.claimRef and
// metadata.annotations, a PVC's metadata.annotations) and PUTs it with that resourceVersion, so
// the server's own conflict check holds against a change in between. Errors carry the server's
// message, or the API server's conflict message.
class RestVolumeWriter final : public framework::VolumeWriter {
 public:
  explicit RestVolumeWriter(client::RestClient& client) : client_(client) {}

  // framework::VolumeWriter
  framework::Status updatePersistentVolume(const api::PersistentVolume& pv) override;
  framework::Status updatePersistentVolumeClaim(const api::PersistentVolumeClaim& pvc) override;

 private:
  client::RestClient& client_;
};

// The v1 Binding kube-scheduler's DefaultBinder sends: the pod's name and uid, target the node.
nlohmann::json bindingFor(const api::Pod& pod, const std::string& node);

// events.k8s.io/v1 when the server serves it, else core/v1 (client-go's EventBroadcasterAdapter
// asks discovery the same question).
events::Api discoverEventsApi(client::RestClient& client);

// Informers on every non-terminal pod and every node, as kube-scheduler's, and on the objects
// plugins read (objectInformers).
// `podStore`, when given, receives the pod informer's store (owned by the returned feeds).
scheduler::Feeds informerFeeds(client::RestClient& client,
                               const informer::Store<api::Pod>** podStore = nullptr);

// Leases through kube-apiserver. A hung call is bounded by the RestClient's requestTimeout and
// retries, so the daemon should give this client a requestTimeout below the renew deadline.
class RestLeaseClient final : public leaderelection::LeaseClient {
 public:
  explicit RestLeaseClient(client::RestClient& rest) : rest_(rest) {}

  // leaderelection::LeaseClient
  leaderelection::LeaseResult get(const std::string& ns, const std::string& name,
                                  std::stop_token stop) override;
  leaderelection::LeaseResult create(const std::string& ns, const nlohmann::json& lease,
                                     std::stop_token stop) override;
  leaderelection::LeaseResult update(const std::string& ns, const std::string& name,
                                     const nlohmann::json& lease, std::stop_token stop) override;

 private:
  client::RestClient& rest_;
};

}  // namespace berth::cmd
