#include "pkg/client/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/client/token_source.h"

namespace berth::client {
namespace {

constexpr std::string_view kCaPem = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
constexpr std::string_view kCertPem =
    "-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n";
constexpr std::string_view kKeyPem =
    "-----BEGIN EC PRIVATE KEY-----\nKEY\n-----END EC PRIVATE KEY-----\n";
// The three PEMs above, base64-encoded as kubectl writes *-data fields.
constexpr std::string_view kCaData =
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K";
constexpr std::string_view kCertData =
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNMSUVOVAotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==";
constexpr std::string_view kKeyData =
    "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCktFWQotLS0tLUVORCBFQyBQUklWQVRFIEtFWS0tLS0tCg==";

// A fake filesystem that also records what was read.
struct FakeFiles {
  std::map<std::string, std::string> files;
  std::vector<std::string> reads;
  std::map<std::string, size_t> limits;  // the size limit each path was read with

  FileReader reader() {
    return [this](const std::string& path, size_t maxBytes) -> util::Result<std::string> {
      reads.push_back(path);
      limits[path] = maxBytes;
      const auto it = files.find(path);
      if (it == files.end()) {
        return util::Error{util::ErrorCode::NotFound, "no such file or directory"};
      }
      return it->second;
    };
  }
};

FakeFiles standardFiles() {
  FakeFiles fs;
  fs.files = {{"/home/u/.kube/ca.crt", std::string(kCaPem)},
              {"/home/u/.kube/certs/client.crt", std::string(kCertPem)},
              {"/home/u/.kube/certs/client.key", std::string(kKeyPem)},
              {"/home/u/.kube/token", "file-token\n"},
              {"/etc/kube/ca.crt", std::string(kCaPem)},
              {"/home/u/.kube/empty-token", " \n"},
              {"/home/u/.kube/huge-token", std::string(kMaxTokenFileBytes + 1, 't')},
              {"/home/u/.kube/not-pem", "hello"}};
  return fs;
}

// One line per config, with PEM contents named, so expectations read as sentences.
std::string render(const RestConfig& c) {
  auto pem = [](const std::string& s) -> std::string {
    if (s.empty()) {
      return "-";
    }
    if (s == kCaPem) {
      return "CA";
    }
    if (s == kCertPem) {
      return "CERT";
    }
    if (s == kKeyPem) {
      return "KEY";
    }
    return "?" + s;
  };
  std::string out = "server=" + c.server + " ca=" + pem(c.caPem) + " cert=" + pem(c.clientCertPem) +
                    " key=" + pem(c.clientKeyPem) +
                    " token=" + (c.bearerToken.empty() ? "-" : c.bearerToken) +
                    " tokenFile=" + (c.tokenFile.empty() ? "-" : c.tokenFile);
  if (c.insecureSkipTLSVerify) {
    out += " insecure";
  }
  if (!c.tlsServerName.empty()) {
    out += " tlsServerName=" + c.tlsServerName;
  }
  return out;
}

// A kubeconfig with two contexts over one cluster and user list; `cluster` and `user` are the
// bodies (indented by 4) of the entries named "main" used by context "dev".
std::string kubeconfig(std::string_view cluster, std::string_view user,
                       std::string_view extra = "") {
  std::string text =
      "apiVersion: v1\n"
      "kind: Config\n"
      "current-context: dev\n"
      "clusters:\n"
      "- name: main\n"
      "  cluster:\n" +
      std::string(cluster) +
      "- name: other\n"
      "  cluster:\n"
      "    server: https://other.example:6443\n"
      "users:\n"
      "- name: main\n"
      "  user:\n" +
      std::string(user) +
      "- name: other\n"
      "  user:\n"
      "    token: other-token\n"
      "contexts:\n"
      "- name: dev\n"
      "  context:\n"
      "    cluster: main\n"
      "    user: main\n"
      "- name: prod\n"
      "  context:\n"
      "    cluster: other\n"
      "    user: other\n" +
      std::string(extra);
  return text;
}

constexpr std::string_view kPath = "/home/u/.kube/config";

std::string line(std::string_view key, std::string_view value) {
  return "    " + std::string(key) + ": " + std::string(value) + "\n";
}

TEST(Kubeconfig, ValidConfigurations) {
  const std::string server = line("server", "https://10.0.0.1:6443");
  struct Case {
    std::string_view name;
    std::string text;
    std::string_view context;
    std::string_view want;
  };
  const Case cases[] = {
      {"embedded data for the CA, client certificate and key",
       kubeconfig(server + line("certificate-authority-data", kCaData),
                  line("client-certificate-data", kCertData) + line("client-key-data", kKeyData)),
       "", "server=https://10.0.0.1:6443 ca=CA cert=CERT key=KEY token=- tokenFile=-"},
      {"files resolve against the kubeconfig's directory",
       kubeconfig(server + line("certificate-authority", "ca.crt"),
                  line("client-certificate", "certs/client.crt") +
                      line("client-key", "./certs/../certs/client.key")),
       "", "server=https://10.0.0.1:6443 ca=CA cert=CERT key=KEY token=- tokenFile=-"},
      {"absolute file references are used as they are",
       kubeconfig(server + line("certificate-authority", "/etc/kube/ca.crt"), line("token", "t")),
       "", "server=https://10.0.0.1:6443 ca=CA cert=- key=- token=t tokenFile=-"},
      {"a token file is read and trimmed, and kept for refreshes",
       kubeconfig(server, line("tokenFile", "token")), "",
       "server=https://10.0.0.1:6443 ca=- cert=- key=- token=file-token "
       "tokenFile=/home/u/.kube/token"},
      {"a token wins over a token file, which is kept but not read",
       kubeconfig(server, line("token", "static") + line("tokenFile", "missing")), "",
       "server=https://10.0.0.1:6443 ca=- cert=- key=- token=static "
       "tokenFile=/home/u/.kube/missing"},
      {"a token and a client certificate are both used",
       kubeconfig(server, line("token", "t") + line("client-certificate-data", kCertData) +
                              line("client-key", "certs/client.key")),
       "", "server=https://10.0.0.1:6443 ca=- cert=CERT key=KEY token=t tokenFile=-"},
      {"insecure-skip-tls-verify without a CA",
       kubeconfig(server + line("insecure-skip-tls-verify", "true"), line("token", "t")), "",
       "server=https://10.0.0.1:6443 ca=- cert=- key=- token=t tokenFile=- insecure"},
      {"tls-server-name and a server path prefix",
       kubeconfig(line("server", "https://lb.example/k8s/clusters/c1") +
                      line("tls-server-name", "kubernetes"),
                  line("token", "t")),
       "",
       "server=https://lb.example/k8s/clusters/c1 ca=- cert=- key=- token=t tokenFile=- "
       "tlsServerName=kubernetes"},
      {"--context overrides current-context", kubeconfig(server, line("exec", "{command: gcloud}")),
       "prod", "server=https://other.example:6443 ca=- cert=- key=- token=other-token tokenFile=-"},
      {"plain http drops TLS settings and credentials, as client-go",
       kubeconfig(
           line("server", "http://127.0.0.1:8080") + line("certificate-authority-data", kCaData),
           line("token", "t")),
       "", "server=http://127.0.0.1:8080 ca=- cert=- key=- token=- tokenFile=-"},
      {"a context without a user is anonymous",
       "clusters: [{name: c, cluster: {server: 'https://h:1'}}]\n"
       "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n",
       "", "server=https://h:1 ca=- cert=- key=- token=- tokenFile=-"},
      {"JSON, without apiVersion and kind",
       R"({"clusters":[{"name":"c","cluster":{"server":"https://h:1"}}],)"
       R"("users":[{"name":"u","user":{"token":"t"}}],)"
       R"("contexts":[{"name":"x","context":{"cluster":"c","user":"u"}}],"current-context":"x"})",
       "", "server=https://h:1 ca=- cert=- key=- token=t tokenFile=-"},
      {"unknown fields and sections are ignored",
       kubeconfig(server + line("disable-compression", "true") + line("future-field", "x"),
                  line("token", "t"),
                  "preferences: {colors: true}\n"
                  "extensions: [{name: e, extension: {a: 1}}]\n"),
       "", "server=https://10.0.0.1:6443 ca=- cert=- key=- token=t tokenFile=-"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeFiles fs = standardFiles();
    const util::Result<RestConfig> cfg = loadKubeconfig(c.text, kPath, c.context, fs.reader());
    ASSERT_TRUE(cfg.ok()) << cfg.error().message;
    EXPECT_EQ(render(*cfg), c.want);
    EXPECT_EQ(cfg->userAgent, defaultUserAgent());
    EXPECT_EQ(cfg->qps, 50.0f);
    EXPECT_EQ(cfg->burst, 100);
  }
}

TEST(Kubeconfig, RelativeReferencesFollowTheKubeconfigPath) {
  struct Case {
    std::string_view kubeconfigPath;
    std::string_view ref;
    std::string_view want;
  };
  const Case cases[] = {
      {"/home/u/.kube/config", "ca.crt", "/home/u/.kube/ca.crt"},
      {"/home/u/.kube/config", "../ca.crt", "/home/u/ca.crt"},
      {"/home/u/.kube/config", "/abs/ca.crt", "/abs/ca.crt"},
      {"/config", "ca.crt", "/ca.crt"},
      {"/config", "../../ca.crt", "/ca.crt"},
      {"config", "ca.crt", "ca.crt"},
      {"config", "../ca.crt", "../ca.crt"},
      {"./kube//config", "./certs/ca.crt", "kube/certs/ca.crt"},
      {"", "ca.crt", "ca.crt"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.kubeconfigPath) + " + " + std::string(c.ref));
    FakeFiles fs;
    fs.files[std::string(c.want)] = std::string(kCaPem);
    const std::string text = kubeconfig(
        line("server", "https://h:1") + line("certificate-authority", c.ref), line("token", "t"));
    const util::Result<RestConfig> cfg = loadKubeconfig(text, c.kubeconfigPath, "", fs.reader());
    ASSERT_TRUE(cfg.ok()) << cfg.error().message;
    EXPECT_EQ(fs.reads, std::vector<std::string>{std::string(c.want)});
  }
}

TEST(Kubeconfig, WarnsAboutInsecureTLS) {
  FakeFiles fs;
  const util::Result<RestConfig> cfg = loadKubeconfig(
      kubeconfig(line("server", "https://h:1") + line("insecure-skip-tls-verify", "true"),
                 line("token", "t")),
      kPath, "", fs.reader());
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->warnings,
            std::vector<std::string>{"cluster \"main\" sets insecure-skip-tls-verify: the API "
                                     "server's certificate will not be verified"});
}

TEST(Kubeconfig, WarnsWhenCredentialsAreDroppedForPlainHttp) {
  FakeFiles fs;
  const util::Result<RestConfig> cfg = loadKubeconfig(
      kubeconfig(line("server", "http://h:1"), line("token", "t")), kPath, "", fs.reader());
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->warnings, std::vector<std::string>{"server \"http://h:1\" is plain http: the "
                                                    "user's credentials are not sent"});
}

