// PodTopologySpreadArgs as in kube-scheduler's v1 types (SetDefaults_PodTopologySpreadArgs) and
// validation_pluginargs.go (ValidatePodTopologySpreadArgs), with its messages.

#include "pkg/plugins/podtopologyspread/args.h"

#include "pkg/util/quote.h"

namespace berth::plugins::podtopologyspread {
namespace {

using config::child;
using config::Decoder;
using config::index;
using config::Json;

// One default constraint; `hasSelector` tells whether it gave a labelSelector (which is forbidden).
api::TopologySpreadConstraint decodeDefaultConstraint(Decoder& d, const Json& j,
                                                      const std::string& path, bool& hasSelector) {
  api::TopologySpreadConstraint c;
  auto str = [&d](std::string& out) {
    return [&d, &out](const Json& v, const std::string& p) { out = d.string(v, p).value_or(""); };
  };
  auto optStr = [&d](std::optional<std::string>& out) {
    return [&d, &out](const Json& v, const std::string& p) { out = d.string(v, p); };
  };
  d.object(
      j, path,
      {{"maxSkew",
        [&](const Json& v, const std::string& p) { c.maxSkew = d.int32(v, p).value_or(0); }},
       {"topologyKey", str(c.topologyKey)},
       {"whenUnsatisfiable", str(c.whenUnsatisfiable)},
       {"labelSelector", [&](const Json&, const std::string&) { hasSelector = true; }},
       {"minDomains", [&](const Json& v, const std::string& p) { c.minDomains = d.int32(v, p); }},
       {"nodeAffinityPolicy", optStr(c.nodeAffinityPolicy)},
       {"nodeTaintsPolicy", optStr(c.nodeTaintsPolicy)},
       {"matchLabelKeys",
        [&](const Json& v, const std::string& p) { c.matchLabelKeys = d.strings(v, p); }}});
  return c;
}

void validateDefaultConstraint(Decoder& d, const std::vector<api::TopologySpreadConstraint>& all,
                               size_t i, bool hasSelector, const std::string& listPath) {
  const api::TopologySpreadConstraint& c = all[i];
  const std::string path = index(listPath, i);
  if (c.maxSkew <= 0) {
    d.fail(child(path, "maxSkew"),
           "invalid value " + std::to_string(c.maxSkew) + ": not in valid range (0, inf)");
  }
  if (c.topologyKey.empty()) {
    d.fail(child(path, "topologyKey"), "required: can not be empty");
  } else if (auto problem = config::qualifiedNameProblem(c.topologyKey)) {
    d.fail(child(path, "topologyKey"),
           "invalid value " + util::quoteGo(c.topologyKey) + ": " + *problem);
  }
  if (c.whenUnsatisfiable.empty()) {
    d.fail(child(path, "whenUnsatisfiable"), "required: can not be empty");
  } else if (c.whenUnsatisfiable != "DoNotSchedule" && c.whenUnsatisfiable != "ScheduleAnyway") {
    d.fail(child(path, "whenUnsatisfiable"),
           "unsupported value " + util::quoteGo(c.whenUnsatisfiable) +
               ", supported values: \"DoNotSchedule\", \"ScheduleAnyway\"");
  }
  if (hasSelector) {
    d.fail(child(path, "labelSelector"),
           "forbidden: constraint must not define a selector, as they deduced for each pod");
  }
  for (size_t k = 0; k < i; ++k) {
    if (all[k].topologyKey == c.topologyKey && all[k].whenUnsatisfiable == c.whenUnsatisfiable) {
      d.fail(path, "duplicate value \"{" + c.topologyKey + ", " + c.whenUnsatisfiable + "}\"");
      break;
    }
  }
}

}  // namespace

void decodePodTopologySpreadArgs(Decoder& d, const Json& j, const std::string& path,
                                 PodTopologySpreadArgs& out) {
  std::vector<bool> selectors;
  std::optional<std::string> type;
  std::vector<Decoder::Field> fields = config::typeMetaFields(d, "PodTopologySpreadArgs");
  fields.push_back({"defaultConstraints", [&](const Json& v, const std::string& p) {
                      d.list(v, p, [&](const Json& item, const std::string& ip) {
                        bool hasSelector = false;
                        out.defaultConstraints.push_back(
                            decodeDefaultConstraint(d, item, ip, hasSelector));
                        selectors.push_back(hasSelector);
                      });
                    }});
  fields.push_back(
      {"defaultingType", [&](const Json& v, const std::string& p) { type = d.string(v, p); }});
  d.object(j, path, fields);
  if (d.failed()) return;
  // Upstream defaults an empty defaultingType to System.
  if (type && !type->empty()) out.defaultingType = *type;
  const std::string typePath = child(path, "defaultingType");
  if (out.defaultingType != kSystemDefaulting && out.defaultingType != kListDefaulting) {
    d.fail(typePath, "unsupported value " + util::quoteGo(out.defaultingType) +
                         ", supported values: \"System\", \"List\"");
  } else if (out.defaultingType == kSystemDefaulting && !out.defaultConstraints.empty()) {
    d.fail(typePath, "invalid value \"System\": when .defaultConstraints are not empty");
  }
  const std::string listPath = child(path, "defaultConstraints");
  for (size_t i = 0; i < out.defaultConstraints.size(); ++i) {
    validateDefaultConstraint(d, out.defaultConstraints, i, selectors[i], listPath);
  }
}

}  // namespace berth::plugins::podtopologyspread
