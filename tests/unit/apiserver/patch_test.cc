#include "pkg/apiserver/patch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pkg/apiserver/store.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

const std::string kModified =
    "the object has been modified; please apply your changes to the latest version and try again";
const std::string kRejected = "the server rejected our request due to an error in our request";

// A pod with two containers, a volume, a toleration, a finalizer and two conditions.
class PatchTest : public ::testing::Test {
 protected:
  void SetUp() override { resetPod(); }

  // Creates the pod afresh (deleting an earlier one) and records it in original_.
  void resetPod() {
    (void)store_.remove(Resource::Pods, "default", "web");
    json pod = json::parse(R"({
      "metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["f1"]},
      "spec": {
        "containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 80}]},
                       {"name": "b", "image": "x"}],
        "volumes": [{"name": "v", "emptyDir": {}}],
        "tolerations": [{"key": "k1", "operator": "Exists"}]
      }})");
    ASSERT_TRUE(store_.create(Resource::Pods, "default", pod).ok());
    json status = *store_.get(Resource::Pods, "default", "web");
    status["status"]["conditions"] = json::parse(
        R"([{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "False"}])");
    auto updated = store_.updateStatus(Resource::Pods, "default", "web", status);
    ASSERT_TRUE(updated.ok()) << updated.error().status.message;
    original_ = *updated;
  }

  Store store_;
  json original_;
};