TEST(Kubeconfig, ErrorsNameTheFileAndTheField) {
  const std::string server = line("server", "https://h:1");
  const std::string token = line("token", "t");
  struct Case {
    std::string_view name;
    std::string text;
    std::string_view context;
    util::ErrorCode code;
    std::string_view want;
  };
  const Case cases[] = {
      {"empty file", "# nothing\n", "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: the file is empty"},
      {"invalid YAML", "clusters: [", "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: invalid YAML at line 1, column 1: end of sequence flow "
       "not found"},
      {"not an object", "- a\n", "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: must be a YAML or JSON object"},
      {"two documents", "kind: Config\n---\nkind: Config\n", "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: expected one document, found 2"},
      {"wrong kind", "kind: Pod\n", "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: kind: must be \"Config\", not \"Pod\""},
      {"wrong apiVersion", "apiVersion: v2\n", "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: apiVersion: must be \"v1\", not \"v2\""},
      {"no current-context and no --context", "clusters: []\n", "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: current-context: not set, and no --context was given"},
      {"current-context names a missing context",
       kubeconfig(server, token) + "current-context: staging\n", "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: current-context: context \"staging\" not found"},
      {"--context names a missing context", kubeconfig(server, token), "staging",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: --context: context \"staging\" not found"},
      {"context names a missing cluster",
       kubeconfig(server, token, "- name: broken\n  context:\n    cluster: foo\n    user: main\n"),
       "broken", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: contexts[2].context.cluster: cluster \"foo\" not found"},
      {"context without a cluster",
       kubeconfig(server, token, "- name: broken\n  context:\n    user: main\n"), "broken",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: contexts[2].context.cluster: cluster was not specified "
       "for context \"broken\""},
      {"context names a missing user",
       kubeconfig(server, token, "- name: broken\n  context:\n    cluster: main\n    user: bob\n"),
       "broken", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: contexts[2].context.user: user \"bob\" not found"},
      {"exec plugin without apiVersion", kubeconfig(server, line("exec", "{command: aws}")), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: users[0].user.exec.apiVersion: apiVersion must be "
       "specified for main to use exec authentication plugin"},
      {"exec plugin of a removed version",
       kubeconfig(server,
                  line("exec", "{apiVersion: client.authentication.k8s.io/v1alpha1, command: a}")),
       "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: users[0].user.exec.apiVersion: exec plugin: invalid "
       "apiVersion \"client.authentication.k8s.io/v1alpha1\" (berth runs "
       "client.authentication.k8s.io/v1 and client.authentication.k8s.io/v1beta1)"},
      {"exec plugin v1 without interactiveMode",
       kubeconfig(server,
                  line("exec", "{apiVersion: client.authentication.k8s.io/v1, command: a}")),
       "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: users[0].user.exec.interactiveMode: interactiveMode must "
       "be specified for main to use exec authentication plugin"},
      {"exec plugin with an unknown interactiveMode",
       kubeconfig(server, line("exec",
                               "{apiVersion: client.authentication.k8s.io/v1, command: a, "
                               "interactiveMode: Sometimes}")),
       "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: users[0].user.exec.interactiveMode: invalid "
       "interactiveMode for main: \"Sometimes\""},
      {"exec plugin without a command",
       kubeconfig(server, line("exec", "{apiVersion: client.authentication.k8s.io/v1beta1}")), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: users[0].user.exec.command: command must be specified "
       "for main to use exec authentication plugin"},
      {"exec plugin and a token",
       kubeconfig(server,
                  line("token", "t") + line("exec",
                                            "{apiVersion: client.authentication.k8s.io/v1beta1, "
                                            "command: a}")),
       "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: users[0].user: user \"main\" sets both exec and a token "
       "or client certificate: use one"},
      {"auth-provider plugin", kubeconfig(server, line("auth-provider", "{name: oidc}")), "",
       util::ErrorCode::Unimplemented,
       "kubeconfig /home/u/.kube/config: user \"main\": auth-provider plugins are not "
       "supported by berth"},
      {"basic authentication",
       kubeconfig(server, line("username", "admin") + line("password", "secret")), "",
       util::ErrorCode::Unimplemented,
       "kubeconfig /home/u/.kube/config: users[0].user.username: basic authentication is not "
       "supported by berth"},
      {"impersonation", kubeconfig(server, token + line("as", "system:admin")), "",
       util::ErrorCode::Unimplemented,
       "kubeconfig /home/u/.kube/config: users[0].user.as: impersonation is not supported by "
       "berth"},
      {"proxy", kubeconfig(server + line("proxy-url", "http://proxy:3128"), token), "",
       util::ErrorCode::Unimplemented,
       "kubeconfig /home/u/.kube/config: clusters[0].cluster.proxy-url: proxies are not "
       "supported by berth"},
      {"bad base64 in certificate-authority-data",
       kubeconfig(server + line("certificate-authority-data", "LS0t!"), token), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: clusters[0].cluster.certificate-authority-data: illegal "
       "base64 data at input byte 4"},
      {"bad base64 in an unused user still fails, as client-go's decoding",
       kubeconfig(server, token + "- name: unused\n  user:\n    client-key-data: abc\n"), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: users[1].user.client-key-data: illegal base64 data at "
       "input byte 0"},
      {"no server", kubeconfig(line("insecure-skip-tls-verify", "false"), token), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: clusters[0].cluster.server: no server found for "
       "cluster \"main\""},
      {"server without a scheme", kubeconfig(line("server", "10.0.0.1:6443"), token), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: clusters[0].cluster.server: \"10.0.0.1:6443\" is not "
       "an https:// or http:// URL"},
      {"server with another scheme", kubeconfig(line("server", "ftp://h"), token), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: clusters[0].cluster.server: \"ftp://h\" is not an "
       "https:// or http:// URL"},
      {"server without a host", kubeconfig(line("server", "https:///api"), token), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: clusters[0].cluster.server: \"https:///api\" is not an "
       "https:// or http:// URL"},
      {"server is not a string", kubeconfig(line("server", "6443"), token), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: clusters[0].cluster.server: must be a string"},
      {"insecure-skip-tls-verify is not a boolean",
       kubeconfig(server + line("insecure-skip-tls-verify", "\"yes\""), token), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: clusters[0].cluster.insecure-skip-tls-verify: must be a "
       "boolean"},
      {"clusters is not a list", "clusters: {a: 1}\ncurrent-context: x\n", "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: clusters: must be a list"},
      {"insecure together with a CA",
       kubeconfig(server + line("insecure-skip-tls-verify", "true") +
                      line("certificate-authority-data", kCaData),
                  token),
       "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: clusters[0].cluster.insecure-skip-tls-verify: specifying "
       "a root certificates file with the insecure flag is not allowed"},
      {"CA file and data together",
       kubeconfig(server + line("certificate-authority", "ca.crt") +
                      line("certificate-authority-data", kCaData),
                  token),
       "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: clusters[0].cluster: certificate-authority-data and "
       "certificate-authority are both specified for main. certificate-authority-data will "
       "override."},
      {"missing CA file", kubeconfig(server + line("certificate-authority", "nope.crt"), token), "",
       util::ErrorCode::NotFound,
       "kubeconfig /home/u/.kube/config: clusters[0].cluster.certificate-authority: reading "
       "\"/home/u/.kube/nope.crt\": no such file or directory"},
      {"CA file that is not PEM",
       kubeconfig(server + line("certificate-authority", "not-pem"), token), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: clusters[0].cluster.certificate-authority: unable to "
       "load root certificates: unable to parse bytes as PEM block"},
      {"CA data that is not PEM",
       kubeconfig(server + line("certificate-authority-data", "aGVsbG8="), token), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: clusters[0].cluster.certificate-authority-data: unable "
       "to load root certificates: unable to parse bytes as PEM block"},
      {"client certificate without a key",
       kubeconfig(server, line("client-certificate-data", kCertData)), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: users[0].user: client-key-data or client-key must be "
       "specified for main to use the clientCert authentication method."},
      {"client certificate file and data together",
       kubeconfig(server, line("client-certificate-data", kCertData) +
                              line("client-certificate", "certs/client.crt") +
                              line("client-key-data", kKeyData)),
       "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: users[0].user: client-cert-data and client-cert are "
       "both specified for main. client-cert-data will override."},
      {"client key file and data together",
       kubeconfig(server, line("client-certificate-data", kCertData) +
                              line("client-key", "certs/client.key") +
                              line("client-key-data", kKeyData)),
       "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: users[0].user: client-key-data and client-key are both "
       "specified for main; client-key-data will override"},
      {"missing client key file",
       kubeconfig(server, line("client-certificate-data", kCertData) +
                              line("client-key", "certs/missing.key")),
       "", util::ErrorCode::NotFound,
       "kubeconfig /home/u/.kube/config: users[0].user.client-key: reading "
       "\"/home/u/.kube/certs/missing.key\": no such file or directory"},
      {"client certificate that is not PEM",
       kubeconfig(server,
                  line("client-certificate", "not-pem") + line("client-key-data", kKeyData)),
       "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: users[0].user.client-certificate: tls: failed to find "
       "any PEM data in certificate input"},
      {"client key that is not a private key",
       kubeconfig(server,
                  line("client-certificate-data", kCertData) + line("client-key-data", kCertData)),
       "", util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: users[0].user.client-key-data: tls: failed to find any "
       "PEM data in key input"},
      {"missing token file", kubeconfig(server, line("tokenFile", "missing")), "",
       util::ErrorCode::NotFound,
       "kubeconfig /home/u/.kube/config: users[0].user.tokenFile: reading "
       "\"/home/u/.kube/missing\": no such file or directory"},
      {"empty token file", kubeconfig(server, line("tokenFile", "empty-token")), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: users[0].user.tokenFile: read empty token from file "
       "\"/home/u/.kube/empty-token\""},
      {"token file larger than any token", kubeconfig(server, line("tokenFile", "huge-token")), "",
       util::ErrorCode::InvalidArgument,
       "kubeconfig /home/u/.kube/config: users[0].user.tokenFile: token file "
       "\"/home/u/.kube/huge-token\" is larger than 65536 bytes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeFiles fs = standardFiles();
    const util::Result<RestConfig> cfg = loadKubeconfig(c.text, kPath, c.context, fs.reader());
    ASSERT_FALSE(cfg.ok()) << render(*cfg);
    EXPECT_EQ(cfg.error().message, c.want);
    EXPECT_EQ(util::errorCodeName(cfg.error().code), util::errorCodeName(c.code));
  }
}

TEST(Kubeconfig, RejectsDuplicateNames) {
  struct Case {
    std::string_view list;
    std::string text;
    std::string_view want;
  };
  const Case cases[] = {
      {"clusters",
       "clusters:\n- name: a\n  cluster: {server: 'https://h:1'}\n- name: a\n  cluster: {}\n",
       "kubeconfig /home/u/.kube/config: clusters[1].name: duplicate name \"a\""},
      {"users", "users:\n- name: u\n- name: v\n- name: u\n",
       "kubeconfig /home/u/.kube/config: users[2].name: duplicate name \"u\""},
      {"contexts", "contexts:\n- name: x\n  context: {cluster: a}\n- name: x\n",
       "kubeconfig /home/u/.kube/config: contexts[1].name: duplicate name \"x\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.list);
    FakeFiles fs;
    const util::Result<RestConfig> cfg = loadKubeconfig(c.text, kPath, "x", fs.reader());
    ASSERT_FALSE(cfg.ok());
    EXPECT_EQ(cfg.error().message, c.want);
  }
}

struct FakeEnv {
  std::map<std::string, std::string> vars;
  Env env() const {
    return [this](const std::string& name) {
      const auto it = vars.find(name);
      return it == vars.end() ? std::string() : it->second;
    };
  }
};

FakeFiles serviceAccountFiles() {
  FakeFiles fs;
  fs.files = {{std::string(kServiceAccountTokenPath), "sa-token\n"},
              {std::string(kServiceAccountCAPath), std::string(kCaPem)}};
  return fs;
}

TEST(InCluster, BuildsTheServerFromTheServiceEnvironment) {
  struct Case {
    std::string_view host;
    std::string_view port;
    std::string_view want;
  };
  const Case cases[] = {
      {"10.96.0.1", "443",
       "server=https://10.96.0.1:443 ca=CA cert=- key=- token=sa-token "
       "tokenFile=/var/run/secrets/kubernetes.io/serviceaccount/token"},
      {"fd00:10:96::1", "443",
       "server=https://[fd00:10:96::1]:443 ca=CA cert=- key=- token=sa-token "
       "tokenFile=/var/run/secrets/kubernetes.io/serviceaccount/token"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.host);
    FakeEnv env{{{"KUBERNETES_SERVICE_HOST", std::string(c.host)},
                 {"KUBERNETES_SERVICE_PORT", std::string(c.port)}}};
    FakeFiles fs = serviceAccountFiles();
    const util::Result<RestConfig> cfg = inClusterConfig(env.env(), fs.reader());
    ASSERT_TRUE(cfg.ok()) << cfg.error().message;
    EXPECT_EQ(render(*cfg), c.want);
    EXPECT_TRUE(cfg->warnings.empty());
  }
}

TEST(InCluster, FailsOutsideACluster) {
  const std::map<std::string, std::string> envs[] = {
      {},
      {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}},
      {{"KUBERNETES_SERVICE_PORT", "443"}},
      {{"KUBERNETES_SERVICE_HOST", ""}, {"KUBERNETES_SERVICE_PORT", "443"}},
  };
  for (const auto& vars : envs) {
    SCOPED_TRACE(vars.size());
    FakeEnv env{vars};
    FakeFiles fs = serviceAccountFiles();
    const util::Result<RestConfig> cfg = inClusterConfig(env.env(), fs.reader());
    ASSERT_FALSE(cfg.ok());
    EXPECT_EQ(cfg.error().code, util::ErrorCode::NotFound);
    EXPECT_EQ(cfg.error().message,
              "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
              "KUBERNETES_SERVICE_PORT must be defined");
  }
}

TEST(InCluster, FailsWithoutAToken) {
  FakeEnv env{{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}};
  FakeFiles fs = serviceAccountFiles();
  fs.files.erase(std::string(kServiceAccountTokenPath));
  const util::Result<RestConfig> cfg = inClusterConfig(env.env(), fs.reader());
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.error().message,
            "unable to load in-cluster configuration: reading "
            "/var/run/secrets/kubernetes.io/serviceaccount/token: no such file or directory");
}

TEST(InCluster, RefusesATokenFileLargerThanAnyToken) {
  FakeEnv env{{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}};
  FakeFiles fs = serviceAccountFiles();
  fs.files[std::string(kServiceAccountTokenPath)] = std::string(kMaxTokenFileBytes + 1, 'x');
  const util::Result<RestConfig> cfg = inClusterConfig(env.env(), fs.reader());
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.error().message,
            "unable to load in-cluster configuration: token file "
            "\"/var/run/secrets/kubernetes.io/serviceaccount/token\" is larger than 65536 bytes");
}

