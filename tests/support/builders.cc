#include "tests/support/builders.h"

#include <stdexcept>

#include "pkg/api/decode.h"
#include "pkg/plugins/registry.h"
#include "pkg/util/parallel.h"

namespace berth::test {

resource::Quantity quantity(std::string_view text) {
  auto q = resource::Quantity::parse(text);
  if (!q.ok()) {
    throw std::invalid_argument("test builders: quantity literal \"" + std::string(text) +
                                "\" does not parse: " + q.error().message);
  }
  return *q;
}

api::ResourceList resourceList(const Quantities& quantities) {
  api::ResourceList list;
  for (const auto& [name, text] : quantities) list[name] = quantity(text);
  return list;
}

// --- PodWrapper ----------------------------------------------------------------------------------

namespace {

api::NodeAffinity& nodeAffinity(api::Pod& pod) {
  if (!pod.spec.affinity) pod.spec.affinity.emplace();
  if (!pod.spec.affinity->nodeAffinity) pod.spec.affinity->nodeAffinity.emplace();
  return *pod.spec.affinity->nodeAffinity;
}

api::Container containerWith(std::string name, const Quantities& requests) {
  api::Container c;
  c.name = std::move(name);
  c.image = "pause";
  c.resources.requests = resourceList(requests);
  return c;
}

api::ContainerPort port(int32_t hostPort, std::string protocol, std::string ip) {
  api::ContainerPort p;
  p.containerPort = hostPort;
  p.hostPort = hostPort;
  p.protocol = std::move(protocol);
  p.hostIP = std::move(ip);
  return p;
}

}  // namespace

PodWrapper::PodWrapper() {
  pod_.metadata.namespace_ = "default";
  pod_.spec.schedulerName = std::string(config::kDefaultSchedulerName);
  pod_.status.phase = "Pending";
}

PodWrapper& PodWrapper::name(std::string name) {
  pod_.metadata.name = std::move(name);
  return *this;
}

PodWrapper& PodWrapper::ns(std::string ns) {
  pod_.metadata.namespace_ = std::move(ns);
  return *this;
}

PodWrapper& PodWrapper::uid(std::string uid) {
  pod_.metadata.uid = std::move(uid);
  return *this;
}

PodWrapper& PodWrapper::resourceVersion(std::string rv) {
  pod_.metadata.resourceVersion = std::move(rv);
  return *this;
}

PodWrapper& PodWrapper::label(std::string key, std::string value) {
  pod_.metadata.labels[std::move(key)] = std::move(value);
  return *this;
}

PodWrapper& PodWrapper::schedulerName(std::string name) {
  pod_.spec.schedulerName = std::move(name);
  return *this;
}

PodWrapper& PodWrapper::priority(int32_t priority) {
  pod_.spec.priority = priority;
  return *this;
}

PodWrapper& PodWrapper::req(const Quantities& requests) {
  pod_.spec.containers.push_back(
      containerWith("c" + std::to_string(pod_.spec.containers.size()), requests));
  return *this;
}

PodWrapper& PodWrapper::initReq(const Quantities& requests) {
  pod_.spec.initContainers.push_back(
      containerWith("init" + std::to_string(pod_.spec.initContainers.size()), requests));
  return *this;
}

PodWrapper& PodWrapper::sidecarReq(const Quantities& requests) {
  auto c = containerWith("sidecar" + std::to_string(pod_.spec.initContainers.size()), requests);
  c.restartPolicy = "Always";
  pod_.spec.initContainers.push_back(std::move(c));
  return *this;
}

PodWrapper& PodWrapper::overhead(const Quantities& overhead) {
  pod_.spec.overhead = resourceList(overhead);
  return *this;
}

PodWrapper& PodWrapper::nodeSelector(api::StringMap selector) {
  pod_.spec.nodeSelector = std::move(selector);
  return *this;
}

PodWrapper& PodWrapper::toleration(std::string key, std::string op, std::string value,
                                   std::string effect) {
  api::Toleration t;
  t.key = std::move(key);
  t.operator_ = std::move(op);
  t.value = std::move(value);
  t.effect = std::move(effect);
  pod_.spec.tolerations.push_back(std::move(t));
  return *this;
}

api::NodeSelectorTerm& PodWrapper::currentTerm() {
  auto& na = nodeAffinity(pod_);
  if (!na.requiredDuringSchedulingIgnoredDuringExecution) {
    na.requiredDuringSchedulingIgnoredDuringExecution.emplace();
  }
  auto& terms = na.requiredDuringSchedulingIgnoredDuringExecution->nodeSelectorTerms;
  if (terms.empty() || new_term_) terms.emplace_back();
  new_term_ = false;
  return terms.back();
}

PodWrapper& PodWrapper::requiredNodeAffinity(std::string key, api::NodeSelectorOperator op,
                                             std::vector<std::string> values) {
  currentTerm().matchExpressions.push_back({std::move(key), op, std::move(values)});
  return *this;
}

PodWrapper& PodWrapper::requiredNodeAffinityIn(std::string key, std::vector<std::string> values) {
  return requiredNodeAffinity(std::move(key), api::NodeSelectorOperator::In, std::move(values));
}

PodWrapper& PodWrapper::matchFieldsName(std::vector<std::string> names) {
  currentTerm().matchFields.push_back(
      {"metadata.name", api::NodeSelectorOperator::In, std::move(names)});
  return *this;
}

PodWrapper& PodWrapper::orTerm() {
  new_term_ = true;
  return *this;
}

PodWrapper& PodWrapper::requiredTerm(api::NodeSelectorTerm term) {
  auto& na = nodeAffinity(pod_);
  if (!na.requiredDuringSchedulingIgnoredDuringExecution) {
    na.requiredDuringSchedulingIgnoredDuringExecution.emplace();
  }
  na.requiredDuringSchedulingIgnoredDuringExecution->nodeSelectorTerms.push_back(std::move(term));
  new_term_ = false;
  return *this;
}

PodWrapper& PodWrapper::mutate(const std::function<void(api::Pod&)>& fn) {
  fn(pod_);
  return *this;
}

PodWrapper& PodWrapper::requiredNodeAffinityNoTerms() {
  nodeAffinity(pod_).requiredDuringSchedulingIgnoredDuringExecution.emplace();
  return *this;
}

PodWrapper& PodWrapper::preferredNodeAffinity(int32_t weight, std::string key,
                                              api::NodeSelectorOperator op,
                                              std::vector<std::string> values) {
  api::PreferredSchedulingTerm t;
  t.weight = weight;
  t.preference.matchExpressions.push_back({std::move(key), op, std::move(values)});
  nodeAffinity(pod_).preferredDuringSchedulingIgnoredDuringExecution.push_back(std::move(t));
  return *this;
}

PodWrapper& PodWrapper::hostPort(int32_t hostPort, std::string protocol, std::string ip) {
  if (pod_.spec.containers.empty()) req({});
  pod_.spec.containers.back().ports.push_back(port(hostPort, std::move(protocol), std::move(ip)));
  return *this;
}

PodWrapper& PodWrapper::initHostPort(bool sidecar, int32_t hostPort, std::string protocol,
                                     std::string ip) {
  if (sidecar) {
    sidecarReq({});
  } else {
    initReq({});
  }
  pod_.spec.initContainers.back().ports.push_back(
      port(hostPort, std::move(protocol), std::move(ip)));
  return *this;
}

PodWrapper& PodWrapper::node(std::string nodeName) {
  pod_.spec.nodeName = std::move(nodeName);
  return *this;
}

PodWrapper& PodWrapper::nominatedNode(std::string nodeName) {
  pod_.status.nominatedNodeName = std::move(nodeName);
  return *this;
}

PodWrapper& PodWrapper::phase(std::string phase) {
  pod_.status.phase = std::move(phase);
  return *this;
}

PodWrapper& PodWrapper::created(int64_t micros) {
  pod_.metadata.creationTimestamp = api::Timestamp{micros};
  return *this;
}

api::PodPtr PodWrapper::obj() const { return std::make_shared<const api::Pod>(pod_); }

framework::PodInfoPtr PodWrapper::info() const { return framework::makePodInfo(obj()); }

nlohmann::json PodWrapper::json() const { return api::encodePod(pod_); }

// --- NodeWrapper ---------------------------------------------------------------------------------

NodeWrapper& NodeWrapper::name(std::string name) {
  node_.metadata.name = std::move(name);
  return *this;
}

NodeWrapper& NodeWrapper::label(std::string key, std::string value) {
  node_.metadata.labels[std::move(key)] = std::move(value);
  return *this;
}

NodeWrapper& NodeWrapper::taint(std::string key, std::string value, std::string effect) {
  node_.spec.taints.push_back({std::move(key), std::move(value), std::move(effect)});
  return *this;
}

NodeWrapper& NodeWrapper::unschedulable(bool value) {
  node_.spec.unschedulable = value;
  return *this;
}

NodeWrapper& NodeWrapper::allocatable(const Quantities& allocatable) {
  node_.status.allocatable = resourceList(allocatable);
  node_.status.capacity = node_.status.allocatable;
  return *this;
}

api::NodePtr NodeWrapper::obj() const { return std::make_shared<const api::Node>(node_); }

nlohmann::json NodeWrapper::json() const { return api::encodeNode(node_); }

// --- Frameworks ----------------------------------------------------------------------------------

config::PluginRef plugin(std::string_view name, int32_t weight) {
  return config::PluginRef{std::string(name), weight, "test." + std::string(name)};
}

config::Profile profileWith(std::vector<config::PluginRef> multiPoint) {
  config::Profile p;
  p.schedulerName = "test";
  p.field = "profiles[0]";
  p.plugins.multiPoint.enabled.push_back(plugin("PrioritySort"));
  p.plugins.multiPoint.enabled.push_back(plugin("DefaultBinder"));
  for (auto& ref : multiPoint) p.plugins.multiPoint.enabled.push_back(std::move(ref));
  return p;
}

util::Result<framework::runtime::FrameworkPtr> makeFramework(const config::Profile& profile,
                                                             framework::PodBinder* binder) {
  static const framework::runtime::Registry registry = plugins::makeInTreeRegistry();
  framework::Handle handle;
  handle.binder = binder;
  return framework::runtime::Framework::create(registry, profile, handle);
}

framework::runtime::FrameworkPtr mustMakeFramework(const config::Profile& profile,
                                                   framework::PodBinder* binder) {
  auto fw = makeFramework(profile, binder);
  if (!fw.ok()) {
    throw std::invalid_argument("test builders: invalid profile: " + fw.error().message);
  }
  return std::move(*fw);
}

framework::Snapshot makeSnapshot(const std::vector<api::NodePtr>& nodes,
                                 const std::vector<api::PodPtr>& boundPods) {
  std::vector<framework::PodInfoPtr> infos;
  for (const auto& p : boundPods) infos.push_back(framework::makePodInfo(p));
  return framework::Snapshot::build(nodes, infos);
}

framework::Status FakeBinder::bind(const api::Pod& pod, const std::string& node) {
  bound.emplace_back(api::podKey(pod), node);
  if (answer == framework::Code::Success) return framework::Status::success();
  return framework::Status(answer, std::string("fake binder refused"));
}

// --- Harness -------------------------------------------------------------------------------------

Harness::Harness(const config::Profile& profile, const std::vector<api::NodePtr>& nodes,
                 const std::vector<api::PodPtr>& boundPods)
    : fw_(mustMakeFramework(profile)), snapshot_(makeSnapshot(nodes, boundPods)) {}

Harness::FilterRun Harness::filter(const api::PodPtr& pod) const {
  FilterRun run;
  framework::PodInfo info(pod);
  framework::PreFilterResult result;
  std::set<std::string> rejectedBy;
  run.state.setSnapshot(&snapshot_);
  run.preFilter = fw_->runPreFilterPlugins(run.state, info, result, rejectedBy);
  run.preFilterNodes = result.nodeNames;
  for (const auto& n : snapshot_.nodeInfos()) {
    run.filter.push_back(fw_->runFilterPlugins(run.state, info, *n));
  }
  return run;
}

std::vector<int64_t> Harness::ScoreRun::of(std::string_view plugin) const {
  for (size_t i = 0; i < table.plugins.size(); ++i) {
    if (table.plugins[i] == plugin) return table.scores[i];
  }
  return {};
}

Harness::ScoreRun Harness::score(const api::PodPtr& pod) const {
  ScoreRun run;
  framework::PodInfo info(pod);
  framework::CycleState state;
  state.setSnapshot(&snapshot_);
  std::vector<const framework::NodeInfo*> nodes;
  for (const auto& n : snapshot_.nodeInfos()) nodes.push_back(n.get());
  run.status = fw_->runPreScorePlugins(state, info, nodes);
  if (!run.status.isSuccess()) return run;
  util::Parallelizer parallelizer(1);
  run.status = fw_->runScorePlugins(state, info, nodes, parallelizer, run.table);
  return run;
}

}  // namespace berth::test