TEST_F(PatchTest, AppliesEveryPatchTypeToPodsAndPodStatus) {
  struct Case {
    std::string name;
    PatchType type;
    bool statusOnly;
    std::string patch;
    // JSON pointer -> wanted value; a null value means the field is absent.
    std::vector<std::pair<std::string, json>> want;
  };
  const std::vector<Case> cases = {
      {"json: add a label",
       PatchType::Json,
       false,
       R"([{"op": "add", "path": "/metadata/labels/tier", "value": "db"}])",
       {{"/metadata/labels/tier", "db"}, {"/metadata/labels/app", "web"}}},
      {"json: test, then replace an image",
       PatchType::Json,
       false,
       R"([{"op": "test", "path": "/spec/containers/1/name", "value": "b"},
           {"op": "replace", "path": "/spec/containers/1/image", "value": "y"}])",
       {{"/spec/containers/1/image", "y"}, {"/spec/containers/0/image", "x"}}},
      {"json: remove a toleration",
       PatchType::Json,
       false,
       R"([{"op": "remove", "path": "/spec/tolerations/0"}])",
       {{"/spec/tolerations", json::array()}}},
      {"merge: null deletes a label, others are added",
       PatchType::Merge,
       false,
       R"({"metadata": {"labels": {"app": null, "tier": "db"}}})",
       {{"/metadata/labels/app", nullptr}, {"/metadata/labels/tier", "db"}}},
      {"merge: lists are replaced whole",
       PatchType::Merge,
       false,
       R"({"spec": {"containers": [{"name": "c", "image": "z"}]}})",
       {{"/spec/containers", json::parse(R"([{"name": "c", "image": "z"}])")}}},
      {"strategic: containers merge by name",
       PatchType::StrategicMerge,
       false,
       R"({"spec": {"containers": [{"name": "b", "image": "y"}]}})",
       {{"/spec/containers/0/image", "x"},
        {"/spec/containers/1/image", "y"},
        {"/spec/containers/1/name", "b"},
        {"/spec/containers/2", nullptr}}},
      {"strategic: a new container goes before the server-only ones",
       PatchType::StrategicMerge,
       false,
       R"({"spec": {"containers": [{"name": "c", "image": "z"}]}})",
       {{"/spec/containers/0/name", "c"},
        {"/spec/containers/1/name", "a"},
        {"/spec/containers/2/name", "b"}}},
      {"strategic: container ports merge by containerPort",
       PatchType::StrategicMerge,
       false,
       R"({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 8080}]}]}})",
       {{"/spec/containers/0/ports",
         json::parse(R"([{"containerPort": 8080}, {"containerPort": 80}])")},
        {"/spec/containers/0/image", "x"}}},
      {"strategic: tolerations are replaced",
       PatchType::StrategicMerge,
       false,
       R"({"spec": {"tolerations": [{"key": "k2", "operator": "Exists"}]}})",
       {{"/spec/tolerations", json::parse(R"([{"key": "k2", "operator": "Exists"}])")}}},
      {"strategic: $patch delete removes a container",
       PatchType::StrategicMerge,
       false,
       R"({"spec": {"containers": [{"name": "b", "$patch": "delete"}]}})",
       {{"/spec/containers/0/name", "a"}, {"/spec/containers/1", nullptr}}},
      {"strategic: $patch replace replaces the list",
       PatchType::StrategicMerge,
       false,
       R"({"spec": {"containers": [{"name": "z", "image": "z"}, {"$patch": "replace"}]}})",
       {{"/spec/containers", json::parse(R"([{"name": "z", "image": "z"}])")}}},
      {"strategic: $patch replace on a map drops the other fields",
       PatchType::StrategicMerge,
       false,
       R"({"metadata": {"labels": {"$patch": "replace", "tier": "db"}}})",
       {{"/metadata/labels", json{{"tier", "db"}}}}},
      {"strategic: finalizers merge as a set",
       PatchType::StrategicMerge,
       false,
       R"({"metadata": {"finalizers": ["f2", "f1"]}})",
       {{"/metadata/finalizers", json{"f2", "f1"}}}},
      {"strategic: $deleteFromPrimitiveList",
       PatchType::StrategicMerge,
       false,
       R"({"metadata": {"$deleteFromPrimitiveList/finalizers": ["f1"]}})",
       {{"/metadata/finalizers", json::array()}}},
      {"strategic: $setElementOrder orders the merged list",
       PatchType::StrategicMerge,
       false,
       R"({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                    "containers": [{"name": "a", "image": "y"}]}})",
       {{"/spec/containers/0/name", "b"},
        {"/spec/containers/1/name", "a"},
        {"/spec/containers/1/image", "y"}}},
      {"strategic: $retainKeys clears a volume's other source",
       PatchType::StrategicMerge,
       false,
       R"({"spec": {"volumes": [{"name": "v", "$retainKeys": ["name", "hostPath"],
                                 "hostPath": {"path": "/x"}}]}})",
       {{"/spec/volumes", json::parse(R"([{"name": "v", "hostPath": {"path": "/x"}}])")}}},
      {"strategic: the main resource ignores status",
       PatchType::StrategicMerge,
       false,
       R"({"status": {"phase": "Running"}, "metadata": {"labels": {"x": "y"}}})",
       {{"/status/phase", "Pending"}, {"/metadata/labels/x", "y"}}},
      {"status: conditions merge by type",
       PatchType::StrategicMerge,
       true,
       R"({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})",
       {{"/status/conditions", json::parse(R"([{"type": "PodScheduled", "status": "True"},
                         {"type": "Ready", "status": "True"}])")}}},
      {"status: a new condition goes first",
       PatchType::StrategicMerge,
       true,
       R"({"status": {"conditions": [{"type": "DisruptionTarget", "status": "True"}]}})",
       {{"/status/conditions/0/type", "DisruptionTarget"},
        {"/status/conditions/1/type", "PodScheduled"},
        {"/status/conditions/2/type", "Ready"}}},
      {"status: merge patch replaces the conditions",
       PatchType::Merge,
       true,
       R"({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})",
       {{"/status/conditions", json::parse(R"([{"type": "Ready", "status": "True"}])")}}},
      {"status: spec changes are ignored",
       PatchType::Merge,
       true,
       R"({"spec": {"nodeName": "n1"}, "status": {"phase": "Running"}})",
       {{"/spec/nodeName", nullptr}, {"/status/phase", "Running"}}},
      {"status: json patch",
       PatchType::Json,
       true,
       R"([{"op": "replace", "path": "/status/phase", "value": "Failed"}])",
       {{"/status/phase", "Failed"}, {"/status/conditions/1/type", "Ready"}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    resetPod();
    auto got =
        store_.patch(Resource::Pods, "default", "web", c.type, json::parse(c.patch), c.statusOnly);
    // kube-apiserver's pod update validation refuses most changes of a pod's spec (containers,
    // ports, volumes, removed tolerations): for those the patch is checked as applied.
    const bool refused = !got.ok() && got.error().status.code == 422 &&
                         got.error().status.message.find("pod updates may") != std::string::npos;
    if (refused) {
      got = applyPatch(Resource::Pods, c.type, *store_.get(Resource::Pods, "default", "web"),
                       json::parse(c.patch));
    }
    ASSERT_TRUE(got.ok()) << got.error().status.message;
    if (!refused) {
      EXPECT_EQ(*got, *store_.get(Resource::Pods, "default", "web"));
    }
    EXPECT_EQ((*got)["metadata"]["uid"], original_["metadata"]["uid"]);
    for (const auto& [pointer, want] : c.want) {
      SCOPED_TRACE(pointer);
      const json::json_pointer ptr(pointer);
      if (want.is_null()) {
        EXPECT_FALSE(got->contains(ptr)) << got->dump();
      } else {
        ASSERT_TRUE(got->contains(ptr)) << got->dump();
        EXPECT_EQ(got->at(ptr), want);
      }
    }
  }
}

TEST_F(PatchTest, RejectsBadPatchesAsKubeApiserver) {
  struct Case {
    std::string name;
    PatchType type;
    std::string patch;
    int code;
    std::string reason;
    std::string message;  // "" when checked separately
  };
  const std::string stale = R"({"metadata": {"resourceVersion": "1"}})";
  const std::vector<Case> cases = {
      {"json patch that is not a list", PatchType::Json, R"({"op": "add"})", 400, "BadRequest",
       "json: cannot unmarshal object into Go value of type jsonpatch.Patch"},
      {"json patch operation that is not an object", PatchType::Json, R"(["add"])", 400,
       "BadRequest", "json: cannot unmarshal string into Go value of type jsonpatch.Operation"},
      {"json patch whose test fails", PatchType::Json,
       R"([{"op": "test", "path": "/metadata/labels/app", "value": "db"}])", 422, "Invalid",
       kRejected},
      {"json patch removing a missing field", PatchType::Json,
       R"([{"op": "remove", "path": "/spec/nodeName"}])", 422, "Invalid", kRejected},
      {"json patch with an unknown operation", PatchType::Json,
       R"([{"op": "frobnicate", "path": "/spec"}])", 422, "Invalid", kRejected},
      {"strategic patch that is not an object", PatchType::StrategicMerge, "[1]", 400, "BadRequest",
       "json: cannot unmarshal array into Go value of type map[string]interface {}"},
      {"strategic list element without its merge key", PatchType::StrategicMerge,
       R"({"spec": {"containers": [{"image": "y"}]}})", 500, "",
       "map: map[image:y] does not contain declared merge key: name"},
      {"strategic unknown $patch", PatchType::StrategicMerge,
       R"({"spec": {"containers": [{"name": "a", "$patch": "frob"}]}})", 500, "",
       "unknown patch type: frob in map: map[$patch:frob name:a]"},
      {"strategic $retainKeys that is not a list", PatchType::StrategicMerge,
       R"({"spec": {"$retainKeys": "x"}})", 400, "BadRequest",
       "invalid patch format of retainKeys"},
      {"strategic patch setting a field $retainKeys drops", PatchType::StrategicMerge,
       R"({"spec": {"$retainKeys": ["containers"], "nodeName": "n1"}})", 400, "BadRequest",
       "invalid patch format of retainKeys"},
      {"strategic $deleteFromPrimitiveList that is not a list", PatchType::StrategicMerge,
       R"({"metadata": {"$deleteFromPrimitiveList/finalizers": "f1"}})", 400, "BadRequest",
       "invalid patch format of primitive list"},
      {"strategic $setElementOrder that is not a list", PatchType::StrategicMerge,
       R"({"spec": {"$setElementOrder/containers": {}}})", 400, "BadRequest",
       "invalid patch format of setElementOrder list"},
      {"stale resourceVersion", PatchType::Merge, stale, 409, "Conflict",
       "Operation cannot be fulfilled on pods \"web\": " + kModified},
      {"stale resourceVersion in a json patch", PatchType::Json,
       R"([{"op": "replace", "path": "/metadata/resourceVersion", "value": "1"}])", 409, "Conflict",
       "Operation cannot be fulfilled on pods \"web\": " + kModified},
      {"malformed resourceVersion", PatchType::Merge, R"({"metadata": {"resourceVersion": "x"}})",
       400, "BadRequest", "invalid resource version: \"x\""},
      {"renaming the object", PatchType::Merge, R"({"metadata": {"name": "db"}})", 400,
       "BadRequest", "the name of the object (db) does not match the name on the URL (web)"},
      {"a result that no longer decodes", PatchType::Merge, R"({"spec": {"containers": "web"}})",
       422, "Invalid", ""},
      {"a json patch result that is not an object", PatchType::Json,
       R"([{"op": "replace", "path": "", "value": [1]}])", 422, "Invalid",
       " \"\" is invalid: patch: Invalid value: \"[1]\": json: cannot unmarshal array into Go "
       "value of type v1.Pod"},
  };
  const std::string rv = original_["metadata"]["resourceVersion"];
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = store_.patch(Resource::Pods, "default", "web", c.type, json::parse(c.patch));
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().status.code, c.code);
    EXPECT_EQ(got.error().status.reason, c.reason);
    if (!c.message.empty()) {
      EXPECT_EQ(got.error().status.message, c.message);
    }
    EXPECT_EQ(store_.resourceVersion(), rv) << "a failed patch writes nothing";
  }

  // The decode failure names the field, under the Invalid cause on "patch".
  auto invalid = store_.patch(Resource::Pods, "default", "web", PatchType::StrategicMerge,
                              json::parse(R"({"spec": {"containers": [{"name": "a",
                                              "ports": [{"containerPort": "http"}]}]}})"));
  ASSERT_FALSE(invalid.ok());
  const json status = invalid.error().toStatus();
  EXPECT_EQ(status["code"], 422);
  EXPECT_EQ(status["details"]["causes"][0]["field"], "patch");
  EXPECT_EQ(status["details"]["causes"][0]["reason"], "FieldValueInvalid");
  const std::string message = status["message"];
  EXPECT_TRUE(message.starts_with(" \"\" is invalid: patch: Invalid value: \"map[spec:map["))
      << message;
  EXPECT_NE(message.find("spec.containers[0].ports[0].containerPort"), std::string::npos)
      << message;

  auto missing = store_.patch(Resource::Pods, "default", "db", PatchType::Merge, json::object());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().toStatus()["message"], "pods \"db\" not found");
  EXPECT_EQ(missing.error().status.code, 404);
}

