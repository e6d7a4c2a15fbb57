#include "cmd/berth/demo_volumes.h"

#include <chrono>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

namespace berth::cmd {
namespace {

using json = nlohmann::json;
using apiserver::Resource;

constexpr const char* kNamespace = "shop";
constexpr const char* kClass = "zonal-ssd";
constexpr const char* kDriver = "pd.csi.storage.gke.io";
constexpr const char* kZoneLabel = "topology.kubernetes.io/zone";
constexpr const char* kSelectedNode = "volume.kubernetes.io/selected-node";
constexpr const char* kBindCompleted = "pv.kubernetes.io/bind-completed";

json claim(const std::string& name) {
  return json{{"apiVersion", "v1"},
              {"kind", "PersistentVolumeClaim"},
              {"metadata", {{"name", name}, {"namespace", kNamespace}}},
              {"spec",
               {{"accessModes", {"ReadWriteOnce"}},
                {"storageClassName", kClass},
                {"resources", {{"requests", {{"storage", "10Gi"}}}}}}}};
}

// A PV of the class in `zone`, bound to the claim `claimed` (as the API server returned it).
json zonalVolume(const std::string& name, const std::string& zone, const json& claimed) {
  return json{
      {"apiVersion", "v1"},
      {"kind", "PersistentVolume"},
      {"metadata", {{"name", name}, {"labels", {{kZoneLabel, zone}}}}},
      {"spec",
       {{"accessModes", {"ReadWriteOnce"}},
        {"capacity", {{"storage", "10Gi"}}},
        {"storageClassName", kClass},
        {"persistentVolumeReclaimPolicy", "Delete"},
        {"csi",
         {{"driver", kDriver}, {"volumeHandle", "projects/demo/zones/" + zone + "/" + name}}},
        {"claimRef",
         {{"kind", "PersistentVolumeClaim"},
          {"namespace", kNamespace},
          {"name", claimed["metadata"]["name"]},
          {"uid", claimed["metadata"]["uid"]}}},
        {"nodeAffinity",
         {{"required",
           {{"nodeSelectorTerms",
             {{{"matchExpressions",
                {{{"key", kZoneLabel}, {"operator", "In"}, {"values", {zone}}}}}}}}}}}}}}};
}

json pod(const std::string& name, const std::string& claimName, const std::string& scheduler) {
  return json{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", kNamespace}, {"labels", {{"app", "db"}}}}},
      {"spec",
       {{"schedulerName", scheduler},
        {"containers",
         {{{"name", "db"},
           {"image", "postgres"},
           {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "256Mi"}}}}},
           {"volumeMounts", {{{"name", "data"}, {"mountPath", "/var/lib/postgresql"}}}}}}},
        {"volumes", {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", claimName}}}}}}}}};
}

bool created(apiserver::Store& store, Resource resource, const json& object) {
  auto r = store.create(resource, object["metadata"].value("namespace", ""), object);
  if (!r.ok()) {
    std::cout << "  creating " << object["metadata"].value("name", "")
              << " failed: " << r.error().status.message << "\n";
  }
  return r.ok();
}

// The claim bound to `pvName` as the PV controller leaves it: spec.volumeName, bind-completed,
// phase Bound.
bool bindClaim(apiserver::Store& store, json claimed, const std::string& pvName) {
  const std::string name = claimed["metadata"]["name"];
  claimed["spec"]["volumeName"] = pvName;
  claimed["metadata"]["annotations"][kBindCompleted] = "yes";
  auto updated = store.update(Resource::PersistentVolumeClaims, kNamespace, name, claimed);
  if (!updated.ok()) return false;
  json status = *updated;
  status["status"]["phase"] = "Bound";
  return store.updateStatus(Resource::PersistentVolumeClaims, kNamespace, name, status).ok();
}

// The provisioner's part for `claimName`: once berth annotated the claim with a node, a PV in
// that node's zone, then the claim bound to it. False when berth chose no node within 30 s.
bool provision(apiserver::Store& store, const std::string& claimName, const std::stop_token& stop) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!stop.stop_requested() && std::chrono::steady_clock::now() < deadline) {
    auto c = store.get(Resource::PersistentVolumeClaims, kNamespace, claimName);
    const std::string node =
        c.ok() ? (*c)["metadata"].value("annotations", json::object()).value(kSelectedNode, "")
               : "";
    if (node.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    auto n = store.get(Resource::Nodes, "", node);
    const std::string zone =
        n.ok() ? (*n)["metadata"].value("labels", json::object()).value(kZoneLabel, "") : "";
    const std::string pvName = "pvc-" + (*c)["metadata"].value("uid", claimName);
    std::cout << "  claim      " << std::left << std::setw(24)
              << std::string(kNamespace) + "/" + claimName << " " << kSelectedNode << "=" << node
              << ": the provisioner creates PersistentVolume " << pvName << " in " << zone << "\n"
              << std::flush;
    return created(store, Resource::PersistentVolumes, zonalVolume(pvName, zone, *c)) &&
           bindClaim(store, *c, pvName);
  }
  return false;
}

}  // namespace

bool createVolumes(apiserver::Store& store) {
  json sc{{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "StorageClass"},
          {"metadata", {{"name", kClass}}},
          {"provisioner", kDriver},
          {"volumeBindingMode", "WaitForFirstConsumer"}};
  json archive = claim("archive");
  archive["spec"]["volumeName"] = "archive-zone-b";
  archive["metadata"]["annotations"][kBindCompleted] = "yes";
  if (!created(store, Resource::StorageClasses, sc) ||
      !created(store, Resource::PersistentVolumeClaims, claim("data-db-0")) ||
      !created(store, Resource::PersistentVolumeClaims, archive)) {
    return false;
  }
  auto claimed = store.get(Resource::PersistentVolumeClaims, kNamespace, "archive");
  return claimed.ok() && created(store, Resource::PersistentVolumes,
                                 zonalVolume("archive-zone-b", "zone-b", *claimed));
}

void showVolumes(apiserver::Store& store, const std::string& schedulerName,
                 const std::function<bool(const std::string& pod)>& waitForBound,
                 const std::stop_token& stop) {
  std::cout << "\nCreating shop/db-0, a StatefulSet-like pod whose claim shop/data-db-0 is of the "
               "WaitForFirstConsumer class zonal-ssd:\nberth picks the node, annotates the claim "
               "with it, and binds the pod only once the provisioner (played by the demo)\nhas "
               "bound the claim to a volume in that node's zone:\n\n";
  if (!created(store, Resource::Pods, pod("db-0", "data-db-0", schedulerName))) return;
  if (!provision(store, "data-db-0", stop)) {
    std::cout << "  (berth chose no node for shop/data-db-0 within 30 s)\n";
  } else if (!waitForBound("shop/db-0")) {
    std::cout << "  (shop/db-0 was not bound within 30 s)\n";
  }
  if (stop.stop_requested()) return;

  std::cout << "\nCreating shop/archive-0, whose claim shop/archive is bound to a PersistentVolume "
               "in zone-b: VolumeBinding\nadmits only the nodes the volume's node affinity "
               "names, so the pod lands in zone-b:\n\n";
  if (!created(store, Resource::Pods, pod("archive-0", "archive", schedulerName))) return;
  if (!waitForBound("shop/archive-0"))
    std::cout << "  (shop/archive-0 was not bound within 30 s)\n";
}

}  // namespace berth::cmd
