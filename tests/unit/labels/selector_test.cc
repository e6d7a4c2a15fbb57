#include "pkg/labels/selector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace berth::labels {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace std::string_literals;  // "...\0..."s keeps embedded NULs

std::string_view opName(Selector::Op op) {
  switch (op) {
    case Selector::Op::Equals:
      return "Equals";
    case Selector::Op::NotEquals:
      return "NotEquals";
    case Selector::Op::In:
      return "In";
    case Selector::Op::NotIn:
      return "NotIn";
    case Selector::Op::Exists:
      return "Exists";
    case Selector::Op::DoesNotExist:
      return "DoesNotExist";
    case Selector::Op::Gt:
      return "Gt";
    case Selector::Op::Lt:
      return "Lt";
  }
  return "?";
}

// "key Op [v1,v2]": readable in failure output and easy to write in tables.
std::vector<std::string> describe(const Selector& selector) {
  std::vector<std::string> out;
  for (const Selector::Requirement& r : selector.requirements()) {
    std::string s = r.key + " " + std::string(opName(r.op)) + " [";
    for (size_t i = 0; i < r.values.size(); ++i) {
      s += (i > 0 ? "," : "") + r.values[i];
    }
    out.push_back(s + "]");
  }
  return out;
}

const std::string kValueRegexError =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const std::string kNameRegexError =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