TEST_F(PatchTest, FollowsUpdateConcurrencyNoOpAndWatchRules) {
  auto watch = store_.watch(Resource::Pods, "default",
                            {.resourceVersion = original_["metadata"]["resourceVersion"]});
  ASSERT_TRUE(watch.ok());
  const std::string rv = original_["metadata"]["resourceVersion"];

  // A patch that changes nothing keeps the resourceVersion and sends no event.
  auto same = store_.patch(Resource::Pods, "default", "web", PatchType::Merge,
                           json::parse(R"({"metadata": {"labels": {"app": "web"}}})"));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ((*same)["metadata"]["resourceVersion"], rv);
  EXPECT_TRUE((*watch)->drain().empty());

  // The current resourceVersion is a precondition that holds.
  json guarded = {{"metadata", {{"resourceVersion", rv}, {"labels", {{"tier", "db"}}}}}};
  auto changed = store_.patch(Resource::Pods, "default", "web", PatchType::Merge, guarded);
  ASSERT_TRUE(changed.ok()) << changed.error().status.message;
  EXPECT_NE((*changed)["metadata"]["resourceVersion"], rv);
  auto events = (*watch)->drain();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, WatchEvent::Type::Modified);
  EXPECT_EQ(events[0].object, *changed);

  // The same precondition is now stale.
  auto stale = store_.patch(Resource::Pods, "default", "web", PatchType::Merge, guarded);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().status.code, 409);
}