TEST(InCluster, ReadsTheTokenFileWithTheTokenLimit) {
  FakeEnv env{{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}};
  FakeFiles fs = serviceAccountFiles();
  ASSERT_TRUE(inClusterConfig(env.env(), fs.reader()).ok());
  EXPECT_EQ(fs.limits[std::string(kServiceAccountTokenPath)], kMaxTokenFileBytes);
  EXPECT_EQ(fs.limits[std::string(kServiceAccountCAPath)], kMaxConfigFileBytes);
}

TEST(ReadFileAtMost, ReadsNoMoreThanOneByteOverTheLimit) {
  const std::string dir = ::testing::TempDir();
  const std::string small = dir + "/berth-read-small-" + std::to_string(::getpid());
  const std::string large = dir + "/berth-read-large-" + std::to_string(::getpid());
  std::ofstream(small) << "token\n";
  std::ofstream(large) << std::string(kMaxTokenFileBytes + 1, 't');
  util::Result<std::string> read = readFileAtMost(small, kMaxTokenFileBytes);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(*read, "token\n");
  read = readFileAtMost(large, kMaxTokenFileBytes);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message, "larger than 65536 bytes");
  // A file with no end: read up to the limit, then refused (not read until memory runs out).
  read = readFileAtMost("/dev/zero", kMaxTokenFileBytes);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message, "larger than 65536 bytes");
  read = readFileAtMost(dir + "/berth-read-missing", kMaxTokenFileBytes);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, util::ErrorCode::NotFound);
  std::remove(small.c_str());
  std::remove(large.c_str());
}

