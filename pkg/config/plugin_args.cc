// Plugin arguments: NodeResourcesFitArgs, NodeResourcesBalancedAllocationArgs and NodeAffinityArgs
// as in kube-scheduler's v1 types, defaults.go and validation_pluginargs.go.

#include <charconv>
#include <set>

#include "pkg/config/internal/decoder.h"
#include "pkg/util/quote.h"

namespace berth::config::internal {
namespace {

constexpr int32_t kMaxCustomPriorityScore = 10;  // upstream's shape score bound
constexpr int64_t kMaxResourceWeight = 100;

// apiVersion and kind may be given in args; they must name this plugin's args type.
std::vector<Decoder::Field> typeMetaFields(Decoder& d, const std::string& kind) {
  return {
      {"apiVersion",
       [&d](const Json& v, const std::string& p) {
         auto s = d.string(v, p);
         if (s && *s != kApiVersion) {
           d.fail(p, "must be \"" + std::string(kApiVersion) + "\", got " + describe(v));
         }
       }},
      {"kind",
       [&d, kind](const Json& v, const std::string& p) {
         auto s = d.string(v, p);
         if (s && *s != kind) {
           d.fail(p, "must be \"" + kind + "\", got " + describe(v));
         }
       }},
  };
}

// ResourceSpec list; a weight of 0 or none means 1 (upstream's defaulting).
std::vector<ResourceSpec> decodeResources(Decoder& d, const Json& j, const std::string& path) {
  std::vector<ResourceSpec> out;
  std::set<std::string> seen;
  d.list(j, path, [&](const Json& item, const std::string& p) {
    ResourceSpec spec;
    spec.weight = 0;
    bool named = false;
    d.object(item, p,
             {{"name",
               [&](const Json& v, const std::string& fp) {
                 if (auto s = d.string(v, fp)) {
                   spec.name = *s;
                   named = true;
                 }
               }},
              {"weight", [&](const Json& v, const std::string& fp) {
                 if (auto w = d.int64(v, fp)) {
                   spec.weight = *w;
                 }
               }}});
    if (d.failed()) {
      return;
    }
    if (!named || spec.name.empty()) {
      d.fail(child(p, "name"), "required");
      return;
    }
    if (!seen.insert(spec.name).second) {
      d.fail(child(p, "name"), "duplicate resource \"" + spec.name + "\"");
      return;
    }
    if (spec.weight == 0) {
      spec.weight = 1;
    }
    out.push_back(std::move(spec));
  });
  return out;
}

std::vector<UtilizationShapePoint> decodeShape(Decoder& d, const Json& j, const std::string& path) {
  std::vector<UtilizationShapePoint> shape;
  d.list(j, path, [&](const Json& item, const std::string& p) {
    UtilizationShapePoint point;
    d.object(item, p,
             {{"utilization",
               [&](const Json& v, const std::string& fp) {
                 if (auto u = d.int32(v, fp)) {
                   point.utilization = *u;
                 }
               }},
              {"score", [&](const Json& v, const std::string& fp) {
                 if (auto s = d.int32(v, fp)) {
                   point.score = *s;
                 }
               }}});
    shape.push_back(point);
  });
  if (d.failed()) {
    return shape;
  }
  if (shape.empty()) {
    d.fail(path, "at least one point must be specified");
    return shape;
  }
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      d.fail(child(index(path, i), "utilization"), "values must be sorted in increasing order");
      return shape;
    }
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].utilization < 0 || shape[i].utilization > 100) {
      d.fail(child(index(path, i), "utilization"),
             "not in valid range [0, 100], got " + std::to_string(shape[i].utilization));
      return shape;
    }
    if (shape[i].score < 0 || shape[i].score > kMaxCustomPriorityScore) {
      d.fail(child(index(path, i), "score"), "not in valid range [0, " +
                                                 std::to_string(kMaxCustomPriorityScore) +
                                                 "], got " + std::to_string(shape[i].score));
      return shape;
    }
  }
  return shape;
}

std::optional<ScoringStrategy::Type> strategyType(std::string_view s) {
  if (s == "LeastAllocated") {
    return ScoringStrategy::Type::LeastAllocated;
  }
  if (s == "MostAllocated") {
    return ScoringStrategy::Type::MostAllocated;
  }
  if (s == "RequestedToCapacityRatio") {
    return ScoringStrategy::Type::RequestedToCapacityRatio;
  }
  return std::nullopt;
}

ScoringStrategy decodeScoringStrategy(Decoder& d, const Json& j, const std::string& path) {
  ScoringStrategy out;
  std::optional<std::string> type;
  std::optional<std::vector<UtilizationShapePoint>> ratioShape;
  std::string ratioPath = child(path, "requestedToCapacityRatio");
  d.object(j, path,
           {{"type", [&](const Json& v, const std::string& p) { type = d.string(v, p); }},
            {"resources", [&](const Json& v,
                              const std::string& p) { out.resources = decodeResources(d, v, p); }},
            {"requestedToCapacityRatio", [&](const Json& v, const std::string& p) {
               ratioShape.emplace();
               d.object(v, p, {{"shape", [&](const Json& sv, const std::string& sp) {
                                  *ratioShape = decodeShape(d, sv, sp);
                                }}});
             }}});
  if (d.failed()) {
    return out;
  }
  const char* kSupported = "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"";
  auto parsed = strategyType(type.value_or(""));
  if (!parsed) {
    d.fail(child(path, "type"),
           type ? "unsupported value " + util::quoteGo(*type) + ", supported values: " + kSupported
                : std::string("required, one of ") + kSupported);
    return out;
  }
  out.type = *parsed;
  if (out.resources.empty()) {
    out.resources = defaultResources();
  }
  for (size_t i = 0; i < out.resources.size(); ++i) {
    const ResourceSpec& r = out.resources[i];
    if (r.weight <= 0 || r.weight > kMaxResourceWeight) {
      d.fail(child(index(child(path, "resources"), i), "weight"),
             "resource weight of " + r.name + " not in valid range (0, 100], got " +
                 std::to_string(r.weight));
      return out;
    }
  }
  if (out.type == ScoringStrategy::Type::RequestedToCapacityRatio) {
    if (!ratioShape) {
      d.fail(ratioPath, "required when type is RequestedToCapacityRatio");
    } else if (ratioShape->empty()) {
      d.fail(child(ratioPath, "shape"), "at least one point must be specified");
    } else {
      out.shape = *ratioShape;
    }
  } else if (ratioShape) {
    d.fail(ratioPath, "must not be set when type is not RequestedToCapacityRatio");
  }
  return out;
}

