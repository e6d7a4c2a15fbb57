#include <string>
#include <vector>

#include "pkg/labels/selector.h"

// Taint toleration as k8s.io/api/core/v1 Toleration.ToleratesTaint (the GA operators).

namespace berth::labels {

bool tolerates(const api::Toleration& toleration, const api::Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) {
    return false;
  }
  if (!toleration.key.empty() && toleration.key != taint.key) {
    return false;
  }
  // Lt/Gt (KEP-5471, alpha in 1.35 behind TaintTolerationComparisonOperators) are not supported:
  // with the gate off upstream treats them like any unknown operator.
  const std::string& op = toleration.operator_;
  if (op.empty() || op == "Equal") {
    return toleration.value == taint.value;
  }
  return op == "Exists";
}

bool toleratesAny(const std::vector<api::Toleration>& tolerations, const api::Taint& taint) {
  for (const api::Toleration& toleration : tolerations) {
    if (tolerates(toleration, taint)) {
      return true;
    }
  }
  return false;
}

}  // namespace berth::labels
