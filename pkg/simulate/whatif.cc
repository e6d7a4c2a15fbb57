#include "pkg/simulate/whatif.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>
#include <set>

namespace berth::simulate {
namespace {

constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";
constexpr std::string_view kMirrorPodAnnotation = "kubernetes.io/config.mirror";

// After every creationTimestamp of the file: what the cluster creates now comes last in the queue
// among pods of equal priority, as a new pod would.
api::Timestamp afterEveryPod(const api::ObjectSet& objects) {
  api::Timestamp latest;
  for (const auto& pod : objects.pods) {
    latest = std::max(latest, pod->metadata.creationTimestamp.value_or(api::Timestamp{}));
  }
  return api::Timestamp{latest.micros + 1'000'000};
}

// The pending copy a controller creates for an evicted or added pod.
api::PodPtr pendingCopy(const api::Pod& pod, std::string name, api::Timestamp created) {
  auto copy = std::make_shared<api::Pod>(pod);
  copy->metadata.name = std::move(name);
  copy->metadata.uid = "simulated-" + copy->metadata.namespace_ + "-" + copy->metadata.name;
  copy->metadata.creationTimestamp = created;
  copy->metadata.deletionTimestamp.reset();
  copy->spec.nodeName.clear();
  copy->status = api::PodStatus{};
  copy->status.phase = api::kPodPending;
  return copy;
}

}  // namespace

util::Result<DrainPlan> applyDrain(const DrainRequest& request, const RestoredDisruptions& restored,
                                   api::ObjectSet& objects) {
  std::set<std::string, std::less<>> drained;
  for (const std::string& name : request.nodes) {
    const bool known = std::any_of(objects.nodes.begin(), objects.nodes.end(),
                                   [&](const api::NodePtr& n) { return n->metadata.name == name; });
    if (!known)
      return util::invalidArgument("--drain: node \"" + name + "\" is not in the cluster");
    drained.insert(name);
  }
  DrainPlan plan;
  for (api::NodePtr& node : objects.nodes) {
    const bool selected = drained.contains(node->metadata.name) ||
                          (request.selector && request.selector->matches(node->metadata.labels));
    if (!selected) continue;
    drained.insert(node->metadata.name);
    plan.nodes.push_back(node->metadata.name);
    auto cordoned = std::make_shared<api::Node>(*node);
    cordoned->spec.unschedulable = true;
    node = std::move(cordoned);
  }
  if (plan.nodes.empty()) {
    return util::invalidArgument("--drain-selector: no node matches it");
  }

  // The budgets' remaining disruptions, spent as the evictions go, in file order.
  struct Budget {
    const api::PodDisruptionBudget* pdb;
    std::string key;
    std::optional<labels::Selector> selector;
    int32_t allowed;
  };
  std::vector<Budget> budgets;
  for (const auto& pdb : objects.podDisruptionBudgets) {
    std::string key = pdb->metadata.namespace_ + "/" + pdb->metadata.name;
    const auto extra = restored.find(key);
    const int32_t allowed = pdb->disruptionsAllowed + (extra != restored.end() ? extra->second : 0);
    Budget b{pdb.get(), std::move(key), std::nullopt, allowed};
    if (pdb->selector) {
      auto s = labels::Selector::fromLabelSelector(*pdb->selector);
      if (!s.ok()) {
        return util::invalidArgument("PodDisruptionBudget " + pdb->metadata.namespace_ + "/" +
                                     pdb->metadata.name + ": spec.selector: " + s.error().message);
      }
      // As the eviction API: a budget with an empty selector covers no pod.
      if (!s->empty()) b.selector = std::move(*s);
    }
    budgets.push_back(std::move(b));
  }

  const api::Timestamp created = afterEveryPod(objects);
  std::vector<api::PodPtr> kept;
  std::vector<api::PodPtr> recreated;
  for (api::PodPtr& pod : objects.pods) {
    const bool onDrained = !pod->spec.nodeName.empty() && drained.contains(pod->spec.nodeName) &&
                           !api::isTerminal(*pod);
    const api::OwnerReference* controller = api::controllerOf(pod->metadata);
    const bool stays = (controller && controller->kind == "DaemonSet") ||
                       pod->metadata.annotations.contains(std::string(kMirrorPodAnnotation));
    if (!onDrained || stays) {
      kept.push_back(std::move(pod));
      continue;
    }
    const std::string key = api::podKey(*pod);
    std::vector<Budget*> covering;
    for (Budget& b : budgets) {
      if (b.pdb->metadata.namespace_ == pod->metadata.namespace_ && b.selector &&
          b.selector->matches(pod->metadata.labels)) {
        covering.push_back(&b);
      }
    }
    // The eviction API refuses a pod under two budgets, and one whose budget allows no more.
    if (covering.size() > 1 || (covering.size() == 1 && covering[0]->allowed <= 0)) {
      DrainPlan::Blocked blocked{key, {}};
      for (const Budget* b : covering) blocked.budgets.push_back(b->pdb->metadata.name);
      plan.blocked.push_back(std::move(blocked));
      kept.push_back(std::move(pod));
      continue;
    }
    if (covering.size() == 1) {
      --covering[0]->allowed;
      if (controller) plan.budgetOf.emplace(key, covering[0]->key);
    }
    if (controller) {
      plan.moved.push_back(key);
      recreated.push_back(pendingCopy(*pod, pod->metadata.name, created));
    } else {
      plan.lost.push_back(key);
    }
  }
  kept.insert(kept.end(), recreated.begin(), recreated.end());
  objects.pods = std::move(kept);
  return plan;
}

util::Result<void> addNodeCopies(const api::Node& node, size_t count, api::ObjectSet& objects) {
  std::set<std::string, std::less<>> names;
  for (const auto& n : objects.nodes) names.insert(n->metadata.name);
  for (size_t i = 1; i <= count; ++i) {
    auto copy = std::make_shared<api::Node>(node);
    copy->metadata.name = node.metadata.name + "-" + std::to_string(i);
    if (names.contains(copy->metadata.name)) {
      return util::invalidArgument("--add-nodes: node \"" + copy->metadata.name +
                                   "\" is already in the cluster");
    }
    copy->metadata.uid = "simulated-node-" + copy->metadata.name;
    copy->metadata.labels[std::string(kHostnameLabel)] = copy->metadata.name;
    objects.nodes.push_back(std::move(copy));
  }
  return {};
}

util::Result<std::vector<std::string>> addPodCopies(const api::Pod& pod, size_t count,
                                                    api::ObjectSet& objects) {
  std::set<std::string, std::less<>> names;
  for (const auto& p : objects.pods) names.insert(api::podKey(*p));
  api::Pod tmpl = pod;
  if (tmpl.metadata.namespace_.empty()) tmpl.metadata.namespace_ = "default";
  const api::Timestamp created = afterEveryPod(objects);
  std::vector<std::string> keys;
  for (size_t i = 1; i <= count; ++i) {
    api::PodPtr copy = pendingCopy(tmpl, tmpl.metadata.name + "-" + std::to_string(i), created);
    std::string key = api::podKey(*copy);
    if (names.contains(key)) {
      return util::invalidArgument("--add-pods: pod \"" + key + "\" is already in the cluster");
    }
    keys.push_back(std::move(key));
    objects.pods.push_back(std::move(copy));
  }
  return keys;
}

util::Result<TemplateArg> parseTemplateArg(std::string_view flag, std::string_view value) {
  TemplateArg arg{std::string(value), std::nullopt};
  const size_t colon = value.rfind(':');
  if (colon != std::string_view::npos) {
    const std::string_view digits = value.substr(colon + 1);
    size_t count = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (ec != std::errc() || end != digits.data() + digits.size() || count == 0) {
      return util::invalidArgument("--" + std::string(flag) + ": COUNT in \"" + std::string(value) +
                                   "\" must be a positive integer");
    }
    arg.path = std::string(value.substr(0, colon));
    arg.count = count;
  }
  if (arg.path.empty()) {
    return util::invalidArgument("--" + std::string(flag) +
                                 ": a file is required, as FILE[:COUNT]");
  }
  return arg;
}

}  // namespace berth::simulate
