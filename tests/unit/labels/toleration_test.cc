#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/labels/selector.h"

namespace berth::labels {
namespace {

api::Toleration toleration(std::string key, std::string op, std::string value, std::string effect) {
  api::Toleration t;
  t.key = std::move(key);
  t.operator_ = std::move(op);
  t.value = std::move(value);
  t.effect = std::move(effect);
  return t;
}

TEST(Toleration, TolerationMatchesTaintByKeyOperatorValue) {
  struct Case {
    std::string name;
    api::Toleration toleration;
    api::Taint taint;
    bool want;
  };
  const api::Taint kv{"k", "v", "NoSchedule"};
  const std::vector<Case> cases = {
      // Key set, each operator, value match / mismatch (effect empty = all effects).
      {"Equal, same value", toleration("k", "Equal", "v", ""), kv, true},
      {"Equal, other value", toleration("k", "Equal", "w", ""), kv, false},
      {"Equal, empty value vs a valued taint", toleration("k", "Equal", "", ""), kv, false},
      {"empty operator means Equal, same value", toleration("k", "", "v", ""), kv, true},
      {"empty operator means Equal, other value", toleration("k", "", "w", ""), kv, false},
      {"Exists ignores the value", toleration("k", "Exists", "", ""), kv, true},
      {"Exists ignores even a mismatching value", toleration("k", "Exists", "w", ""), kv, true},
      {"bogus operator, same value", toleration("k", "Bogus", "v", ""), kv, false},
      {"operators are case-sensitive", toleration("k", "equal", "v", ""), kv, false},
      {"Gt is alpha (KEP-5471) and not supported", toleration("k", "Gt", "1", ""),
       api::Taint{"k", "5", "NoSchedule"}, false},
      {"Lt is alpha (KEP-5471) and not supported", toleration("k", "Lt", "9", ""),
       api::Taint{"k", "5", "NoSchedule"}, false},
      {"Equal with both values empty", toleration("k", "Equal", "", ""),
       api::Taint{"k", "", "NoSchedule"}, true},
      // Key mismatch.
      {"other key, Exists", toleration("other", "Exists", "", ""), kv, false},
      {"other key, Equal same value", toleration("other", "Equal", "v", ""), kv, false},
      // Empty key matches every key, whatever the operator (validation, not matching, requires
      // Exists with an empty key).
      {"empty key, Exists", toleration("", "Exists", "", ""), kv, true},
      {"empty key, Exists, other effect", toleration("", "Exists", "", "NoExecute"), kv, false},
      {"empty key, Equal same value", toleration("", "Equal", "v", ""), kv, true},
      {"empty key, Equal other value", toleration("", "Equal", "w", ""), kv, false},
      {"empty key, empty operator same value", toleration("", "", "v", ""), kv, true},
      {"empty key, bogus operator", toleration("", "Bogus", "v", ""), kv, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(tolerates(c.toleration, c.taint), c.want);
  }
}

TEST(Toleration, TolerationEffectEmptyMatchesAllOthersMustBeEqual) {
  const std::vector<std::string> taintEffects = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
  const std::vector<std::string> tolerationEffects = {"", "NoSchedule", "PreferNoSchedule",
                                                      "NoExecute"};
  for (const std::string& tolerationEffect : tolerationEffects) {
    for (const std::string& taintEffect : taintEffects) {
      for (const std::string op : {"Exists", "Equal"}) {
        SCOPED_TRACE("toleration effect '" + tolerationEffect + "', taint effect '" + taintEffect +
                     "', operator " + op);
        const bool want = tolerationEffect.empty() || tolerationEffect == taintEffect;
        EXPECT_EQ(tolerates(toleration("k", op, "v", tolerationEffect), {"k", "v", taintEffect}),
                  want);
        // An empty-key Exists toleration is still limited by its effect.
        EXPECT_EQ(
            tolerates(toleration("", "Exists", "", tolerationEffect), {"any", "x", taintEffect}),
            want);
        // A mismatching value loses for Equal whatever the effect.
        EXPECT_EQ(tolerates(toleration("k", op, "w", tolerationEffect), {"k", "v", taintEffect}),
                  want && op == "Exists");
      }
    }
  }
}

TEST(Toleration, ToleratesAnyNeedsOneTolerationThatMatches) {
  const api::Taint taint{"dedicated", "gpu", "NoSchedule"};
  EXPECT_FALSE(toleratesAny({}, taint));
  EXPECT_FALSE(toleratesAny(
      {toleration("dedicated", "Equal", "cpu", ""), toleration("other", "Exists", "", "")}, taint));
  EXPECT_TRUE(toleratesAny({toleration("dedicated", "Equal", "cpu", ""),
                            toleration("dedicated", "Equal", "gpu", "NoSchedule")},
                           taint));
  EXPECT_TRUE(toleratesAny({toleration("", "Exists", "", "")}, taint));
}

}  // namespace
}  // namespace berth::labels
