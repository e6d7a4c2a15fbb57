// NodeResourcesFitArgs and NodeResourcesBalancedAllocationArgs as in kube-scheduler's v1 types,
// defaults.go and validation_pluginargs.go.

#include "pkg/plugins/noderesources/args.h"

#include <set>

#include "pkg/framework/resource.h"
#include "pkg/util/quote.h"

namespace berth::plugins::noderesources {
namespace {

using config::child;
using config::Decoder;
using config::index;
using config::Json;

constexpr int64_t kMaxResourceWeight = 100;

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

}  // namespace

std::vector<ResourceSpec> defaultResources() {
  return {{std::string(framework::kCPU), 1}, {std::string(framework::kMemory), 1}};
}

void decodeNodeResourcesFitArgs(Decoder& d, const Json& j, const std::string& path,
                                NodeResourcesFitArgs& out) {
  std::vector<Decoder::Field> fields = config::typeMetaFields(d, "NodeResourcesFitArgs");
  fields.push_back({"ignoredResources", [&](const Json& v, const std::string& p) {
                      out.ignoredResources = d.strings(v, p);
                      for (size_t i = 0; i < out.ignoredResources.size() && !d.failed(); ++i) {
                        if (auto problem = config::qualifiedNameProblem(out.ignoredResources[i])) {
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
                        } else if (auto problem = config::qualifiedNameProblem(group)) {
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
  std::vector<Decoder::Field> fields =
      config::typeMetaFields(d, "NodeResourcesBalancedAllocationArgs");
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

}  // namespace berth::plugins::noderesources