TEST(Kubeconfig, ATokenFileThatNeverEndsIsRefusedAtStartup) {
  const std::string text =
      "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
      "https://10.0.0.1:6443\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
      "current-context: x\nusers:\n- name: u\n  user:\n    tokenFile: /dev/zero\n";
  const util::Result<RestConfig> cfg = loadKubeconfig(text, "/tmp/kc", "", readFileAtMost);
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.error().message,
            "kubeconfig /tmp/kc: users[0].user.tokenFile: reading \"/dev/zero\": larger than "
            "65536 bytes");
}

TEST(InCluster, UnusableCAFallsBackToSystemRootsWithAWarning) {
  struct Case {
    std::string_view name;
    bool present;
    std::string_view content;
    std::string_view warning;
  };
  const Case cases[] = {
      {"missing", false, "",
       "Expected to load root CA config from /var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
       ", but got err: no such file or directory"},
      {"not PEM", true, "garbage",
       "Expected to load root CA config from /var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
       ", but got err: data does not contain any valid RSA or ECDSA certificates"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeEnv env{{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}};
    FakeFiles fs = serviceAccountFiles();
    if (c.present) {
      fs.files[std::string(kServiceAccountCAPath)] = std::string(c.content);
    } else {
      fs.files.erase(std::string(kServiceAccountCAPath));
    }
    const util::Result<RestConfig> cfg = inClusterConfig(env.env(), fs.reader());
    ASSERT_TRUE(cfg.ok()) << cfg.error().message;
    EXPECT_EQ(cfg->caPem, "");
    EXPECT_EQ(cfg->warnings, std::vector<std::string>{std::string(c.warning)});
  }
}

TEST(Kubeconfig, ExecPluginIsReadWithItsArgsEnvAndClusterInfo) {
  const std::string text = kubeconfig(
      line("server", "https://10.0.0.1:6443") + line("certificate-authority-data", kCaData),
      "    exec:\n"
      "      apiVersion: client.authentication.k8s.io/v1\n"
      "      command: bin/get-token\n"
      "      args: [--cluster, prod]\n"
      "      env: [{name: AWS_PROFILE, value: ops}]\n"
      "      installHint: brew install get-token\n"
      "      provideClusterInfo: true\n"
      "      interactiveMode: Never\n");
  FakeFiles fs = standardFiles();
  const util::Result<RestConfig> cfg = loadKubeconfig(text, kPath, "", fs.reader());
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  ASSERT_TRUE(cfg->exec.has_value());
  const ExecConfig& e = *cfg->exec;
  EXPECT_EQ(e.user, "main");
  EXPECT_EQ(e.apiVersion, "client.authentication.k8s.io/v1");
  // A command with a slash is relative to the kubeconfig's directory, as client-go resolves it.
  EXPECT_EQ(e.command, "/home/u/.kube/bin/get-token");
  EXPECT_EQ(e.args, (std::vector<std::string>{"--cluster", "prod"}));
  ASSERT_EQ(e.env.size(), 1u);
  EXPECT_EQ(e.env[0], (std::pair<std::string, std::string>{"AWS_PROFILE", "ops"}));
  EXPECT_EQ(e.installHint, "brew install get-token");
  EXPECT_EQ(e.interactiveMode, InteractiveMode::Never);
  EXPECT_EQ(e.clusterInfo, std::string(R"({"certificate-authority-data":")") +
                               std::string(kCaData) + R"(","server":"https://10.0.0.1:6443"})");
  EXPECT_EQ(cfg->bearerToken, "");

  // v1beta1 defaults interactiveMode to IfAvailable; a bare command name is looked up on PATH.
  const std::string beta =
      kubeconfig(line("server", "https://10.0.0.1:6443"),
                 line("exec", "{apiVersion: client.authentication.k8s.io/v1beta1, command: aws}"));
  const util::Result<RestConfig> b = loadKubeconfig(beta, kPath, "", fs.reader());
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->exec->command, "aws");
  EXPECT_EQ(b->exec->interactiveMode, InteractiveMode::IfAvailable);
  EXPECT_TRUE(b->exec->clusterInfo.empty());
}

