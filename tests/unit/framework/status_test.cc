// Status (codes, reasons, message joining) and CycleState (keys, skips, clone).

#include "pkg/framework/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "pkg/framework/cycle_state.h"

namespace berth::framework {
namespace {

TEST(Status, DefaultIsSuccessWithoutReasons) {
  Status s;
  EXPECT_TRUE(s.isSuccess());
  EXPECT_FALSE(s.isRejected());
  EXPECT_FALSE(s.isSkip());
  EXPECT_EQ(s.code(), Code::Success);
  EXPECT_TRUE(s.reasons().empty());
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.plugin(), "");
}

TEST(Status, ClassifiesCodes) {
  struct Case {
    Code code;
    bool success, rejected, skip;
  };
  const Case cases[] = {
      {Code::Success, true, false, false},
      {Code::Error, false, false, false},
      {Code::Unschedulable, false, true, false},
      {Code::UnschedulableAndUnresolvable, false, true, false},
      {Code::Skip, false, false, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(codeName(c.code)));
    Status s(c.code, "reason");
    EXPECT_EQ(s.isSuccess(), c.success);
    EXPECT_EQ(s.isRejected(), c.rejected);
    EXPECT_EQ(s.isSkip(), c.skip);
  }
  EXPECT_EQ(codeName(Code::UnschedulableAndUnresolvable), "UnschedulableAndUnresolvable");
  EXPECT_EQ(codeName(Code::Unschedulable), "Unschedulable");
  EXPECT_TRUE(Status::skip().isSkip());
  EXPECT_TRUE(Status::skip().reasons().empty());
  EXPECT_EQ(Status::error("boom").code(), Code::Error);
  EXPECT_EQ(Status::error("boom").message(), "boom");
}

TEST(Status, JoinsReasonsWithCommaSpaceInOrder) {
  // Upstream's Status.Message(): strings.Join(reasons, ", ").
  Status s(Code::Unschedulable, "Insufficient cpu");  // static reason first
  s.addReason(std::string_view("Insufficient memory"));
  s.addReason(std::string("Insufficient example.com/gpu"));
  EXPECT_EQ(s.message(), "Insufficient cpu, Insufficient memory, Insufficient example.com/gpu");
  EXPECT_EQ(s.reasons(), (std::vector<std::string>{"Insufficient cpu", "Insufficient memory",
                                                   "Insufficient example.com/gpu"}));
}

TEST(Status, StaticAndDynamicReasonsKeepInsertionOrder) {
  struct Case {
    const char* name;
    Status status;
    std::vector<std::string> want;
  };
  Status dynamicFirst(Code::Unschedulable, std::string("dynamic"));
  dynamicFirst.addReason(std::string_view("static"));
  Status staticAdded(Code::Unschedulable, std::string_view());
  staticAdded.addReason(std::string_view("first"));
  staticAdded.addReason(std::string_view("second"));
  Status fromVector(Code::UnschedulableAndUnresolvable, std::vector<std::string>{"a", "b"});
  const Case cases[] = {
      {"dynamic then static", dynamicFirst, {"dynamic", "static"}},
      {"static into an empty status, then another", staticAdded, {"first", "second"}},
      {"vector of reasons", fromVector, {"a", "b"}},
      {"an empty dynamic reason is a reason", Status(Code::Unschedulable, std::string()), {""}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.status.reasons(), c.want);
    std::vector<std::string> seen;
    c.status.forEachReason([&](std::string_view r) { seen.emplace_back(r); });
    EXPECT_EQ(seen, c.want);
  }
}

TEST(Status, StaticReasonDoesNotCopyTheLiteral) {
  static constexpr char kReason[] = "node(s) were unschedulable";
  Status s(Code::UnschedulableAndUnresolvable, kReason);
  const char* data = nullptr;
  s.forEachReason([&](std::string_view r) { data = r.data(); });
  EXPECT_EQ(data, kReason);
}

TEST(Status, RecordsPlugin) {
  Status s(Code::Unschedulable, "x");
  s.setPlugin("NodePorts");
  EXPECT_EQ(s.plugin(), "NodePorts");
  Status t = Status(Code::Error, "y").withPlugin("NodeAffinity");
  EXPECT_EQ(t.plugin(), "NodeAffinity");
  EXPECT_EQ(t.message(), "y");
}

// --- CycleState ----------------------------------------------------------------------------------

struct Counter final : StateData {
  explicit Counter(int v) : value(v) {}
  int value;
  std::unique_ptr<StateData> clone() const override { return std::make_unique<Counter>(*this); }
};

TEST(CycleState, KeysAreDistinctAndReadBackWhatWasWritten) {
  const StateKey a = makeStateKey("A");
  const StateKey b = makeStateKey("B");
  EXPECT_NE(a.index, b.index);
  EXPECT_GE(a.index, 0);

  CycleState state;
  EXPECT_EQ(state.read(a), nullptr);
  EXPECT_EQ(state.read(StateKey{}), nullptr);  // an unset key reads as absent
  state.write(b, std::make_unique<Counter>(2));
  EXPECT_EQ(state.read(a), nullptr);
  ASSERT_NE(state.readAs<Counter>(b), nullptr);
  EXPECT_EQ(state.readAs<Counter>(b)->value, 2);
  state.write(a, std::make_unique<Counter>(1));
  EXPECT_EQ(state.readAs<Counter>(a)->value, 1);
  state.write(a, std::make_unique<Counter>(5));  // overwrite
  EXPECT_EQ(state.readAs<Counter>(a)->value, 5);
  EXPECT_EQ(state.readAs<Counter>(b)->value, 2);
}

TEST(CycleState, CloneIsDeep) {
  const StateKey k = makeStateKey("Clone");
  CycleState state;
  state.write(k, std::make_unique<Counter>(7));
  state.skipFilter("NodePorts");
  state.skipScore("NodeAffinity");

  CycleState copy = state.clone();
  ASSERT_NE(copy.readAs<Counter>(k), nullptr);
  EXPECT_NE(copy.read(k), state.read(k));
  EXPECT_EQ(copy.readAs<Counter>(k)->value, 7);
  EXPECT_TRUE(copy.filterSkipped("NodePorts"));
  EXPECT_TRUE(copy.scoreSkipped("NodeAffinity"));

  // Changing the original afterwards leaves the copy alone.
  state.write(k, std::make_unique<Counter>(8));
  state.skipFilter("NodeAffinity");
  EXPECT_EQ(copy.readAs<Counter>(k)->value, 7);
  EXPECT_FALSE(copy.filterSkipped("NodeAffinity"));
}

TEST(CycleState, SkipsAreTrackedPerExtensionPoint) {
  CycleState state;
  state.skipFilter("NodePorts");
  EXPECT_TRUE(state.filterSkipped("NodePorts"));
  EXPECT_FALSE(state.scoreSkipped("NodePorts"));
  EXPECT_FALSE(state.filterSkipped("NodeAffinity"));
  state.skipScore("TaintToleration");
  EXPECT_TRUE(state.scoreSkipped("TaintToleration"));
  EXPECT_FALSE(state.filterSkipped("TaintToleration"));
}

}  // namespace
}  // namespace berth::framework
