#pragma once
// kube-apiserver's --token-auth-file: static bearer tokens in a CSV file, one a line:
// token,user,uid[,"group1,group2"], so that no token needs to be on a command line.

#include <string>
#include <string_view>
#include <vector>

#include "pkg/util/result.h"

namespace berth::apiserver {

struct StaticToken {
  std::string token;
  std::string user;
  std::string uid;
  std::vector<std::string> groups;
};

// The records of `text` (the content of `path`, which errors name), read as Go's encoding/csv
// reads them (quoted fields, "" inside quotes, blank lines skipped); a record with fewer than 3
// fields is an error, as upstream's; a record with an empty token is skipped. Later duplicates
// win, as upstream's map does.
util::Result<std::vector<StaticToken>> parseTokenFile(std::string_view text,
                                                      const std::string& path);

}  // namespace berth::apiserver
