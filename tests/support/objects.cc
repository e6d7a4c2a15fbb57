#include "tests/support/objects.h"

#include <fstream>
#include <sstream>

namespace berth::test {

using json = nlohmann::json;

json nodeJson(const std::string& name, const std::string& cpu, json labels) {
  labels["kubernetes.io/hostname"] = name;
  const json resources = {{"cpu", cpu}, {"memory", "32Gi"}, {"pods", "110"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", json::object()},
          {"status", {{"allocatable", resources}, {"capacity", resources}}}};
}

json podJson(const std::string& name, const std::string& cpu, const std::string& scheduler) {
  const json container = {
      {"name", "app"}, {"image", "nginx"}, {"resources", {{"requests", {{"cpu", cpu}}}}}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", {{"schedulerName", scheduler}, {"containers", json::array({container})}}}};
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace berth::test
