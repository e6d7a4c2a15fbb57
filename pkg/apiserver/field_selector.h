#pragma once
// Field selectors (?fieldSelector=) as kube-apiserver parses and applies them
// (apimachinery/pkg/fields), over objects in their wire form.

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/apiserver/api_error.h"
#include "pkg/apiserver/resource_info.h"

namespace berth::apiserver {

// ?fieldSelector=: terms "field=value", "field==value", "field!=value" ANDed by commas, with the
// fields kube-apiserver supports for the resource (pods: spec.nodeName, spec.schedulerName,
// status.phase, ...; every resource: metadata.name, metadata.namespace).
class FieldSelector {
 public:
  struct Term {
    std::string field;
    std::string value;
    bool equals = true;  // false for !=
  };

  FieldSelector() = default;  // selects everything
  // An unknown field or malformed term is a 400 BadRequest, as the apiserver answers.
  static ApiResult<FieldSelector> parse(Resource resource, std::string_view text);

  bool matches(Resource resource, const nlohmann::json& object) const;
  const std::vector<Term>& terms() const { return terms_; }

 private:
  std::vector<Term> terms_;
};

// The value kube-apiserver indexes `field` by for `object` ("" when absent).
std::string fieldValue(Resource resource, const nlohmann::json& object, std::string_view field);

// The string at a dotted path, "" when absent; booleans print as Go's strconv.FormatBool.
std::string stringAt(const nlohmann::json& object, std::initializer_list<std::string_view> path,
                     std::string_view absentBool = "");

}  // namespace berth::apiserver
