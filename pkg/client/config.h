#pragma once
// Client configuration: where the API server is and how berth proves who it is, read from a
// kubeconfig file (as kubectl and client-go read it) or from the pod's service account
// (in-cluster). File and environment access are injected, so these rules run without a filesystem.
// berth supports certificates, tokens, token files and exec credential plugins; a kubeconfig user
// that needs an auth-provider plugin, basic authentication or impersonation is rejected, never
// half-applied. Several files ($KUBECONFIG) merge as kubectl merges them.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/client/exec_credential.h"
#include "pkg/util/result.h"

namespace berth::client {

// Reads a file of at most `maxBytes`; the error message says why it could not (e.g. "No such file
// or directory", or that the file is larger than the limit).
using FileReader =
    std::function<util::Result<std::string>(const std::string& path, size_t maxBytes)>;
// The FileReader of the real file system. A regular file larger than `maxBytes` is refused after a
// stat, unread, and no more than maxBytes + 1 bytes are read of any file, so one that never ends
// (/dev/zero as a tokenFile) or grows while read cannot exhaust memory.
util::Result<std::string> readFileAtMost(const std::string& path, size_t maxBytes);
// The limit for the kubeconfig and the certificates, keys and kubeconfigs it names (token files
// have kMaxTokenFileBytes): far above any real one.
inline constexpr size_t kMaxConfigFileBytes = 16 * 1024 * 1024;
// Returns an environment variable, empty when unset (as Go's os.Getenv).
using Env = std::function<std::string(const std::string& name)>;
// Whether a file exists (kubectl skips $KUBECONFIG entries that do not).
using FileExists = std::function<bool(const std::string& path)>;

inline constexpr std::string_view kServiceAccountTokenPath =
    "/var/run/secrets/kubernetes.io/serviceaccount/token";
inline constexpr std::string_view kServiceAccountCAPath =
    "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";

// "berth/VERSION", sent as User-Agent.
std::string defaultUserAgent();

struct RestConfig {
  std::string server;  // "https://host:port" or "http://...", possibly with a path prefix
  std::string caPem;   // trusted roots; empty means the system's roots
  bool insecureSkipTLSVerify = false;  // only when the kubeconfig says so (see warnings)
  std::string tlsServerName;           // name to verify instead of the server's host
  std::string clientCertPem;
  std::string clientKeyPem;
  std::string bearerToken;
  // When set, bearerToken was read from this file; the client re-reads it when it changes, since
  // bound service-account tokens rotate.
  std::string tokenFile;
  // A user whose credentials come from an exec plugin; run by the client, which caches them.
  std::optional<ExecConfig> exec;
  // The context's namespace (kubectl's default for -n); empty when the context sets none.
  std::string namespace_;
  std::string userAgent = defaultUserAgent();
  float qps = 50;  // kube-scheduler's client defaults
  int burst = 100;
  // Things the caller should log once at startup (insecure TLS, an unreadable in-cluster CA...).
  std::vector<std::string> warnings;
};

// Reads the kubeconfig `text` found at `path` (used in messages and to resolve relative file
// references against its directory, as client-go does), for `context`, or its current-context
// when `context` is empty. Errors name the file and the field:
//   kubeconfig /x/config: contexts[1].context.cluster: cluster "foo" not found
util::Result<RestConfig> loadKubeconfig(std::string_view text, std::string_view path,
                                        std::string_view context, const FileReader& read);

// One kubeconfig file's path and content.
struct KubeconfigFile {
  std::string path;
  std::string text;
};

// Several kubeconfigs merged as kubectl merges $KUBECONFIG: the first file to set a value or a
// map key (a cluster, user or context name) wins, and an entry is never combined with a later
// file's entry of the same name; each file's relative paths resolve against its own directory.
// Errors name the file the failing entry came from.
util::Result<RestConfig> loadKubeconfigs(const std::vector<KubeconfigFile>& files,
                                         std::string_view context, const FileReader& read);

// Where kubectl looks when no --kubeconfig is given: $KUBECONFIG's files (split on ':', empty
// and repeated entries dropped), or else $HOME/.kube/config.
std::vector<std::string> kubeconfigSearchPaths(const Env& getenv);

// kubectl's loading rules over `paths` (kubeconfigSearchPaths): the files that exist, merged.
// NotFound when none exists, naming where it looked.
util::Result<RestConfig> loadKubeconfigFiles(const std::vector<std::string>& paths,
                                             std::string_view context, const FileReader& read,
                                             const FileExists& exists);

// The configuration of a pod's service account: KUBERNETES_SERVICE_HOST/PORT, the token file
// (kept as tokenFile) and ca.crt. Fails with NotFound when not running in a cluster.
util::Result<RestConfig> inClusterConfig(const Env& getenv, const FileReader& read);

}  // namespace berth::client
