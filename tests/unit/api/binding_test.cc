#include "pkg/api/binding.h"

#include <gtest/gtest.h>

namespace berth::api {
namespace {

TEST(Binding, EncodesThePodAndItsTargetNode) {
  const Binding binding{.name = "web", .namespace_ = "default", .uid = "u1", .node = "n1"};
  EXPECT_EQ(encodeBinding(binding), nlohmann::json::parse(R"({
    "apiVersion": "v1", "kind": "Binding",
    "metadata": {"name": "web", "namespace": "default", "uid": "u1"},
    "target": {"kind": "Node", "name": "n1"}})"));
}

}  // namespace
}  // namespace berth::api
