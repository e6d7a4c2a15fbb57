#include "pkg/api/yaml.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace berth::api {
namespace {

using nlohmann::json;

// Parses `v: <scalar>` as YAML and returns the value sigs.k8s.io/yaml would put in the JSON.
json scalarValue(std::string_view scalar) {
  auto docs = parseDocuments("v: " + std::string(scalar) + "\n");
  EXPECT_TRUE(docs.ok()) << scalar << ": " << docs.error().message;
  if (!docs.ok() || docs->size() != 1) {
    return "<parse failed>";
  }
  return (*docs)[0]["v"];
}

TEST(YamlDocuments, YamlPlainScalarsResolveAsGoyamlV2) {
  struct Case {
    std::string_view yaml;
    json want;
  };
  const Case cases[] = {
      // Strings: anything not resolvable, and every quoted or block scalar.
      {"hello", "hello"},
      {"'2'", "2"},
      {"\"true\"", "true"},
      {"'null'", "null"},
      {"\"~\"", "~"},
      {"|\n  1\n", "1\n"},
      {"100m", "100m"},
      {"1Gi", "1Gi"},
      {"2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z"},  // timestamps stay strings
      {"2024-05-01", "2024-05-01"},
      {"1.2.3", "1.2.3"},
      {"0x", "0x"},
      {"1e400", "1e400"},  // ParseFloat overflows: goyaml keeps the text
      {"truely", "truely"},
      {"!!str 12", "12"},
      // YAML 1.1 booleans, as goyaml.v2 (and therefore kubectl) reads them.
      {"true", true},
      {"True", true},
      {"TRUE", true},
      {"yes", true},
      {"Yes", true},
      {"y", true},
      {"Y", true},
      {"on", true},
      {"ON", true},
      {"false", false},
      {"no", false},
      {"NO", false},
      {"n", false},
      {"off", false},
      {"Off", false},
      {"tRUE", "tRUE"},
      {"yES", "yES"},
      // Nulls.
      {"", nullptr},
      {"~", nullptr},
      {"null", nullptr},
      {"Null", nullptr},
      {"NULL", nullptr},
      // Integers, with goyaml.v2's base prefixes and underscores.
      {"0", 0},
      {"42", 42},
      {"-7", -7},
      {"+7", 7},
      {"1_000", 1000},
      {"0x1F", 31},
      {"0o17", 15},
      {"017", 15},
      {"0b101", 5},
      {"-0b101", -5},
      {"9223372036854775807", INT64_MAX},
      {"-9223372036854775808", INT64_MIN},
      {"18446744073709551615", UINT64_MAX},
      // Floats; integral ones come out of encoding/json as integers.
      {"0.5", 0.5},
      {".5", 0.5},
      {"-1.25e-3", -1.25e-3},
      {"1.0", 1},
      {"1e3", 1000},
      {"08", 8},  // not octal, so goyaml falls back to float
      {"1.", 1},
      {"1e-400", 0},  // underflow is not an error in strconv.ParseFloat
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    const json got = scalarValue(c.yaml);
    EXPECT_EQ(got, c.want);
    EXPECT_EQ(got.type(), c.want.type()) << got.dump();
  }
}

TEST(YamlDocuments, YamlMapKeysBecomeStrings) {
  auto docs = parseDocuments("1: a\ntrue: b\nyes: c\n1.5: d\n2e6: e\n'x': f\nno: g\n");
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  const json want = {{"1", "a"},     {"true", "c"}, {"1.5", "d"},
                     {"2e+06", "e"}, {"x", "f"},    {"false", "g"}};
  EXPECT_EQ((*docs)[0], want);
}

TEST(YamlDocuments, YamlAnchorsAliasesAndMergeKeys) {
  const char* text = R"(base: &base
  cpu: 100m
  memory: 1Gi
small:
  <<: *base
  memory: 512Mi
list: [*base, *base]
)";
  auto docs = parseDocuments(text);
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  const json base = {{"cpu", "100m"}, {"memory", "1Gi"}};
  EXPECT_EQ((*docs)[0]["base"], base);
  EXPECT_EQ((*docs)[0]["small"], (json{{"cpu", "100m"}, {"memory", "512Mi"}}));
  EXPECT_EQ((*docs)[0]["list"], (json{base, base}));
}