TEST(LabelSelector, SelectorParsesValidStrings) {
  struct Case {
    std::string text;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"", {}},
      {"  \t\n", {}},
      {"x=a,y=b,z=c", {"x Equals [a]", "y Equals [b]", "z Equals [c]"}},
      {"x==a", {"x Equals [a]"}},
      {"x!=a,y=b", {"x NotEquals [a]", "y Equals [b]"}},
      {"x=", {"x Equals []"}},
      {"x= ", {"x Equals []"}},
      {"x=,z= ", {"x Equals []", "z Equals []"}},
      {"x = y", {"x Equals [y]"}},
      {"!x", {"x DoesNotExist []"}},
      {"x", {"x Exists []"}},
      {"a ", {"a Exists []"}},
      {"\rx", {"x Exists []"}},
      {"a,b", {"a Exists []", "b Exists []"}},
      {"x>1", {"x Gt [1]"}},
      {"x>1,z<5", {"x Gt [1]", "z Lt [5]"}},
      {"x<007", {"x Lt [007]"}},
      {"this-is-a-dns.domain.com/key-with-dash",
       {"this-is-a-dns.domain.com/key-with-dash Exists []"}},
      {"0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
       {"0.1.2.domain/99 NotIn [10.10.100.1,tick.tack.clock]"}},
      {"foo  in\t (abc)", {"foo In [abc]"}},
      {"x notin\n (abc)", {"x NotIn [abc]"}},
      {"x in (abc,)", {"x In [,abc]"}},
      {"x in ()", {"x In []"}},
      {"x notin ( )", {"x NotIn []"}},
      {"x notin (, a)", {"x NotIn [,a]"}},
      {"x in (b,a,b)", {"x In [a,b]"}},
      {"x notin (abc,,def),bar,z in (),w",
       {"bar Exists []", "w Exists []", "x NotIn [,abc,def]", "z In []"}},
      {"a in (x,y,notin, z,in)", {"a In [in,notin,x,y,z]"}},
      {"in in (in)", {"in In [in]"}},
      {"notin=in", {"notin Equals [in]"}},
      {"!in", {"in DoesNotExist []"}},
      // Sorted by key; requirements on the same key keep their order.
      {"z=1,a=2,z!=3", {"a Equals [2]", "z Equals [1]", "z NotEquals [3]"}},
      // A NUL byte after a token is skipped; at the start of a token it ends the input.
      {"a\0"s, {"a Exists []"}},
      {"a=b \0c=d"s, {"a Equals [b]"}},
      {"a=b,\0c"s, {"a Equals [b]", "c Exists []"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("selector: \"" + c.text + "\"");
    util::Result<Selector> selector = Selector::parse(c.text);
    ASSERT_TRUE(selector.ok()) << selector.error().message;
    EXPECT_EQ(describe(*selector), c.want);
    EXPECT_EQ(selector->empty(), c.want.empty());
  }
}

TEST(LabelSelector, SelectorRejectsInvalidStringsWithUpstreamMessages) {
  struct Case {
    std::string text;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"x==a==b", "found '==', expected: ',' or 'end of string'"},
      {"!x=a", "found '=', expected: ',' or 'end of string'"},
      {"x<a",
       "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, "
       "the value must be an integer"},
      {"x>99999999999999999999",
       "unable to parse requirement: values[0]: Invalid value: \"99999999999999999999\": for "
       "'Gt', 'Lt' operators, the value must be an integer"},
      {"x,,y", "found ',', expected: identifier after ','"},
      {",x,y", "found ',', expected: !, identifier, or 'end of string'"},
      {"(", "found '(', expected: !, identifier, or 'end of string'"},
      {"x nott in (y)",
       "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt"},
      {"a (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"},
      {"a in (xyz),", "found '', expected: identifier after ','"},
      {"a in (xyz)b notin ()", "found 'b', expected: ',' or 'end of string'"},
      {"a in (xyz abc)", "unable to parse requirement: found 'abc', expected: ',' or ')'"},
      {"a notin(", "unable to parse requirement: found '', expected: ',', ')' or identifier"},
      {"a in b", "unable to parse requirement: found 'b' expected: '('"},
      {"a in (b,=)", "unable to parse requirement: found '=', expected: ',', or identifier"},
      {"a=(b)", "unable to parse requirement: found '(', expected: identifier"},
      {"!", "unable to parse requirement: found '', expected: identifier"},
      {"!!a", "unable to parse requirement: found '!', expected: identifier"},
      {"a=b\0garbage"s, "found 'garbage', expected: ',' or 'end of string'"},
      {"a=b, \0c"s, "found '', expected: identifier after ','"},
      {"x=a||y=b",
       "unable to parse requirement: values[0][x]: Invalid value: \"a||y\": " + kValueRegexError},
      {"x>-1",
       "unable to parse requirement: values[0][x]: Invalid value: \"-1\": " + kValueRegexError},
      {"x>a$",
       "unable to parse requirement: [values[0]: Invalid value: \"a$\": for 'Gt', 'Lt' "
       "operators, the value must be an integer, values[0][x]: Invalid value: \"a$\": " +
           kValueRegexError + "]"},
      {"a=" + std::string(64, 'v'), "unable to parse requirement: values[0][a]: Invalid value: \"" +
                                        std::string(64, 'v') + "\": must be no more than 63 bytes"},
      {"A_",
       "unable to parse requirement: <nil>: Invalid value: \"A_\": name part " + kNameRegexError},
      {"/a",
       "unable to parse requirement: <nil>: Invalid value: \"/a\": prefix part must be "
       "non-empty"},
      {"a/",
       "unable to parse requirement: <nil>: Invalid value: \"a/\": name part must be "
       "non-empty; name part " +
           kNameRegexError},
      {"a/b/c", "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a valid label key " +
                    kNameRegexError +
                    " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"},
      {"Example.com/a",
       "unable to parse requirement: <nil>: Invalid value: \"Example.com/a\": prefix part a "
       "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
       "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
       "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
      {std::string(64, 'k'), "unable to parse requirement: <nil>: Invalid value: \"" +
                                 std::string(64, 'k') +
                                 "\": name part must be no more than 63 bytes"},
      {"k\xff", "unable to parse requirement: <nil>: Invalid value: \"k\\xff\": name part " +
                    kNameRegexError},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("selector: \"" + c.text + "\"");
    util::Result<Selector> selector = Selector::parse(c.text);
    ASSERT_FALSE(selector.ok()) << "parsed as " << selector->toString();
    EXPECT_EQ(selector.error().code, util::ErrorCode::InvalidArgument);
    EXPECT_EQ(selector.error().message, c.error);
  }
}

TEST(LabelSelector, SelectorMatchesLabels) {
  struct Case {
    std::string selector;
    api::StringMap labels;
    bool want;
  };
  const api::StringMap fooBar = {{"foo", "bar"}, {"baz", "blah"}};
  const std::vector<Case> cases = {
      {"", {{"x", "y"}}, true},
      {"", {}, true},
      {"x=y", {{"x", "y"}}, true},
      {"x==y", {{"x", "y"}}, true},
      {"x=y,z=w", {{"x", "y"}, {"z", "w"}}, true},
      {"x=y,z=w", {{"x", "w"}, {"z", "w"}}, false},
      {"x=z", {}, false},
      {"x=y", {{"x", "z"}}, false},
      {"x=", {{"x", ""}}, true},
      {"x=", {}, false},
      {"x!=y,z!=w", {{"x", "z"}, {"z", "a"}}, true},
      {"x!=y,z!=w", {{"x", "z"}, {"z", "w"}}, false},
      {"x!=y", {}, true},  // NotEquals holds when the key is absent
      {"notin=in", {{"notin", "in"}}, true},
      {"x", {{"x", "z"}}, true},
      {"x", {{"y", "z"}}, false},
      {"!x", {{"y", "z"}}, true},
      {"!x", {{"x", "z"}}, false},
      {"x in (a,b)", {{"x", "b"}}, true},
      {"x in (a,b)", {{"x", "c"}}, false},
      {"x in (a,b)", {}, false},
      {"x in ()", {{"x", ""}}, true},
      {"x notin (a,b)", {{"x", "c"}}, true},
      {"x notin (a,b)", {{"x", "a"}}, false},
      {"x notin (a,b)", {}, true},  // NotIn holds when the key is absent
      {"x>1", {{"x", "2"}}, true},
      {"x>1", {{"x", "1"}}, false},
      {"x>1", {{"x", "0"}}, false},
      {"x<1", {{"x", "0"}}, true},
      {"x<1", {{"x", "-5"}}, true},
      {"x<1", {{"x", "2"}}, false},
      {"x>1", {{"x", "v2"}}, false},
      {"x>1", {}, false},
      {"x<1", {}, false},
      {"foo=bar,baz=blah", fooBar, true},
      {"foo=blah", fooBar, false},
      {"foo=bar,foobar=bar,baz=blah", fooBar, false},
      {"x=a,x=b", {{"x", "a"}}, false},  // requirements are ANDed, even on one key
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("selector: \"" + c.selector + "\"");
    util::Result<Selector> selector = Selector::parse(c.selector);
    ASSERT_TRUE(selector.ok()) << selector.error().message;
    EXPECT_EQ(selector->matches(c.labels), c.want);
  }
}

TEST(LabelSelector, SelectorDefaultSelectsEverything) {
  Selector selector;
  EXPECT_TRUE(selector.empty());
  EXPECT_TRUE(selector.matches({}));
  EXPECT_TRUE(selector.matches({{"a", "b"}}));
  EXPECT_EQ(selector.toString(), "");
}

TEST(LabelSelector, SelectorToStringIsUpstreamFormat) {
  struct Case {
    std::string text;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"x in (def,abc),y notin (jkl),z", "x in (abc,def),y notin (jkl),z"},
      {"x notin (abc,def),y!=jkl,!z", "x notin (abc,def),y!=jkl,!z"},
      {"z notin (), y in (mno,jkl)", "y in (jkl,mno),z notin ()"},
      {"x=abc,y==jkl,z!=a,z", "x=abc,y=jkl,z!=a,z"},
      {"x>2,y<8,z", "x>2,y<8,z"},
      {"x= ,z= ", "x=,z="},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("selector: \"" + c.text + "\"");
    util::Result<Selector> selector = Selector::parse(c.text);
    ASSERT_TRUE(selector.ok()) << selector.error().message;
    EXPECT_EQ(selector->toString(), c.want);
  }
}