// --- Node affinity -------------------------------------------------------------------------------

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

// Go's strconv.ParseInt(s, 10, 64): an optional sign and decimal digits that fit in 64 bits.
bool isInt64(std::string_view s) {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') {
      return false;
    }
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
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
  if (auto problem = qualifiedNameProblem(req.key)) {
    d.fail(child(path, "key"), "invalid label key " + util::quoteGo(req.key) + ": " + *problem);
    return req;
  }
  switch (req.op) {
    case Op::In:
    case Op::NotIn:
      if (req.values.empty()) {
        d.fail(valuesPath, "for 'in', 'notin' operators, values set can't be empty");
      }
      break;
    case Op::Exists:
    case Op::DoesNotExist:
      if (!req.values.empty()) {
        d.fail(valuesPath, "values set must be empty for exists and does not exist");
      }
      break;
    case Op::Gt:
    case Op::Lt:
      if (req.values.size() != 1) {
        d.fail(valuesPath, "for 'Gt', 'Lt' operators, exactly one value is required");
      } else if (!isInt64(req.values[0])) {
        d.fail(index(valuesPath, 0), "for 'Gt', 'Lt' operators, the value must be an integer");
      }
      break;
  }
  for (size_t i = 0; i < req.values.size() && !d.failed(); ++i) {
    if (auto problem = labelValueProblem(req.values[i])) {
      d.fail(index(valuesPath, i),
             "invalid label value " + util::quoteGo(req.values[i]) + ": " + *problem);
    }
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

std::vector<ResourceSpec> defaultResources() {
  return {ResourceSpec{"cpu", 1}, ResourceSpec{"memory", 1}};
}

void decodeNodeResourcesFitArgs(Decoder& d, const Json& j, const std::string& path,
                                NodeResourcesFitArgs& out) {
  std::vector<Decoder::Field> fields = typeMetaFields(d, "NodeResourcesFitArgs");
  fields.push_back({"ignoredResources", [&](const Json& v, const std::string& p) {
                      out.ignoredResources = d.strings(v, p);
                      for (size_t i = 0; i < out.ignoredResources.size() && !d.failed(); ++i) {
                        if (auto problem = qualifiedNameProblem(out.ignoredResources[i])) {
                          d.fail(index(p, i), "invalid resource name " +
                                                  util::quoteGo(out.ignoredResources[i]) + ": " +
                                                  *problem);
                        }
                      }
                    }});
  fields.push_back({"ignoredResourceGroups", [&](const Json& v, const std::string& p) {
                      out.ignoredResourceGroups = d.strings(v, p);
                      for (size_t i = 0; i < out.ignoredResourceGroups.size() && !d.failed(); ++i) {
                        const std::string& group = out.ignoredResourceGroups[i];
                        if (group.find('/') != std::string::npos) {
                          d.fail(index(p, i), "resource group name can't contain '/', got " +
                                                  util::quoteGo(group));
                        } else if (auto problem = qualifiedNameProblem(group)) {
                          d.fail(index(p, i), "invalid resource group name " +
                                                  util::quoteGo(group) + ": " + *problem);
                        }
                      }
                    }});
  fields.push_back({"scoringStrategy", [&](const Json& v, const std::string& p) {
                      out.scoringStrategy = decodeScoringStrategy(d, v, p);
                    }});
  d.object(j, path, fields);
}

void decodeNodeResourcesBalancedAllocationArgs(Decoder& d, const Json& j, const std::string& path,
                                               NodeResourcesBalancedAllocationArgs& out) {
  std::vector<Decoder::Field> fields = typeMetaFields(d, "NodeResourcesBalancedAllocationArgs");
  fields.push_back({"resources", [&](const Json& v, const std::string& p) {
                      out.resources = decodeResources(d, v, p);
                      for (size_t i = 0; i < out.resources.size() && !d.failed(); ++i) {
                        if (out.resources[i].weight != 1) {
                          d.fail(child(index(p, i), "weight"),
                                 "must be 1, got " + std::to_string(out.resources[i].weight));
                        }
                      }
                    }});
  d.object(j, path, fields);
  if (out.resources.empty()) {
    out.resources = defaultResources();
  }
}

void decodeNodeAffinityArgs(Decoder& d, const Json& j, const std::string& path,
                            NodeAffinityArgs& out) {
  std::vector<Decoder::Field> fields = typeMetaFields(d, "NodeAffinityArgs");
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

}  // namespace berth::config::internal
