// NodeAffinityArgs as in kube-scheduler's v1 types and validation_pluginargs.go.

#include "pkg/plugins/nodeaffinity/args.h"

#include "pkg/labels/requirement.h"
#include "pkg/util/quote.h"

namespace berth::plugins::nodeaffinity {
namespace {

using config::child;
using config::Decoder;
using config::index;
using config::Json;

std::optional<api::NodeSelectorOperator> selectorOperator(std::string_view s) {
  using Op = api::NodeSelectorOperator;
  static const std::pair<std::string_view, Op> kOps[] = {
      {"In", Op::In},         {"NotIn", Op::NotIn},
      {"Exists", Op::Exists}, {"DoesNotExist", Op::DoesNotExist},
      {"Gt", Op::Gt},         {"Lt", Op::Lt}};
  for (const auto& [name, op] : kOps) {
    if (name == s) {
      return op;
    }
  }
  return std::nullopt;
}

// One requirement of matchExpressions (labels) or matchFields (node fields), validated as
// upstream's nodeaffinity helpers do when they parse it.
api::NodeSelectorRequirement decodeRequirement(Decoder& d, const Json& j, const std::string& path,
                                               bool fieldSelector) {
  using Op = api::NodeSelectorOperator;
  api::NodeSelectorRequirement req;
  std::optional<std::string> key;
  std::optional<std::string> op;
  d.object(
      j, path,
      {{"key", [&](const Json& v, const std::string& p) { key = d.string(v, p); }},
       {"operator", [&](const Json& v, const std::string& p) { op = d.string(v, p); }},
       {"values", [&](const Json& v, const std::string& p) { req.values = d.strings(v, p); }}});
  if (d.failed()) {
    return req;
  }
  req.key = key.value_or("");
  auto parsed = selectorOperator(op.value_or(""));
  std::string opPath = child(path, "operator");
  std::string valuesPath = child(path, "values");
  if (fieldSelector) {
    if (!parsed || (*parsed != Op::In && *parsed != Op::NotIn)) {
      d.fail(opPath, "unsupported value " + util::quoteGo(op.value_or("")) +
                         ", supported values: \"In\", \"NotIn\"");
      return req;
    }
    req.op = *parsed;
    if (req.key != "metadata.name") {
      d.fail(child(path, "key"), "unsupported value " + util::quoteGo(req.key) +
                                     ", supported values: \"metadata.name\"");
    } else if (req.values.size() != 1) {
      d.fail(valuesPath, "must have one element");
    }
    return req;
  }
  if (!parsed) {
    d.fail(opPath, "unsupported value " + util::quoteGo(op.value_or("")) +
                       ", supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", "
                       "\"Gt\", \"Lt\"");
    return req;
  }
  req.op = *parsed;
  std::optional<labels::RequirementProblem> problem = labels::firstRequirementProblem(req);
  if (!problem) {
    return req;
  }
  const size_t i = problem->value;
  switch (problem->rule) {
    case labels::RequirementProblem::Rule::BadKey:
      d.fail(child(path, "key"), "invalid label key " + util::quoteGo(req.key) + ": " +
                                     config::qualifiedNameProblem(req.key).value_or(""));
      break;
    case labels::RequirementProblem::Rule::ValuesRequired:
      d.fail(valuesPath, "for 'in', 'notin' operators, values set can't be empty");
      break;
    case labels::RequirementProblem::Rule::ValuesForbidden:
      d.fail(valuesPath, "values set must be empty for exists and does not exist");
      break;
    case labels::RequirementProblem::Rule::OneValueRequired:  // Gt, Lt: the only such node ops
      d.fail(valuesPath, "for 'Gt', 'Lt' operators, exactly one value is required");
      break;
    case labels::RequirementProblem::Rule::NotAnInteger:
      d.fail(index(valuesPath, i), "for 'Gt', 'Lt' operators, the value must be an integer");
      break;
    case labels::RequirementProblem::Rule::BadValue:
      d.fail(index(valuesPath, i), "invalid label value " + util::quoteGo(req.values[i]) + ": " +
                                       config::labelValueProblem(req.values[i]).value_or(""));
      break;
  }
  return req;
}

api::NodeSelectorTerm decodeTerm(Decoder& d, const Json& j, const std::string& path) {
  api::NodeSelectorTerm term;
  auto requirements = [&d](std::vector<api::NodeSelectorRequirement>& out, bool fields) {
    return [&d, &out, fields](const Json& v, const std::string& p) {
      d.list(v, p, [&](const Json& item, const std::string& ip) {
        out.push_back(decodeRequirement(d, item, ip, fields));
      });
    };
  };
  d.object(j, path,
           {{"matchExpressions", requirements(term.matchExpressions, false)},
            {"matchFields", requirements(term.matchFields, true)}});
  return term;
}

api::NodeSelector decodeNodeSelector(Decoder& d, const Json& j, const std::string& path) {
  api::NodeSelector selector;
  bool given = false;
  d.object(j, path, {{"nodeSelectorTerms", [&](const Json& v, const std::string& p) {
                        given = true;
                        d.list(v, p, [&](const Json& item, const std::string& ip) {
                          selector.nodeSelectorTerms.push_back(decodeTerm(d, item, ip));
                        });
                      }}});
  // A required selector without terms matches no node at all; pod validation rejects it too.
  if (!d.failed() && selector.nodeSelectorTerms.empty()) {
    d.fail(child(path, "nodeSelectorTerms"),
           given ? "must have at least one node selector term" : "required");
  }
  return selector;
}

api::PreferredSchedulingTerm decodePreferredTerm(Decoder& d, const Json& j,
                                                 const std::string& path) {
  api::PreferredSchedulingTerm term;
  bool weighted = false;
  d.object(j, path,
           {{"weight",
             [&](const Json& v, const std::string& p) {
               if (auto w = d.int32(v, p)) {
                 term.weight = *w;
                 weighted = true;
               }
             }},
            {"preference",
             [&](const Json& v, const std::string& p) { term.preference = decodeTerm(d, v, p); }}});
  // Upstream skips terms weighted 0; berth refuses them rather than ignore them silently.
  if (!d.failed() && (!weighted || term.weight < 1 || term.weight > 100)) {
    d.fail(child(path, "weight"),
           weighted ? "must be in the range [1, 100], got " + std::to_string(term.weight)
                    : std::string("required, in the range [1, 100]"));
  }
  return term;
}

}  // namespace

void decodeNodeAffinityArgs(Decoder& d, const Json& j, const std::string& path,
                            NodeAffinityArgs& out) {
  std::vector<Decoder::Field> fields = config::typeMetaFields(d, "NodeAffinityArgs");
  fields.push_back({"addedAffinity", [&](const Json& v, const std::string& p) {
                      api::NodeAffinity affinity;
                      d.object(
                          v, p,
                          {{"requiredDuringSchedulingIgnoredDuringExecution",
                            [&](const Json& rv, const std::string& rp) {
                              affinity.requiredDuringSchedulingIgnoredDuringExecution =
                                  decodeNodeSelector(d, rv, rp);
                            }},
                           {"preferredDuringSchedulingIgnoredDuringExecution",
                            [&](const Json& pv, const std::string& pp) {
                              d.list(pv, pp, [&](const Json& item, const std::string& ip) {
                                affinity.preferredDuringSchedulingIgnoredDuringExecution.push_back(
                                    decodePreferredTerm(d, item, ip));
                              });
                            }}});
                      out.addedAffinity = std::move(affinity);
                    }});
  d.object(j, path, fields);
}

}  // namespace berth::plugins::nodeaffinity