TEST(Kubeconfig, ContextNamespaceIsKept) {
  const std::string text =
      "clusters: [{name: c, cluster: {server: 'https://h:1'}}]\n"
      "contexts: [{name: x, context: {cluster: c, namespace: shop}}]\ncurrent-context: x\n";
  FakeFiles fs;
  const util::Result<RestConfig> cfg = loadKubeconfig(text, kPath, "", fs.reader());
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->namespace_, "shop");
}

// kubectl's rules for $KUBECONFIG: the first file to set a value or a name wins, whole.
TEST(KubeconfigMerge, FirstFileToSetANameOrValueWins) {
  const KubeconfigFile first{"/a/config",
                             "current-context: one\n"
                             "clusters: [{name: c, cluster: {server: 'https://first:1', "
                             "certificate-authority: ca.crt}}]\n"
                             "users: [{name: u, user: {token: first-token}}]\n"
                             "contexts: [{name: one, context: {cluster: c, user: u}}]\n"};
  const KubeconfigFile second{
      "/b/config",
      "current-context: two\n"
      "clusters: [{name: c, cluster: {server: 'https://second:1'}},"
      " {name: d, cluster: {server: 'https://d:1', certificate-authority: ca.crt}}]\n"
      // The second file's "u" has a client certificate too: it is dropped with the rest of it.
      "users: [{name: u, user: {token: second-token, client-certificate: c.crt, client-key: "
      "c.key}}]\n"
      "contexts: [{name: one, context: {cluster: d}}, {name: two, context: {cluster: d, user: "
      "u, namespace: ns2}}]\n"};
  FakeFiles fs;
  fs.files = {{"/a/ca.crt", std::string(kCaPem)}, {"/b/ca.crt", std::string(kCaPem)}};
  const util::Result<RestConfig> merged = loadKubeconfigs({first, second}, "", fs.reader());
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(render(*merged),
            "server=https://first:1 ca=CA cert=- key=- token=first-token tokenFile=-");
  EXPECT_EQ(fs.reads, (std::vector<std::string>{"/a/ca.crt"}));

  // A context only the second file has still uses the first file's user "u"; each entry's
  // relative paths resolve against its own file.
  fs.reads.clear();
  const util::Result<RestConfig> two = loadKubeconfigs({first, second}, "two", fs.reader());
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(render(*two), "server=https://d:1 ca=CA cert=- key=- token=first-token tokenFile=-");
  EXPECT_EQ(two->namespace_, "ns2");
  EXPECT_EQ(fs.reads, (std::vector<std::string>{"/b/ca.crt"}));

  // The order decides: with the second file first, its context "one" (anonymous, cluster d).
  const util::Result<RestConfig> swapped = loadKubeconfigs({second, first}, "one", fs.reader());
  ASSERT_TRUE(swapped.ok()) << swapped.error().message;
  EXPECT_EQ(swapped->server, "https://d:1");
}

