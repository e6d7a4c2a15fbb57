#include <gtest/gtest.h>

#include <string>

#include "pkg/api/types.h"

namespace berth::api {
namespace {

Pod podIn(std::string phase, std::string node = "") {
  Pod pod;
  pod.status.phase = std::move(phase);
  pod.spec.nodeName = std::move(node);
  return pod;
}

TEST(PodState, OnlySucceededAndFailedAreTerminal) {
  EXPECT_TRUE(isTerminal(podIn("Succeeded")));
  EXPECT_TRUE(isTerminal(podIn("Failed")));
  EXPECT_FALSE(isTerminal(podIn("Pending")));
  EXPECT_FALSE(isTerminal(podIn("Running", "n1")));
  EXPECT_FALSE(isTerminal(podIn("Unknown")));
  EXPECT_FALSE(isTerminal(podIn("")));
}

TEST(PodState, AssignedMeansNodeNameIsSet) {
  EXPECT_FALSE(isAssigned(podIn("Pending")));
  EXPECT_TRUE(isAssigned(podIn("Pending", "n1")));
  EXPECT_TRUE(isAssigned(podIn("Succeeded", "n1")));
}

TEST(PodState, NonTerminalSelectorExcludesBothTerminalPhases) {
  EXPECT_STREQ(kNonTerminalPodsSelector, "status.phase!=Succeeded,status.phase!=Failed");
}

}  // namespace
}  // namespace berth::api
