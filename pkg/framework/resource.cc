#include "pkg/framework/resource.h"

#include <algorithm>

namespace berth::framework {
namespace {

// Sums wrap as Go's int64 does (defined here, unlike signed overflow): requests saturate at
// int64's limit, a node's total of them may pass it, and removing a pod restores it exactly.
int64_t wrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrappingSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Adds `amount` of `name` into a Resource the way upstream converts a ResourceList: cpu by its
// milli value, memory/storage/pods by value, scalar names by value, other names ignored.
void addNamed(Resource& r, std::string_view name, const resource::Quantity& amount) {
  if (name == kCPU) {
    r.milliCPU = wrappingAdd(r.milliCPU, amount.milliValue());
  } else if (name == kMemory) {
    r.memory = wrappingAdd(r.memory, amount.value());
  } else if (name == kEphemeralStorage) {
    r.ephemeralStorage = wrappingAdd(r.ephemeralStorage, amount.value());
  } else if (name == kPods) {
    r.allowedPodNumber = wrappingAdd(r.allowedPodNumber, amount.value());
  } else if (isScalarResourceName(name)) {
    r.setScalar(name, wrappingAdd(r.scalarValue(name), amount.value()));
  }
}

// Per-resource sums and maxima over ResourceLists keep the exact Quantity arithmetic upstream uses,
// so rounding to integers happens once, at the end.
using Totals = api::ResourceList;

void addTo(Totals& into, const api::ResourceList& list) {
  for (const auto& [name, q] : list) into[name].add(q);
}

void maxInto(Totals& into, const Totals& other) {
  for (const auto& [name, q] : other) {
    auto [it, inserted] = into.try_emplace(name, q);
    if (!inserted && it->second.cmp(q) < 0) it->second = q;
  }
}

api::ResourceList containerRequests(const api::Container& c, bool nonZero) {
  api::ResourceList reqs = c.resources.requests;
  if (nonZero) {
    reqs.try_emplace(std::string(kCPU), resource::Quantity::fromMilli(kDefaultMilliCPURequest));
    reqs.try_emplace(
        std::string(kMemory),
        resource::Quantity::fromValue(kDefaultMemoryRequest, resource::Quantity::Format::BinarySI));
  }
  return reqs;
}

}  // namespace

bool isScalarResourceName(std::string_view name) {
  if (startsWith(name, "hugepages-") || startsWith(name, "attachable-volumes-")) return true;
  // Prefixed native ("kubernetes.io/…") and extended ("example.com/gpu") names both contain a
  // slash; upstream additionally rejects extended names whose "requests."-prefixed form is not a
  // qualified name.
  auto slash = name.find('/');
  if (slash == std::string_view::npos) return false;
  if (name.find("kubernetes.io/") != std::string_view::npos) return true;
  if (startsWith(name, "requests.")) return false;
  auto domain = name.substr(0, slash);
  auto local = name.substr(slash + 1);
  if (domain.empty() || local.empty() || local.size() > 63 ||
      local.find('/') != std::string_view::npos) {
    return false;
  }
  return true;
}

Resource Resource::fromList(const api::ResourceList& list) {
  Resource r;
  for (const auto& [name, q] : list) addNamed(r, name, q);
  return r;
}

int64_t Resource::scalarValue(std::string_view name) const {
  auto it = std::lower_bound(scalar.begin(), scalar.end(), name,
                             [](const auto& e, std::string_view n) { return e.first < n; });
  return it != scalar.end() && it->first == name ? it->second : 0;
}

void Resource::setScalar(std::string_view name, int64_t value) {
  auto it = std::lower_bound(scalar.begin(), scalar.end(), name,
                             [](const auto& e, std::string_view n) { return e.first < n; });
  if (it != scalar.end() && it->first == name) {
    it->second = value;
  } else {
    scalar.emplace(it, std::string(name), value);
  }
}

int64_t Resource::get(std::string_view name) const {
  if (name == kCPU) return milliCPU;
  if (name == kMemory) return memory;
  if (name == kEphemeralStorage) return ephemeralStorage;
  if (name == kPods) return allowedPodNumber;
  return scalarValue(name);
}

void Resource::add(const Resource& o) {
  milliCPU = wrappingAdd(milliCPU, o.milliCPU);
  memory = wrappingAdd(memory, o.memory);
  ephemeralStorage = wrappingAdd(ephemeralStorage, o.ephemeralStorage);
  allowedPodNumber = wrappingAdd(allowedPodNumber, o.allowedPodNumber);
  for (const auto& [name, v] : o.scalar) setScalar(name, wrappingAdd(scalarValue(name), v));
}

void Resource::subtract(const Resource& o) {
  milliCPU = wrappingSub(milliCPU, o.milliCPU);
  memory = wrappingSub(memory, o.memory);
  ephemeralStorage = wrappingSub(ephemeralStorage, o.ephemeralStorage);
  allowedPodNumber = wrappingSub(allowedPodNumber, o.allowedPodNumber);
  for (const auto& [name, v] : o.scalar) setScalar(name, wrappingSub(scalarValue(name), v));
}

bool Resource::isZero() const {
  if (milliCPU != 0 || memory != 0 || ephemeralStorage != 0) return false;
  return std::all_of(scalar.begin(), scalar.end(), [](const auto& e) { return e.second == 0; });
}

Resource computePodRequests(const api::Pod& pod, bool nonZero) {
  Totals reqs;
  for (const auto& c : pod.spec.containers) addTo(reqs, containerRequests(c, nonZero));

  // Sidecars (restartable init containers) run alongside everything after them, so they add to the
  // steady state and to every later init step; a regular init step needs its own requests plus the
  // sidecars started before it. The pod needs the larger of the steady state and the largest step.
  Totals sidecars;
  Totals initMax;
  for (const auto& c : pod.spec.initContainers) {
    auto own = containerRequests(c, nonZero);
    if (c.restartPolicy == "Always") {
      addTo(reqs, own);
      addTo(sidecars, own);
      maxInto(initMax, sidecars);
    } else {
      Totals step = own;
      addTo(step, sidecars);
      maxInto(initMax, step);
    }
  }
  maxInto(reqs, initMax);
  addTo(reqs, pod.spec.overhead);

  Resource r;
  for (const auto& [name, q] : reqs) {
    if (name != kPods) addNamed(r, name, q);
  }
  return r;
}

}  // namespace berth::framework
