#include "tests/support/objects.h"

#include <fstream>
#include <sstream>

#include "tests/support/builders.h"

namespace berth::test {

using json = nlohmann::json;

json nodeJson(const std::string& name, const std::string& cpu, json labels) {
  NodeWrapper node =
      MakeNode().name(name).allocatable({{"cpu", cpu}, {"memory", "32Gi"}, {"pods", "110"}});
  for (const auto& [key, value] : labels.items()) {
    node.label(key, value.get<std::string>());
  }
  return node.label("kubernetes.io/hostname", name).json();
}

json podJson(const std::string& name, const std::string& cpu, const std::string& scheduler) {
  json pod = MakePod().name(name).schedulerName(scheduler).req({}).json();
  // As text: some tests send a quantity that does not parse.
  pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu;
  // No status, as a client creating a pod sends it.
  pod.erase("status");
  return pod;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace berth::test