TEST(Patch, StrategicMergeOnNodes) {
  const json node = json::parse(R"({
    "metadata": {"name": "n1"},
    "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}], "podCIDRs": ["10.0.0.0/24"]},
    "status": {"conditions": [{"type": "Ready", "status": "False"},
                              {"type": "MemoryPressure", "status": "False"}],
               "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]}})");
  struct Case {
    std::string name;
    std::string patch;
    std::string pointer;
    json want;
  };
  const std::vector<Case> cases = {
      {"taints are replaced", R"({"spec": {"taints": [{"key": "b", "effect": "NoExecute"}]}})",
       "/spec/taints", json::parse(R"([{"key": "b", "effect": "NoExecute"}])")},
      {"conditions merge by type", R"({"status": {"conditions": [{"type": "Ready",
        "status": "True"}]}})",
       "/status/conditions", json::parse(R"([{"type": "Ready", "status": "True"},
                       {"type": "MemoryPressure", "status": "False"}])")},
      {"addresses merge by type", R"({"status": {"addresses": [{"type": "Hostname",
        "address": "n1"}]}})",
       "/status/addresses", json::parse(R"([{"type": "Hostname", "address": "n1"},
                       {"type": "InternalIP", "address": "10.0.0.1"}])")},
      {"podCIDRs merge as a set", R"({"spec": {"podCIDRs": ["10.0.0.0/24", "fd00::/64"]}})",
       "/spec/podCIDRs", json{"10.0.0.0/24", "fd00::/64"}},
      {"$patch delete on a map empties it", R"({"status": {"$patch": "delete"}})", "/status",
       json::object()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = applyPatch(Resource::Nodes, PatchType::StrategicMerge, node, json::parse(c.patch));
    ASSERT_TRUE(got.ok()) << got.error().status.message;
    EXPECT_EQ(got->at(json::json_pointer(c.pointer)), c.want);
  }
}

TEST(Patch, ContentTypes) {
  struct Case {
    std::string_view contentType;
    std::optional<PatchType> want;
  };
  const Case cases[] = {
      {"application/json-patch+json", PatchType::Json},
      {"application/merge-patch+json", PatchType::Merge},
      {"application/strategic-merge-patch+json", PatchType::StrategicMerge},
      {"application/merge-patch+json; charset=utf-8", PatchType::Merge},
      {"Application/Strategic-Merge-Patch+JSON", PatchType::StrategicMerge},
      {"application/json", std::nullopt},
      {"application/apply-patch+yaml", std::nullopt},
      {"", std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.contentType);
    EXPECT_EQ(api::patchTypeFromContentType(c.contentType), c.want);
  }
  for (PatchType t : {PatchType::Json, PatchType::Merge, PatchType::StrategicMerge}) {
    EXPECT_EQ(api::patchTypeFromContentType(api::contentType(t)), t);
  }
}

TEST(Patch, GoFormatPrintsLikeFmt) {
  EXPECT_EQ(goFormat(json::parse(R"({"b": [1, "x", null], "a": {"c": true}})")),
            "map[a:map[c:true] b:[1 x <nil>]]");
}

}  // namespace
}  // namespace berth::apiserver
