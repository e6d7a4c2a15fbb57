#pragma once
// Handle: what plugins may reach outside the scheduling core, as interfaces the edge implements.

#include <string>

#include "pkg/api/types.h"
#include "pkg/framework/cluster_objects.h"
#include "pkg/framework/nominator.h"
#include "pkg/framework/status.h"
#include "pkg/util/clock.h"
#include "pkg/util/random.h"

namespace berth::framework {

// Binds a pod to a node (the API client POSTs a Binding; the simulator records the placement).
class PodBinder {
 public:
  virtual ~PodBinder() = default;
  virtual Status bind(const api::Pod& pod, const std::string& node) = 0;
};

// The API writes VolumeBinding's PreBind makes: upstream's UPDATE of a PersistentVolume (its
// claimRef and annotations) and of a PersistentVolumeClaim (its annotations), conditional on the
// object's metadata.resourceVersion as an UPDATE is (a conflict when the server's differs). Fields
// berth does not decode are kept as the server has them. The daemon's API client implements it.
class VolumeWriter {
 public:
  virtual ~VolumeWriter() = default;
  virtual Status updatePersistentVolume(const api::PersistentVolume& pv) = 0;
  virtual Status updatePersistentVolumeClaim(const api::PersistentVolumeClaim& pvc) = 0;
};

class CycleState;
struct PodInfo;
class NodeInfo;

// What a plugin may run of the profile it belongs to: preemption's dry runs evaluate a node with
// some pods removed, through every PreFilter extension and Filter of the profile (upstream's
// framework.Handle does the same). The runtime's Framework implements it.
class PluginRunner {
 public:
  virtual ~PluginRunner() = default;
  virtual Status runPreFilterExtensionAddPod(CycleState& state, const PodInfo& podToSchedule,
                                             const PodInfo& podToAdd,
                                             const NodeInfo& node) const = 0;
  virtual Status runPreFilterExtensionRemovePod(CycleState& state, const PodInfo& podToSchedule,
                                                const PodInfo& podToRemove,
                                                const NodeInfo& node) const = 0;
  virtual Status runFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                                   const NodeInfo& node) const = 0;
};

struct Handle {
  PodBinder* binder = nullptr;  // not owned; null where nothing is ever bound
  // Not owned; null where there are none (plugins then see no namespaces, services or
  // controllers).
  const ClusterObjects* objects = nullptr;
  // Not owned; null where no pod is ever nominated (Filter then sees none).
  const PodNominator* nominator = nullptr;
  // The framework the plugin is built into; set by Framework::create (callers leave it null).
  const PluginRunner* runner = nullptr;
  // Not owned; the chance a plugin draws (preemption's first candidate node). Null:
  // util::defaultRandom(); the simulator and tests fix it so that their runs repeat.
  util::Random* random = nullptr;
  // Not owned; null where volumes are never bound (the simulator): VolumeBinding then assumes its
  // claims without writing them.
  VolumeWriter* volumes = nullptr;
  // Not owned; what waits in PreBind (VolumeBinding's polls) measure and sleep on. Null: the real
  // clock.
  util::Clock* clock = nullptr;
};

}  // namespace berth::framework
