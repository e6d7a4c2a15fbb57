#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/labels/selector.h"

namespace berth::labels {
namespace {

using Op = api::NodeSelectorOperator;

api::Node makeNode(std::string name, api::StringMap labels) {
  api::Node node;
  node.metadata.name = std::move(name);
  node.metadata.labels = std::move(labels);
  return node;
}

TEST(NodeSelector, NodeSelectorRequiresEveryPair) {
  struct Case {
    std::string name;
    api::StringMap nodeSelector;
    api::StringMap labels;
    bool want;
  };
  const std::vector<Case> cases = {
      {"empty selector matches any node", {}, {{"a", "1"}}, true},
      {"empty selector matches a node without labels", {}, {}, true},
      {"all pairs present", {{"a", "1"}, {"b", "2"}}, {{"a", "1"}, {"b", "2"}, {"c", "3"}}, true},
      {"one key missing", {{"a", "1"}, {"b", "2"}}, {{"a", "1"}}, false},
      {"one value differs", {{"a", "1"}}, {{"a", "2"}}, false},
      {"empty value needs the key with an empty value", {{"a", ""}}, {{"a", ""}}, true},
      {"empty value does not match an absent key", {{"a", ""}}, {}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(matchesNodeSelector(c.nodeSelector, c.labels), c.want);
  }
}

TEST(NodeSelector, NodeSelectorRequirementOperators) {
  struct Case {
    std::string name;
    api::NodeSelectorRequirement req;
    api::StringMap labels;
    bool want;
  };
  const api::StringMap zoneA = {{"zone", "a"}};
  const std::vector<Case> cases = {
      {"In: value listed", {"zone", Op::In, {"a", "b"}}, zoneA, true},
      {"In: value not listed", {"zone", Op::In, {"b", "c"}}, zoneA, false},
      {"In: key absent", {"zone", Op::In, {"a"}}, {}, false},
      {"In: empty value listed", {"zone", Op::In, {""}}, {{"zone", ""}}, true},
      {"NotIn: value not listed", {"zone", Op::NotIn, {"b"}}, zoneA, true},
      {"NotIn: value listed", {"zone", Op::NotIn, {"a"}}, zoneA, false},
      {"NotIn: key absent", {"zone", Op::NotIn, {"a"}}, {}, true},
      {"Exists: present", {"zone", Op::Exists, {}}, zoneA, true},
      {"Exists: present with empty value", {"zone", Op::Exists, {}}, {{"zone", ""}}, true},
      {"Exists: absent", {"zone", Op::Exists, {}}, {}, false},
      {"DoesNotExist: absent", {"zone", Op::DoesNotExist, {}}, {}, true},
      {"DoesNotExist: present", {"zone", Op::DoesNotExist, {}}, zoneA, false},
      {"Gt: greater", {"cpus", Op::Gt, {"5"}}, {{"cpus", "6"}}, true},
      {"Gt: equal", {"cpus", Op::Gt, {"5"}}, {{"cpus", "5"}}, false},
      {"Gt: smaller", {"cpus", Op::Gt, {"5"}}, {{"cpus", "4"}}, false},
      {"Lt: smaller", {"cpus", Op::Lt, {"5"}}, {{"cpus", "4"}}, true},
      {"Lt: equal", {"cpus", Op::Lt, {"5"}}, {{"cpus", "5"}}, false},
      {"Lt: greater", {"cpus", Op::Lt, {"5"}}, {{"cpus", "6"}}, false},
      {"Gt: key absent", {"cpus", Op::Gt, {"5"}}, {}, false},
      {"Lt: key absent", {"cpus", Op::Lt, {"5"}}, {}, false},
      {"Gt: label not an integer", {"cpus", Op::Gt, {"5"}}, {{"cpus", "many"}}, false},
      {"Lt: label not an integer", {"cpus", Op::Lt, {"5"}}, {{"cpus", "4.5"}}, false},
      {"Lt: label empty", {"cpus", Op::Lt, {"5"}}, {{"cpus", ""}}, false},
      {"Lt: label with spaces", {"cpus", Op::Lt, {"5"}}, {{"cpus", " 4"}}, false},
      {"Gt: requirement not an integer", {"cpus", Op::Gt, {"five"}}, {{"cpus", "6"}}, false},
      {"Gt: requirement overflows int64",
       {"cpus", Op::Gt, {"9223372036854775808"}},
       {{"cpus", "6"}},
       false},
      {"Gt: two values", {"cpus", Op::Gt, {"1", "2"}}, {{"cpus", "6"}}, false},
      {"Gt: no value", {"cpus", Op::Gt, {}}, {{"cpus", "6"}}, false},
      {"Gt: leading zeros parse", {"cpus", Op::Gt, {"06"}}, {{"cpus", "007"}}, true},
      {"Gt: a plus sign on the label parses", {"cpus", Op::Gt, {"6"}}, {{"cpus", "+7"}}, true},
      {"Lt: negative label", {"t", Op::Lt, {"0"}}, {{"t", "-3"}}, true},
      {"Lt: negative requirement is not a label value",
       {"t", Op::Lt, {"-1"}},
       {{"t", "-3"}},
       false},
      {"Gt: int64 limits",
       {"n", Op::Gt, {"9223372036854775806"}},
       {{"n", "9223372036854775807"}},
       true},
      {"Lt: int64 minimum label", {"n", Op::Lt, {"0"}}, {{"n", "-9223372036854775808"}}, true},
      {"Gt: label overflows int64", {"n", Op::Gt, {"0"}}, {{"n", "9223372036854775808"}}, false},
      // Upstream rejects invalid requirements (labels.NewRequirement) and the term matches nothing.
      {"invalid: In without values", {"zone", Op::In, {}}, zoneA, false},
      {"invalid: NotIn without values even when the key is absent",
       {"zone", Op::NotIn, {}},
       {},
       false},
      {"invalid: Exists with values", {"zone", Op::Exists, {"a"}}, zoneA, false},
      {"invalid: DoesNotExist with values", {"zone", Op::DoesNotExist, {"a"}}, {}, false},
      {"invalid: key syntax", {"bad key", Op::Exists, {}}, {{"bad key", "x"}}, false},
      {"invalid: empty key", {"", Op::DoesNotExist, {}}, {}, false},
      {"invalid: value syntax", {"zone", Op::In, {"a b"}}, {{"zone", "a b"}}, false},
      {"invalid: value too long",
       {"zone", Op::In, {std::string(64, 'a')}},
       {{"zone", std::string(64, 'a')}},
       false},
      {"invalid: NotIn with a bad value", {"zone", Op::NotIn, {"a b"}}, zoneA, false},
      {"valid: prefixed key",
       {"topology.kubernetes.io/zone", Op::In, {"a"}},
       {{"topology.kubernetes.io/zone", "a"}},
       true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(matchesRequirement(c.req, c.labels), c.want);
  }
}

TEST(NodeSelector, NodeSelectorTermAndsExpressionsAndFields) {
  struct Case {
    std::string name;
    api::NodeSelectorTerm term;
    api::Node node;
    bool want;
  };
  const api::Node n1 = makeNode("n1", {{"zone", "a"}, {"disk", "ssd"}});
  const api::NodeSelectorRequirement zoneA{"zone", Op::In, {"a"}};
  const api::NodeSelectorRequirement zoneB{"zone", Op::In, {"b"}};
  const api::NodeSelectorRequirement ssd{"disk", Op::In, {"ssd"}};
  const std::vector<Case> cases = {
      {"an empty term matches nothing", {}, n1, false},
      {"all expressions hold", {{zoneA, ssd}, {}}, n1, true},
      {"one expression fails", {{zoneA, zoneB}, {}}, n1, false},
      {"an invalid expression spoils the term", {{zoneA, {"zone", Op::In, {}}}, {}}, n1, false},
      {"field In on the node name", {{}, {{"metadata.name", Op::In, {"n1"}}}}, n1, true},
      {"field In on another name", {{}, {{"metadata.name", Op::In, {"n2"}}}}, n1, false},
      {"field NotIn on another name", {{}, {{"metadata.name", Op::NotIn, {"n2"}}}}, n1, true},
      {"field NotIn on the node name", {{}, {{"metadata.name", Op::NotIn, {"n1"}}}}, n1, false},
      {"field In needs exactly one value",
       {{}, {{"metadata.name", Op::In, {"n1", "n2"}}}},
       n1,
       false},
      {"field In without values", {{}, {{"metadata.name", Op::In, {}}}}, n1, false},
      {"field Exists is not supported", {{}, {{"metadata.name", Op::Exists, {}}}}, n1, false},
      {"field Gt is not supported", {{}, {{"metadata.name", Op::Gt, {"1"}}}}, n1, false},
      {"other field keys: In", {{}, {{"metadata.uid", Op::In, {"n1"}}}}, n1, false},
      {"other field keys: NotIn", {{}, {{"spec.foo", Op::NotIn, {"x"}}}}, n1, false},
      {"expressions and fields both hold",
       {{zoneA}, {{"metadata.name", Op::In, {"n1"}}}},
       n1,
       true},
      {"expressions hold, fields fail", {{zoneA}, {{"metadata.name", Op::In, {"n2"}}}}, n1, false},
      {"fields hold, expressions fail", {{zoneB}, {{"metadata.name", Op::In, {"n1"}}}}, n1, false},
      {"a node without a name skips matchFields (upstream has no fields to compare)",
       {{zoneA}, {{"metadata.name", Op::In, {"n2"}}}},
       makeNode("", {{"zone", "a"}}),
       true},
      {"a nameless node still fails invalid matchFields",
       {{zoneA}, {{"metadata.name", Op::In, {}}}},
       makeNode("", {{"zone", "a"}}),
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(matchesTerm(c.term, c.node), c.want);
  }
}

TEST(NodeSelector, NodeSelectorTermsAreOred) {
  struct Case {
    std::string name;
    api::NodeSelector selector;
    bool want;
  };
  const api::Node node = makeNode("n1", {{"zone", "a"}});
  const api::NodeSelectorTerm matching{{{"zone", Op::In, {"a"}}}, {}};
  const api::NodeSelectorTerm failing{{{"zone", Op::In, {"b"}}}, {}};
  const api::NodeSelectorTerm invalid{{{"zone", Op::Exists, {"a"}}}, {}};
  const std::vector<Case> cases = {
      {"no terms match nothing", {}, false},
      {"one matching term", {{matching}}, true},
      {"one failing term", {{failing}}, false},
      {"failing then matching", {{failing, matching}}, true},
      {"matching then failing", {{matching, failing}}, true},
      {"an empty term is skipped", {{api::NodeSelectorTerm{}, matching}}, true},
      {"only an empty term", {{api::NodeSelectorTerm{}}}, false},
      {"an invalid term does not stop a later match", {{invalid, matching}}, true},
      {"only an invalid term", {{invalid}}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(matchesNodeSelectorTerms(c.selector, node), c.want);
  }
}

}  // namespace
}  // namespace berth::labels
