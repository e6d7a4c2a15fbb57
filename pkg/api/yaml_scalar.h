#pragma once
// Plain YAML scalars resolved as goyaml.v2's resolve() does (what sigs.k8s.io/yaml, and so kubectl
// and kube-scheduler, read): null, bools, Go-syntax integers (0x, 0o, 0b, leading-0 octal), floats,
// else a string. Used by the YAML-to-JSON converter (yaml.cc).

#include <cstdint>
#include <string>

namespace berth::api::yaml_scalar {

struct Scalar {
  enum class Kind { Null, Bool, Int, Uint, Float, String };
  Kind kind = Kind::String;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
};

// The typed value of a plain (unquoted) scalar.
Scalar resolvePlain(const std::string& in);

// Go's strconv.FormatFloat(v, 'g', -1, 32), which sigs.k8s.io/yaml uses for float map keys.
std::string formatFloatKey(double v);

}  // namespace berth::api::yaml_scalar
