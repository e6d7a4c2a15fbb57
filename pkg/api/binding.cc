#include "pkg/api/binding.h"

namespace berth::api {

nlohmann::json encodeBinding(const Binding& binding) {
  return {{"apiVersion", "v1"},
          {"kind", "Binding"},
          {"metadata",
           {{"name", binding.name}, {"namespace", binding.namespace_}, {"uid", binding.uid}}},
          {"target", {{"kind", "Node"}, {"name", binding.node}}}};
}

}  // namespace berth::api
