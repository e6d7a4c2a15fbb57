#pragma once
// FieldGate: berth never places a pod as if a constraint were absent. Each row names a pod field
// that restricts where the pod may run and the upstream plugin that enforces it; a row is active
// while the registry lacks that plugin (or the plugin lacks the feature the field needs), so rows
// switch off by themselves as plugins land. A pod that uses an active row's field is refused in
// PreFilter (UnschedulableAndUnresolvable), naming the field.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/status.h"

namespace berth::framework::runtime {

class Registry;

// One kind of field that berth may refuse.
struct GatedField {
  std::string_view field;    // stable, for the berth_unsupported_pods label and the README
  std::string_view plugin;   // the upstream plugin that enforces it
  std::string_view feature;  // a feature of `plugin` the field needs ("" for none)
};

// The field of one pod that berth refuses: its row and its exact path in the pod.
struct Refusal {
  const GatedField* row = nullptr;
  std::string path;  // e.g. spec.volumes[0].persistentVolumeClaim
};

class FieldGate {
 public:
  FieldGate() = default;  // refuses nothing
  // The rows `registry` does not enforce.
  static FieldGate fromRegistry(const Registry& registry);
  // Every row, active or not, in the order pods are checked.
  static const std::vector<GatedField>& allRows();

  bool empty() const { return active_.empty(); }
  const std::vector<const GatedField*>& activeRows() const { return active_; }
  // The first field of the pod, in spec order, that an active row names. One pass over the
  // fields that can restrict placement; nothing to do for a pod that has none.
  std::optional<Refusal> check(const api::Pod& pod) const;
  // "berth does not implement <path> (<plugin>)", UnschedulableAndUnresolvable, from `plugin`.
  static Status status(const Refusal& refusal);

 private:
  std::vector<const GatedField*> active_;
};

}  // namespace berth::framework::runtime
