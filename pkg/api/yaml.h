#pragma once
// JSON or YAML text to JSON values, for cluster files (as kubectl reads them) and for berth's
// configuration (as kube-scheduler reads it). Both go through sigs.k8s.io/yaml, so one converter
// serves both; the configuration only adds strictness. YAML is resolved as goyaml.v2 resolves
// plain scalars when built with Go >= 1.13, then typed by encoding/json's rules:
//   - 2, 0x10, 0o17, 017, 0b11 and 1_000 are integers (strconv.ParseInt base 0: 0o17 and 017 are
//     both 15); 2.0 and 1e3 are integers too, as the JSON encoding writes them without a fraction;
//     an integer above int64's range but within uint64's is an unsigned integer, beyond that a
//     float; .inf and .nan are errors (JSON has no infinity).
//   - yes/no/on/off/y/n (any case variant goyaml.v2 lists) are booleans, ~ and null are null.
//   - quoted and block scalars and !!str are strings; a map key becomes its string form ("1",
//     "true"); "<<" merges mappings.
//   - text that is not UTF-8, or holds control characters, is an error, as in goyaml.v2.
// A key given twice in one mapping keeps the last value, as kubectl does, unless the options ask
// for strict decoding (kube-scheduler's), which makes it the error "path: duplicate field".

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "pkg/util/result.h"

namespace berth::api {

struct ParseOptions {
  bool reject_duplicate_keys = false;
};

// A single JSON value (text starting with '{' or '['), or a multi-document YAML stream whose empty
// documents are skipped.
util::Result<std::vector<nlohmann::json>> parseDocuments(std::string_view text,
                                                         const ParseOptions& options = {});

// Exactly one document, keys in the order written (so that the first error reported is the first
// in the file). Empty text is null; several YAML documents are an error.
util::Result<nlohmann::ordered_json> parseOneDocument(std::string_view text,
                                                      const ParseOptions& options = {});

}  // namespace berth::api