TEST(YamlDocuments, ParseDocumentsSplitsStreamsAndSkipsEmptyDocuments) {
  struct Case {
    std::string_view name;
    std::string_view text;
    json want;  // array of documents
  };
  const Case cases[] = {
      {"single YAML document", "a: 1\n", json::array({{{"a", 1}}})},
      {"stream", "a: 1\n---\nb: 2\n", json::array({{{"a", 1}}, {{"b", 2}}})},
      {"leading separator and empty documents", "---\n---\n# only a comment\n---\na: 1\n---\n",
       json::array({{{"a", 1}}})},
      {"document end markers", "a: 1\n...\n---\nb: x\n...\n",
       json::array({{{"a", 1}}, {{"b", "x"}}})},
      {"empty text", "", json::array()},
      {"only whitespace", "  \n\n", json::array()},
      {"JSON object", "  {\"a\": [1, 2.5, \"x\", null, true]}",
       json::array({{{"a", {1, 2.5, "x", nullptr, true}}}})},
      {"JSON array", "[{\"a\": 1}]", json::array({json::array({{{"a", 1}}})})},
      {"JSON with byte order mark", "\xEF\xBB\xBF{\"a\": 1}", json::array({{{"a", 1}}})},
      {"YAML flow mapping after a comment", "# c\n{a: 1}\n", json::array({{{"a", 1}}})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto docs = parseDocuments(c.text);
    ASSERT_TRUE(docs.ok()) << docs.error().message;
    EXPECT_EQ(json(*docs), c.want);
  }
}

TEST(YamlDocuments, ParseDocumentsReportsWhereTextIsMalformed) {
  struct Case {
    std::string_view name;
    std::string_view text;
    std::string_view message;
  };
  const Case cases[] = {
      {"JSON syntax", "{\"a\": }",
       "invalid JSON: parse error at line 1, column 7: syntax error while parsing value - "
       "unexpected '}'; expected '[', '{', or a literal"},
      {"truncated JSON", "{\"a\": [1,",
       "invalid JSON: parse error at line 1, column 10: syntax error while parsing value - "
       "unexpected end of input; expected '[', '{', or a literal"},
      {"trailing JSON", "{} {}",
       "invalid JSON: parse error at line 1, column 4: syntax error while parsing value - "
       "unexpected '{'; expected end of input"},
      {"JSON with a broken UTF-8 sequence", "{\"a\": \"\xc3",
       "invalid JSON: parse error at line 1, column 9: syntax error while parsing value - invalid "
       "string: ill-formed UTF-8 byte; last read: '\"\\xc3'"},
      {"YAML indentation", "a:\n  b: 1\n c: 2\n",
       "invalid YAML at line 3, column 2: end of map not found"},
      {"YAML unclosed flow sequence", "a: [1, 2\n",
       "invalid YAML at line 2, column 1: end of sequence flow not found"},
      {"YAML tab", "a:\n\tb: 1\n", "invalid YAML at line 2, column 3: illegal map value"},
      {"invalid UTF-8", "a: b\nc: \xff\n", "invalid YAML at line 2, column 4: invalid UTF-8"},
      {"control character", "a: \x01\n",
       "invalid YAML at line 1, column 4: control characters are not allowed"},
      {"NaN has no JSON form", "a: .nan\n",
       "invalid YAML at line 1, column 4: unsupported value: .nan (JSON has no NaN or infinity)"},
      {"null key", "~: 1\n", "invalid YAML at line 1, column 1: unsupported map key: null"},
      {"explicit tag mismatch", "a: !!int abc\n",
       "invalid YAML at line 1, column 4: cannot decode !!str `abc` as a !!int"},
      // yaml-cpp alone would loop forever on these, allocating empty documents.
      {"stray comma at document start", ",a: 1\n",
       "invalid YAML at line 1, column 1: did not find expected node content"},
      {"stray comma after a sequence", "- a\n,\n",
       "invalid YAML at line 2, column 1: did not find expected node content"},
      {"stray comma after a separator", "a: 1\n---\n  ,\n",
       "invalid YAML at line 3, column 3: did not find expected node content"},
      {"alias cycle", "a: &x [*x]\n",
       "invalid YAML at line 1, column 4: document nests too deeply"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto docs = parseDocuments(c.text);
    ASSERT_FALSE(docs.ok());
    EXPECT_EQ(docs.error().message, c.message);
    EXPECT_EQ(docs.error().code, util::ErrorCode::InvalidArgument);
  }
}

TEST(YamlDocuments, YamlAliasBombIsRejected) {
  // Ten levels of ten aliases would expand to 10^10 nodes.
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 10; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) {
      text += (k ? ", " : "") + prev;
    }
    text += "]\n";
  }
  auto docs = parseDocuments(text);
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.error().message.find("too many nodes"), std::string::npos) << docs.error().message;
}

