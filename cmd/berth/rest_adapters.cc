#include "cmd/berth/rest_adapters.h"

#include <utility>

#include "cmd/berth/object_informers.h"
#include "pkg/api/binding.h"
#include "pkg/api/decode.h"
#include "pkg/api/event.h"
#include "pkg/informer/informer.h"

namespace berth::cmd {

nlohmann::json bindingFor(const api::Pod& pod, const std::string& node) {
  return api::encodeBinding({pod.metadata.name, pod.metadata.namespace_, pod.metadata.uid, node});
}

framework::Status RestClusterApi::bind(const api::Pod& pod, const std::string& node) {
  auto answer = client_.post(client::kPods, pod.metadata.namespace_, pod.metadata.name, "binding",
                             bindingFor(pod, node));
  if (answer.ok()) return framework::Status();
  return framework::Status::error(answer.error().toString());
}

namespace {

events::Sink::Outcome outcomeOf(const client::ApiResult<nlohmann::json>& answer) {
  if (answer.ok()) return events::Sink::Outcome::Ok;
  const client::ApiFailure& failure = answer.error();
  if (failure.isNotFound()) return events::Sink::Outcome::NotFound;
  if (failure.isStatus(409)) return events::Sink::Outcome::AlreadyExists;
  if (failure.isTransient()) return events::Sink::Outcome::Unavailable;
  return events::Sink::Outcome::Rejected;
}

const client::Resource& eventsResource(events::Api api) {
  return api == events::Api::EventsV1 ? client::kEventsV1 : client::kEvents;
}

}  // namespace

events::Sink::Outcome RestClusterApi::create(events::Api api, const std::string& ns,
                                             const nlohmann::json& event) {
  return outcomeOf(client_.create(eventsResource(api), ns, event));
}

events::Sink::Outcome RestClusterApi::patch(events::Api api, const std::string& ns,
                                            const std::string& name, const nlohmann::json& patch) {
  return outcomeOf(
      client_.patch(eventsResource(api), ns, name, client::PatchType::StrategicMerge, patch));
}

util::Result<std::optional<api::Pod>> RestClusterApi::getPod(const std::string& ns,
                                                             const std::string& name) {
  auto answer = client_.get(client::kPods, ns, name);
  if (!answer.ok()) {
    if (answer.error().isNotFound()) return std::optional<api::Pod>();
    return answer.error().toError();
  }
  auto pod = api::decodePod(*answer);
  if (!pod.ok()) return pod.error();
  return std::optional<api::Pod>(std::move(*pod));
}

util::Result<void> RestClusterApi::patchPodStatus(const std::string& ns, const std::string& name,
                                                  const nlohmann::json& patch) {
  auto answer =
      client_.patch(client::kPods, ns, name, client::PatchType::StrategicMerge, patch, "status");
  if (!answer.ok()) return answer.error().toError();
  return {};
}

util::Result<void> RestClusterApi::deletePod(const std::string& ns, const std::string& name,
                                             const std::string& uid) {
  auto answer = client_.remove(client::kPods, ns, name, client::Preconditions{.uid = uid});
  if (!answer.ok()) return answer.error().toError();
  return {};
}

namespace {

// Reads the object back and checks it is still at `resourceVersion`; `edit` then sets the fields
// the writer owns on the server's copy, which is PUT at that version.
template <typename Edit>
framework::Status updateAtVersion(client::RestClient& client, const client::Resource& resource,
                                  const api::ObjectMeta& meta, const Edit& edit) {
  const std::string& ns = resource.namespaced ? meta.namespace_ : std::string();
  auto current = client.get(resource, ns, meta.name);
  if (!current.ok()) return framework::Status::error(current.error().toString());
  const nlohmann::json& currentMeta = current->value("metadata", nlohmann::json::object());
  const std::string serverVersion = currentMeta.value("resourceVersion", "");
  if (!meta.resourceVersion.empty() && serverVersion != meta.resourceVersion) {
    // The API server's words for a stale UPDATE (errors.NewConflict).
    return framework::Status::error(
        "Operation cannot be fulfilled on " + std::string(resource.name) + " \"" + meta.name +
        "\": the object has been modified; please apply your changes to the latest version and "
        "try again");
  }
  nlohmann::json object = std::move(*current);
  nlohmann::json& objectMeta = object["metadata"];
  if (meta.annotations.empty()) {
    objectMeta.erase("annotations");
  } else {
    objectMeta["annotations"] = meta.annotations;
  }
  edit(object);
  auto answer = client.update(resource, ns, meta.name, object);
  if (!answer.ok()) return framework::Status::error(answer.error().toString());
  return framework::Status();
}

}  // namespace

framework::Status RestVolumeWriter::updatePersistentVolume(const api::PersistentVolume& pv) {
  return updateAtVersion(client_, client::kPersistentVolumes, pv.metadata,
                         [&pv](nlohmann::json& object) {
                           nlohmann::json& spec = object["spec"];
                           if (pv.spec.claimRef) {
                             spec["claimRef"] = api::encodeObjectReference(*pv.spec.claimRef);
                           } else {
                             spec.erase("claimRef");
                           }
                         });
}

framework::Status RestVolumeWriter::updatePersistentVolumeClaim(
    const api::PersistentVolumeClaim& pvc) {
  return updateAtVersion(client_, client::kPersistentVolumeClaims, pvc.metadata,
                         [](const nlohmann::json&) {});
}

events::Api discoverEventsApi(client::RestClient& client) {
  // Discovery needs no RBAC rule (system:discovery); only a 404 means the group is not served.
  auto answer = client.getPath("/apis/events.k8s.io/v1");
  if (!answer.ok() && answer.error().isNotFound()) return events::Api::CoreV1;
  return events::Api::EventsV1;
}

namespace {

// A Feed over an informer, which runs the handlers on its own thread.
template <typename T>
class InformerFeed final : public scheduler::Feed<T> {
 public:
  using Ptr = typename scheduler::Feed<T>::Ptr;
  explicit InformerFeed(std::unique_ptr<informer::Informer<T>> informer)
      : informer_(std::move(informer)) {}

