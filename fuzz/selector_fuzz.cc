// Selector parsing: label selectors in kube's string syntax ("a=b,c in (x,y),!d", as in
// ?labelSelector=), field selectors ("spec.nodeName=n1", as the embedded API server reads
// ?fieldSelector=), and node selector terms in their JSON form (a pod's required node affinity).
// Invariants: a parsed label selector prints (String()) to text that parses to the same
// selector; the same requirements given as a metav1.LabelSelector select the same label sets;
// the compiled node affinity of the scheduling hot loop agrees with the reference matcher.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "pkg/api/decode.h"
#include "pkg/apiserver/store.h"
#include "pkg/labels/label_set.h"
#include "pkg/labels/node_affinity.h"
#include "pkg/labels/selector.h"

namespace {

using berth::fuzz::check;
using nlohmann::json;
namespace api = berth::api;
namespace apiserver = berth::apiserver;
namespace labels = berth::labels;
using Op = labels::Selector::Op;

// Label sets a selector says something about: no labels, and every key set to its first (then
// its last) value.
std::vector<api::StringMap> labelSetsFor(const std::vector<labels::Selector::Requirement>& reqs) {
  api::StringMap first;
  api::StringMap last;
  for (const auto& req : reqs) {
    first[req.key] = req.values.empty() ? "" : req.values.front();
    last[req.key] = req.values.empty() ? "x" : req.values.back();
  }
  return {api::StringMap{}, first, last};
}

// The requirements as a metav1.LabelSelector, when every operator has a LabelSelector form.
std::optional<api::LabelSelector> asLabelSelector(const labels::Selector& selector) {
  api::LabelSelector out;
  for (const auto& req : selector.requirements()) {
    switch (req.op) {
      case Op::Equals:
      case Op::In:
        out.matchExpressions.push_back({req.key, "In", req.values});
        break;
      case Op::NotEquals:
      case Op::NotIn:
        out.matchExpressions.push_back({req.key, "NotIn", req.values});
        break;
      case Op::Exists:
        out.matchExpressions.push_back({req.key, "Exists", {}});
        break;
      case Op::DoesNotExist:
        out.matchExpressions.push_back({req.key, "DoesNotExist", {}});
        break;
      case Op::Gt:
      case Op::Lt:
        return std::nullopt;
    }
  }
  return out;
}

void fuzzLabelSelector(std::string_view text) {
  const auto parsed = labels::Selector::parse(text);
  if (!parsed.ok()) {
    return;
  }
  const std::string printed = parsed->toString();
  const auto reparsed = labels::Selector::parse(printed);
  check(reparsed.ok(), "a printed selector parses", printed);
  check(reparsed->toString() == printed, "a printed selector prints the same", printed);

  for (const api::StringMap& set : labelSetsFor(parsed->requirements())) {
    check(reparsed->matches(set) == parsed->matches(set), "a printed selector selects the same",
          printed);
  }

  const std::optional<api::LabelSelector> structured = asLabelSelector(*parsed);
  if (!structured) {
    return;
  }
  const auto converted = labels::Selector::fromLabelSelector(*structured);
  check(converted.ok(), "a parsed selector converts from its LabelSelector form",
        converted.ok() ? printed : converted.error().message);
  for (const api::StringMap& set : labelSetsFor(parsed->requirements())) {
    check(converted->matches(set) == parsed->matches(set),
          "the LabelSelector form selects the same", printed);
  }
}

void fuzzFieldSelector(std::string_view text) {
  const json pod = {{"metadata", {{"name", "web"}, {"namespace", "default"}}},
                    {"spec", {{"nodeName", "n1"}, {"schedulerName", "berth"}}},
                    {"status", {{"phase", "Pending"}}}};
  for (const auto resource :
       {apiserver::Resource::Nodes, apiserver::Resource::Pods, apiserver::Resource::Events,
        apiserver::Resource::EventsV1, apiserver::Resource::Leases}) {
    if (const auto selector = apiserver::FieldSelector::parse(resource, text); selector.ok()) {
      static_cast<void>(selector->matches(resource, pod));
    }
  }
}

// A node labelled from the terms' own requirements, so that matches are reachable.
api::Node nodeFor(const api::NodeSelector& selector, bool firstValues) {
  api::Node node;
  node.metadata.name = "n1";
  for (const auto& term : selector.nodeSelectorTerms) {
    for (const auto& req : term.matchExpressions) {
      std::string value = "1";
      if (!req.values.empty()) {
        value = firstValues ? req.values.front() : req.values.back();
      }
      node.metadata.labels[req.key] = value;
    }
    for (const auto& req : term.matchFields) {
      if (req.key == "metadata.name" && !req.values.empty() && firstValues) {
        node.metadata.name = req.values.front();
      }
    }
  }
  return node;
}

void fuzzNodeSelector(std::string_view text) {
  json required = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (required.is_discarded()) {
    return;
  }
  json spec = {{"affinity", {{"nodeAffinity", json::object()}}}};
  if (required.is_object() && required.contains("nodeSelector")) {
    spec["nodeSelector"] = required["nodeSelector"];
  }
  spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] =
      std::move(required);
  const auto pod = api::decodePod(json{{"metadata", {{"name", "p"}}}, {"spec", std::move(spec)}});
  if (!pod.ok() || !pod->spec.affinity || !pod->spec.affinity->nodeAffinity ||
      !pod->spec.affinity->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution) {
    return;
  }
  const api::NodeSelector& selector =
      *pod->spec.affinity->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution;
  const labels::RequiredNodeAffinity compiled(pod->spec.nodeSelector, &selector);
  for (const bool firstValues : {true, false}) {
    const api::Node node = nodeFor(selector, firstValues);
    const bool reference =
        labels::matchesNodeSelector(pod->spec.nodeSelector, node.metadata.labels) &&
        labels::matchesNodeSelectorTerms(selector, node);
    check(compiled.matches(labels::LabelSet(node.metadata.labels), node.metadata.name) == reference,
          "the compiled node affinity agrees with the reference matcher", text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = berth::fuzz::asText(data, size);
  fuzzLabelSelector(text);
  fuzzFieldSelector(text);
  fuzzNodeSelector(text);
  return 0;
}