// pkg/config once had its own converter; these are the inputs where the two disagreed, settled as
// kube-scheduler reads its configuration (sigs.k8s.io/yaml, goyaml.v2 built with Go >= 1.13).
TEST(YamlDocuments, OneDocumentTypesScalarsAsClusterFilesDo) {
  struct Case {
    std::string_view yaml;
    nlohmann::ordered_json want;
  };
  const Case cases[] = {
      {"0o17", 15},  // strconv.ParseInt base 0 takes 0o (config read the string "0o17")
      {"017", 15},
      {"0b101", 5},
      {"2.0", 2},  // encoding/json writes 2, which decodes as an integer (config: 2.0)
      {"1e3", 1000},
      {"18446744073709551615", 18446744073709551615ULL},  // uint64 (config: a float)
      {"18446744073709551616", 1.8446744073709552e19},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    auto doc =
        parseOneDocument("v: " + std::string(c.yaml) + "\n", {.reject_duplicate_keys = true});
    ASSERT_TRUE(doc.ok()) << doc.error().message;
    EXPECT_EQ((*doc)["v"], c.want);
    EXPECT_EQ((*doc)["v"].type(), c.want.type());
  }
}

TEST(YamlDocuments, OneDocumentResolvesKeysAndMergesAsClusterFilesDo) {
  // Config kept key text as written and read "<<" as an ordinary key.
  auto doc = parseOneDocument("0x10: a\nyes: b\nbase: &b {x: 1}\nm:\n  <<: *b\n  z: 2\n");
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_EQ(doc->dump(), R"({"16":"a","true":"b","base":{"x":1},"m":{"x":1,"z":2}})");
}

TEST(YamlDocuments, OneDocumentRefusesWhatJsonCannotCarry) {
  struct Case {
    std::string_view text;
    std::string_view error;
  };
  const Case cases[] = {
      // Config read these (infinity as a double, invalid UTF-8 as bytes); goyaml.v2 and
      // encoding/json refuse them.
      {"v: .inf\n",
       "invalid YAML at line 1, column 4: unsupported value: .inf (JSON has no NaN or "
       "infinity)"},
      {"v: \xff\n", "invalid YAML at line 1, column 4: invalid UTF-8"},
      {"v: a\x01\n", "invalid YAML at line 1, column 5: control characters are not allowed"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto doc = parseOneDocument(c.text);
    ASSERT_FALSE(doc.ok());
    EXPECT_EQ(doc.error().message, c.error);
  }
}

TEST(YamlDocuments, StrictDecodingRejectsDuplicateKeysByPath) {
  struct Case {
    std::string_view text;
    std::string_view error;
  };
  const Case cases[] = {
      {"a: 1\na: 2\n", "a: duplicate field"},
      {"a:\n- b: {c: 1, c: 2}\n", "a[0].b.c: duplicate field"},
      {"1: x\n\"1\": y\n", "1: duplicate field"},  // the same key once converted to a string
      {R"({"a": [{"b": 1}, {"c": 1, "c": 2}]})", "a[1].c: duplicate field"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto strict = parseOneDocument(c.text, {.reject_duplicate_keys = true});
    ASSERT_FALSE(strict.ok());
    EXPECT_EQ(strict.error().message, c.error);
    // kubectl keeps the last value (api's converter had no rejection; config had no leniency).
    auto lenient = parseDocuments(c.text);
    EXPECT_TRUE(lenient.ok()) << lenient.error().message;
  }
}

TEST(YamlDocuments, OneDocumentKeepsKeyOrderAndWantsOneDocument) {
  auto doc = parseOneDocument("b: 1\na: 2\n");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->dump(), R"({"b":1,"a":2})");
  auto empty = parseOneDocument("# nothing\n");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->is_null());
  auto several = parseOneDocument("a: 1\n---\nb: 2\n");
  ASSERT_FALSE(several.ok());
  EXPECT_EQ(several.error().message, "expected one YAML document, found several");
}

}  // namespace
}  // namespace berth::api