  // scheduler::Feed
  void addEventHandlers(scheduler::FeedHandlers<T> handlers) override {
    informer_->addEventHandlers(informer::EventHandlers<T>{
        std::move(handlers.onAdd), std::move(handlers.onUpdate), std::move(handlers.onDelete)});
  }
  void start() override { informer_->start(); }
  void stop() override { informer_->stop(); }
  bool hasSynced() const override { return informer_->hasSynced(); }
  bool waitForSync(std::chrono::steady_clock::duration timeout) const override {
    return informer_->waitForSync(timeout);
  }
  Ptr get(const std::string& key) const override { return informer_->store().get(key); }

 private:
  std::unique_ptr<informer::Informer<T>> informer_;
};

}  // namespace

scheduler::Feeds informerFeeds(client::RestClient& client,
                               const informer::Store<api::Pod>** podStore) {
  informer::ReflectorOptions podOptions;
  podOptions.name = "pods";
  auto pods = std::make_unique<informer::Informer<api::Pod>>(
      informer::makeListerWatcher(client, client::kPods, "", "", api::kNonTerminalPodsSelector),
      api::decodePod, podOptions);
  if (podStore != nullptr) *podStore = &pods->store();
  informer::ReflectorOptions nodeOptions;
  nodeOptions.name = "nodes";
  auto nodes = std::make_unique<informer::Informer<api::Node>>(
      informer::makeListerWatcher(client, client::kNodes), api::decodeNode, nodeOptions);
  scheduler::Feeds feeds;
  feeds.pods = std::make_unique<InformerFeed<api::Pod>>(std::move(pods));
  feeds.nodes = std::make_unique<InformerFeed<api::Node>>(std::move(nodes));
  feeds.objects = objectInformers(client);
  return feeds;
}

namespace {

leaderelection::LeaseResult leaseResult(client::ApiResult<nlohmann::json> answer) {
  if (answer.ok()) return std::move(*answer);
  return leaderelection::LeaseFailure{answer.error().isNotFound(), answer.error().toString()};
}

}  // namespace

leaderelection::LeaseResult RestLeaseClient::get(const std::string& ns, const std::string& name,
                                                 std::stop_token stop) {
  return leaseResult(rest_.get(client::kLeases, ns, name, {}, std::move(stop)));
}

leaderelection::LeaseResult RestLeaseClient::create(const std::string& ns,
                                                    const nlohmann::json& lease,
                                                    std::stop_token stop) {
  return leaseResult(rest_.create(client::kLeases, ns, lease, std::move(stop)));
}

leaderelection::LeaseResult RestLeaseClient::update(const std::string& ns, const std::string& name,
                                                    const nlohmann::json& lease,
                                                    std::stop_token stop) {
  return leaseResult(rest_.update(client::kLeases, ns, name, lease, {}, std::move(stop)));
}

}  // namespace berth::cmd