TEST(LabelSelector, SelectorFromSetMatchesEqualities) {
  Selector selector = Selector::fromSet({{"b", "2"}, {"a", "1"}});
  EXPECT_EQ(describe(selector), (std::vector<std::string>{"a Equals [1]", "b Equals [2]"}));
  EXPECT_TRUE(selector.matches({{"a", "1"}, {"b", "2"}, {"c", "3"}}));
  EXPECT_FALSE(selector.matches({{"a", "1"}}));
  EXPECT_TRUE(Selector::fromSet({}).empty());
}

TEST(LabelSelector, SelectorFromLabelSelector) {
  struct Case {
    std::string name;
    api::LabelSelector selector;
    std::vector<std::string> want;  // requirements, when valid
    std::string error;              // the message, when invalid
  };
  const std::vector<Case> cases = {
      {"an empty selector selects everything", {}, {}, ""},
      {"matchLabels become equalities, sorted with the expressions by key",
       {{{"b", "2"}, {"a", "1"}},
        {{"c", "In", {"y", "x"}},
         {"a", "NotIn", {"3"}},
         {"d", "Exists", {}},
         {"e", "DoesNotExist", {}}}},
       {"a Equals [1]", "a NotIn [3]", "b Equals [2]", "c In [y,x]", "d Exists []",
        "e DoesNotExist []"},
       ""},
      {"an unknown operator",
       {{}, {{"a", "Gt", {"1"}}}},
       {},
       "\"Gt\" is not a valid pod selector operator"},
      {"an empty operator", {{}, {{"a", "", {}}}}, {}, "\"\" is not a valid pod selector operator"},
      {"In needs values",
       {{}, {{"a", "In", {}}}},
       {},
       "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be "
       "empty"},
      {"NotIn needs values",
       {{}, {{"a", "NotIn", {}}}},
       {},
       "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be "
       "empty"},
      {"Exists takes no values",
       {{}, {{"a", "Exists", {"x", "y"}}}},
       {},
       "values: Invalid value: []string{\"x\", \"y\"}: values set must be empty for exists and "
       "does not exist"},
      {"DoesNotExist takes no values",
       {{}, {{"a", "DoesNotExist", {"x"}}}},
       {},
       "values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not "
       "exist"},
      {"an invalid key in matchLabels",
       {{{"a b", "c"}}, {}},
       {},
       "key: Invalid value: \"a b\": name part " + kNameRegexError},
      {"an invalid value in matchLabels",
       {{{"a", "b c"}}, {}},
       {},
       "values[0][a]: Invalid value: \"b c\": " + kValueRegexError},
      {"an invalid value in an expression",
       {{}, {{"a", "In", {"ok", "not ok"}}}},
       {},
       "values[1][a]: Invalid value: \"not ok\": " + kValueRegexError},
      {"several problems in one requirement are aggregated",
       {{}, {{"-a", "In", {}}}},
       {},
       "[key: Invalid value: \"-a\": name part " + kNameRegexError +
           ", values: Invalid value: []string(nil): for 'in', 'notin' operators, values set "
           "can't be empty]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    util::Result<Selector> selector = Selector::fromLabelSelector(c.selector);
    if (c.error.empty()) {
      ASSERT_TRUE(selector.ok()) << selector.error().message;
      EXPECT_EQ(describe(*selector), c.want);
    } else {
      ASSERT_FALSE(selector.ok());
      EXPECT_EQ(selector.error().code, util::ErrorCode::InvalidArgument);
      EXPECT_EQ(selector.error().message, c.error);
    }
  }
}

TEST(LabelSelector, SelectorFromLabelSelectorMatches) {
  api::LabelSelector ls{{{"app", "web"}},
                        {{"tier", "In", {"front", "back"}},
                         {"env", "NotIn", {"dev"}},
                         {"canary", "DoesNotExist", {}}}};
  util::Result<Selector> selector = Selector::fromLabelSelector(ls);
  ASSERT_TRUE(selector.ok()) << selector.error().message;
  EXPECT_TRUE(selector->matches({{"app", "web"}, {"tier", "front"}}));
  EXPECT_TRUE(selector->matches({{"app", "web"}, {"tier", "back"}, {"env", "prod"}}));
  EXPECT_FALSE(selector->matches({{"app", "web"}, {"tier", "front"}, {"env", "dev"}}));
  EXPECT_FALSE(selector->matches({{"app", "web"}, {"tier", "mid"}}));
  EXPECT_FALSE(selector->matches({{"app", "db"}, {"tier", "front"}}));
  EXPECT_FALSE(selector->matches({{"app", "web"}, {"tier", "front"}, {"canary", ""}}));

  util::Result<Selector> everything = Selector::fromLabelSelector({});
  ASSERT_TRUE(everything.ok());
  EXPECT_TRUE(everything->empty());
  EXPECT_TRUE(everything->matches({{"any", "thing"}}));
}

// Deterministic random and truncated inputs: parse must never crash, must fail with a message, and
// whatever parses must print back to a string that parses to the same requirements.
TEST(LabelSelector, SelectorParseSurvivesGarbage) {
  const std::vector<std::string> pieces = {
      "a",        "b",  "key", "x.y/z", "in", "notin", "=",  "==",  "!=",
      "!",        "(",  ")",   ",",     ">",  "<",     " ",  "\t",  "\n",
      "1",        "-1", "007", "_",     "-",  ".",     "/",  "\0"s, "\xff",
      "\xc3\xa9", "A",  "|",   "~",     "$",  "\"",    "\\", "",    "99999999999999999999"};
  const std::vector<std::string> seeds = {
      "x in (a,b),y notin (c),!z,w=1,v!=2,u>3,t<4",
      "this-is-a-dns.domain.com/key-with-dash in (so,what)",
      "a,b,c==d,e in (,f,)",
  };
  std::mt19937 rng(20240601);  // fixed seed: the same inputs on every run
  std::vector<std::string> inputs;
  for (const std::string& seed : seeds) {
    for (size_t len = 0; len <= seed.size(); ++len) {
      inputs.push_back(seed.substr(0, len));
      inputs.push_back(seed.substr(len));
    }
  }
  for (int i = 0; i < 4000; ++i) {
    std::string s;
    int n = static_cast<int>(rng() % 16);
    for (int k = 0; k < n; ++k) {
      s += pieces[rng() % pieces.size()];
    }
    if (rng() % 4 == 0) {  // random raw bytes, too
      s += static_cast<char>(rng() % 256);
    }
    inputs.push_back(std::move(s));
  }

  int parsed = 0;
  for (const std::string& input : inputs) {
    util::Result<Selector> selector = Selector::parse(input);
    if (!selector.ok()) {
      EXPECT_FALSE(selector.error().message.empty()) << "input: " << input;
      continue;
    }
    ++parsed;
    std::string printed = selector->toString();
    util::Result<Selector> again = Selector::parse(printed);
    ASSERT_TRUE(again.ok()) << "input: " << input << " printed: " << printed << ": "
                            << again.error().message;
    EXPECT_EQ(describe(*again), describe(*selector)) << "input: " << input;
  }
  EXPECT_GT(parsed, 100);  // the generator does reach valid selectors
}

}  // namespace
}  // namespace berth::labels
