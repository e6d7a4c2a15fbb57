// kubeconfig parsing: the file named by --kubeconfig (YAML or JSON), for its current context and
// for a named one. Files it references are served from memory: a path containing "missing" does
// not exist, any other reads as a short PEM-looking text, so both branches of every file
// reference are reachable without a filesystem.

#include <string>

#include "fuzz/fuzz_check.h"
#include "pkg/client/config.h"

namespace client = berth::client;
namespace util = berth::util;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = berth::fuzz::asText(data, size);
  const client::FileReader read = [](const std::string& path,
                                     size_t /*maxBytes*/) -> util::Result<std::string> {
    if (path.find("missing") != std::string::npos) {
      return util::Error{util::ErrorCode::NotFound, "open " + path + ": no such file or directory"};
    }
    return "-----BEGIN CERTIFICATE-----\n" + path + "\n-----END CERTIFICATE-----\n";
  };
  for (const std::string_view context : {"", "fuzz"}) {
    const auto config = client::loadKubeconfig(text, "/home/fuzz/.kube/config", context, read);
    static_cast<void>(config.ok());
  }
  return 0;
}