TEST(KubeconfigMerge, ErrorsNameTheFileOfTheFailingEntry) {
  const KubeconfigFile good{"/a/config", "current-context: x\n"};
  const KubeconfigFile bad{"/b/config",
                           "clusters: [{name: c, cluster: {server: 'ftp://h'}}]\n"
                           "contexts: [{name: x, context: {cluster: c}}]\n"};
  FakeFiles fs;
  const util::Result<RestConfig> r = loadKubeconfigs({good, bad}, "", fs.reader());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "kubeconfig /b/config: clusters[0].cluster.server: \"ftp://h\" is not an https:// or "
            "http:// URL");
  const util::Result<RestConfig> missing = loadKubeconfigs({good, bad}, "nope", fs.reader());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "kubeconfig /a/config:/b/config: --context: context \"nope\" not found");
  const KubeconfigFile broken{"/c/config", "clusters: 3\n"};
  const util::Result<RestConfig> unreadable = loadKubeconfigs({good, broken}, "", fs.reader());
  ASSERT_FALSE(unreadable.ok());
  EXPECT_EQ(unreadable.error().message, "kubeconfig /c/config: clusters: must be a list");
}

TEST(KubeconfigMerge, SearchPathsAreKubeconfigsListOrTheHomeConfig) {
  std::map<std::string, std::string> env = {{"HOME", "/home/u"}};
  const Env getenv = [&env](const std::string& name) {
    const auto it = env.find(name);
    return it == env.end() ? std::string() : it->second;
  };
  EXPECT_EQ(kubeconfigSearchPaths(getenv), (std::vector<std::string>{"/home/u/.kube/config"}));
  env["KUBECONFIG"] = "/a:/b::/a:/c:";
  EXPECT_EQ(kubeconfigSearchPaths(getenv), (std::vector<std::string>{"/a", "/b", "/c"}));
  env.clear();
  EXPECT_TRUE(kubeconfigSearchPaths(getenv).empty());
}

TEST(KubeconfigMerge, MissingFilesAreSkippedAndNoneIsNotFound) {
  FakeFiles fs;
  fs.files = {{"/b",
               "clusters: [{name: c, cluster: {server: 'https://b:1'}}]\n"
               "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n"}};
  const FileExists exists = [&fs](const std::string& path) { return fs.files.contains(path); };
  const util::Result<RestConfig> r = loadKubeconfigFiles({"/a", "/b"}, "", fs.reader(), exists);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->server, "https://b:1");
  const util::Result<RestConfig> none = loadKubeconfigFiles({"/a", "/z"}, "", fs.reader(), exists);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, util::ErrorCode::NotFound);
  EXPECT_EQ(none.error().message, "no kubeconfig file exists (looked at /a, /z)");
}

}  // namespace
}  // namespace berth::client
