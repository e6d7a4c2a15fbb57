#include "pkg/client/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "pkg/api/decode.h"
#include "pkg/client/token_source.h"
#include "pkg/util/base64.h"
#include "pkg/util/quote.h"

namespace berth::client {
namespace {

using nlohmann::json;
using util::Error;
using util::Result;

constexpr std::string_view kExecV1 = "client.authentication.k8s.io/v1";
constexpr std::string_view kExecV1Beta1 = "client.authentication.k8s.io/v1beta1";

// --- Typed access to the decoded document; errors name the field path --------------------------

std::string join(std::string_view field, std::string_view key) {
  return field.empty() ? std::string(key) : std::string(field) + "." + std::string(key);
}

// As with Go's decoder, an absent key and null both mean the zero value.
const json* member(const json& obj, std::string_view key) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    return nullptr;
  }
  return &*it;
}

Result<std::string> getString(const json& obj, std::string_view key, std::string_view field) {
  const json* v = member(obj, key);
  if (v == nullptr) {
    return std::string();
  }
  if (!v->is_string()) {
    return util::invalidArgument(join(field, key) + ": must be a string");
  }
  return v->get<std::string>();
}

Result<bool> getBool(const json& obj, std::string_view key, std::string_view field) {
  const json* v = member(obj, key);
  if (v == nullptr) {
    return false;
  }
  if (!v->is_boolean()) {
    return util::invalidArgument(join(field, key) + ": must be a boolean");
  }
  return v->get<bool>();
}

// certificate-authority-data and friends: base64 in the file, PEM once decoded.
Result<std::string> getBytes(const json& obj, std::string_view key, std::string_view field) {
  Result<std::string> text = getString(obj, key, field);
  if (!text.ok() || text->empty()) {
    return text;
  }
  Result<std::string> bytes = util::decodeBase64(*text);
  if (!bytes.ok()) {
    return bytes.error().wrap(join(field, key));
  }
  return bytes;
}

// --- The kubeconfig model: every named entry, with the field path it came from -------------------

struct Cluster {
  std::string file;   // the kubeconfig it came from
  std::string field;  // "clusters[0].cluster"
  std::string server;
  std::string caFile;
  std::string caData;
  bool insecure = false;
  std::string tlsServerName;
  bool hasProxy = false;
};

struct User {
  std::string file;
  std::string field;  // "users[0].user"
  std::string certFile, certData, keyFile, keyData;
  std::string token, tokenFile;
  std::optional<ExecConfig> exec;
  // The first setting berth cannot honour (or an invalid exec block), reported only if this user
  // is chosen.
  std::optional<Error> unsupported;
};

struct Context {
  std::string file;
  std::string field;  // "contexts[0].context"
  std::string cluster;
  std::string user;
  std::string namespace_;
};

struct Kubeconfig {
  std::map<std::string, Cluster> clusters;
  std::map<std::string, User> users;
  std::map<std::string, Context> contexts;
  std::string currentContext;
};

Result<Cluster> parseCluster(const json& obj, const std::string& field) {
  Cluster c;
  c.field = field;
  Result<std::string> server = getString(obj, "server", field);
  if (!server.ok()) {
    return server.error();
  }
  c.server = *std::move(server);
  Result<std::string> caFile = getString(obj, "certificate-authority", field);
  if (!caFile.ok()) {
    return caFile.error();
  }
  c.caFile = *std::move(caFile);
  Result<std::string> caData = getBytes(obj, "certificate-authority-data", field);
  if (!caData.ok()) {
    return caData.error();
  }
  c.caData = *std::move(caData);
  Result<bool> insecure = getBool(obj, "insecure-skip-tls-verify", field);
  if (!insecure.ok()) {
    return insecure.error();
  }
  c.insecure = *insecure;
  Result<std::string> serverName = getString(obj, "tls-server-name", field);
  if (!serverName.ok()) {
    return serverName.error();
  }
  c.tlsServerName = *std::move(serverName);
  Result<std::string> proxy = getString(obj, "proxy-url", field);
  if (!proxy.ok()) {
    return proxy.error();
  }
  c.hasProxy = !proxy->empty();
  return c;
}

Result<InteractiveMode> parseInteractiveMode(std::string_view text, const std::string& apiVersion,
                                             const std::string& field, const std::string& name) {
  if (text.empty()) {
    // v1beta1 defaults it; v1 requires it (client-go's conversion and validation).
    if (apiVersion == kExecV1Beta1) {
      return InteractiveMode::IfAvailable;
    }
    return util::invalidArgument(field + ": interactiveMode must be specified for " + name +
                                 " to use exec authentication plugin");
  }
  if (text == "Never") return InteractiveMode::Never;
  if (text == "IfAvailable") return InteractiveMode::IfAvailable;
  if (text == "Always") return InteractiveMode::Always;
  return util::invalidArgument(field + ": invalid interactiveMode for " + name + ": " +
                               util::quoteGo(text));
}

// users[].user.exec, checked as client-go's validation checks it.
Result<ExecConfig> parseExec(const json& obj, const std::string& field, const std::string& name) {
  if (!obj.is_object()) {
    return util::invalidArgument(field + ": must be an object");
  }
  ExecConfig e;
  e.user = name;
  Result<std::string> apiVersion = getString(obj, "apiVersion", field);
  if (!apiVersion.ok()) {
    return apiVersion.error();
  }
  e.apiVersion = *std::move(apiVersion);
  if (e.apiVersion.empty()) {
    return util::invalidArgument(field + ".apiVersion: apiVersion must be specified for " + name +
                                 " to use exec authentication plugin");
  }
  if (e.apiVersion != kExecV1 && e.apiVersion != kExecV1Beta1) {
    return util::invalidArgument(field + ".apiVersion: exec plugin: invalid apiVersion " +
                                 util::quoteGo(e.apiVersion) + " (berth runs " +
                                 std::string(kExecV1) + " and " + std::string(kExecV1Beta1) + ")");
  }
  Result<std::string> command = getString(obj, "command", field);
  if (!command.ok()) {
    return command.error();
  }
  e.command = *std::move(command);
  if (e.command.empty()) {
    return util::invalidArgument(field + ".command: command must be specified for " + name +
                                 " to use exec authentication plugin");
  }
  if (const json* args = member(obj, "args"); args != nullptr) {
    if (!args->is_array()) {
      return util::invalidArgument(field + ".args: must be a list of strings");
    }
    for (size_t i = 0; i < args->size(); ++i) {
      if (!(*args)[i].is_string()) {
        return util::invalidArgument(field + ".args[" + std::to_string(i) + "]: must be a string");
      }
      e.args.push_back((*args)[i].get<std::string>());
    }
  }
  if (const json* env = member(obj, "env"); env != nullptr) {
    if (!env->is_array()) {
      return util::invalidArgument(field + ".env: must be a list of {name, value}");
    }
    for (size_t i = 0; i < env->size(); ++i) {
      const std::string item = field + ".env[" + std::to_string(i) + "]";
      if (!(*env)[i].is_object()) {
        return util::invalidArgument(item + ": must be an object");
      }
      Result<std::string> var = getString((*env)[i], "name", item);
      if (!var.ok()) {
        return var.error();
      }
      if (var->empty()) {
        return util::invalidArgument(item + ".name: env variable name must be specified for " +
                                     name + " to use exec authentication plugin");
      }
      Result<std::string> value = getString((*env)[i], "value", item);
      if (!value.ok()) {
        return value.error();
      }
      e.env.emplace_back(*std::move(var), *std::move(value));
    }
  }
  Result<std::string> hint = getString(obj, "installHint", field);
  if (!hint.ok()) {
    return hint.error();
  }
  e.installHint = *std::move(hint);
  Result<bool> clusterInfo = getBool(obj, "provideClusterInfo", field);
  if (!clusterInfo.ok()) {
    return clusterInfo.error();
  }
  e.provideClusterInfo = *clusterInfo;  // filled in from the context's cluster
  Result<std::string> mode = getString(obj, "interactiveMode", field);
  if (!mode.ok()) {
    return mode.error();
  }
  Result<InteractiveMode> interactive =
      parseInteractiveMode(*mode, e.apiVersion, field + ".interactiveMode", name);
  if (!interactive.ok()) {
    return interactive.error();
  }
  e.interactiveMode = *interactive;
  return e;
}

Result<User> parseUser(const json& obj, const std::string& field, const std::string& name) {
  User u;
  u.field = field;
  struct StringField {
    std::string_view key;
    std::string* out;
  };
  const StringField strings[] = {{"client-certificate", &u.certFile},
                                 {"client-key", &u.keyFile},
                                 {"token", &u.token},
                                 {"tokenFile", &u.tokenFile}};
  for (const StringField& f : strings) {
    Result<std::string> v = getString(obj, f.key, field);
    if (!v.ok()) {
      return v.error();
    }
    *f.out = *std::move(v);
  }
  const StringField bytes[] = {{"client-certificate-data", &u.certData},
                               {"client-key-data", &u.keyData}};
  for (const StringField& f : bytes) {
    Result<std::string> v = getBytes(obj, f.key, field);
    if (!v.ok()) {
      return v.error();
    }
    *f.out = *std::move(v);
  }
  if (const json* exec = member(obj, "exec"); exec != nullptr) {
    // As client-go, a user's exec settings are only checked when a context uses the user.
    Result<ExecConfig> e = parseExec(*exec, field + ".exec", name);
    if (!e.ok()) {
      u.unsupported = e.error();
      return u;
    }
    u.exec = *std::move(e);
  }
  // Settings that would change who berth is or how it gets credentials: refuse rather than ignore.
  if (member(obj, "auth-provider") != nullptr) {
    u.unsupported =
        Error{util::ErrorCode::Unimplemented,
              "user " + util::quoteGo(name) + ": auth-provider plugins are not supported by berth"};
  } else {
    struct Unsupported {
      std::string_view key;
      std::string_view what;
    };
    static constexpr Unsupported kUnsupported[] = {
        {"username", "basic authentication is not supported by berth"},
        {"password", "basic authentication is not supported by berth"},
        {"as", "impersonation is not supported by berth"},
        {"as-uid", "impersonation is not supported by berth"},
        {"as-groups", "impersonation is not supported by berth"},
        {"as-user-extra", "impersonation is not supported by berth"},
    };
    for (const Unsupported& x : kUnsupported) {
      if (const json* v = member(obj, x.key); v != nullptr && !v->empty() && *v != "") {
        u.unsupported =
            Error{util::ErrorCode::Unimplemented, join(field, x.key) + ": " + std::string(x.what)};
        break;
      }
    }
  }
  return u;
}

Result<Context> parseContext(const json& obj, const std::string& field) {
  Context c;
  c.field = field;
  Result<std::string> cluster = getString(obj, "cluster", field);
  if (!cluster.ok()) {
    return cluster.error();
  }
  c.cluster = *std::move(cluster);
  Result<std::string> user = getString(obj, "user", field);
  if (!user.ok()) {
    return user.error();
  }
  c.user = *std::move(user);
  Result<std::string> ns = getString(obj, "namespace", field);
  if (!ns.ok()) {
    return ns.error();
  }
  c.namespace_ = *std::move(ns);
  return c;
}

// Reads one of the named lists ("clusters: [{name: x, cluster: {...}}]") into a map, rejecting
// duplicate names as client-go's conversion does.
template <typename T, typename Parse>
Result<std::map<std::string, T>> parseNamedList(const json& doc, std::string_view list,
                                                std::string_view inner, Parse parse) {
  std::map<std::string, T> out;
  const json* items = member(doc, list);
  if (items == nullptr) {
    return out;
  }
  if (!items->is_array()) {
    return util::invalidArgument(std::string(list) + ": must be a list");
  }
  for (size_t i = 0; i < items->size(); ++i) {
    const std::string item = std::string(list) + "[" + std::to_string(i) + "]";
    const json& entry = (*items)[i];
    if (!entry.is_object()) {
      return util::invalidArgument(item + ": must be an object");
    }
    Result<std::string> name = getString(entry, "name", item);
    if (!name.ok()) {
      return name.error();
    }
    const std::string field = join(item, inner);
    static const json kEmpty = json::object();
    const json* body = member(entry, inner);
    if (body != nullptr && !body->is_object()) {
      return util::invalidArgument(field + ": must be an object");
    }
    Result<T> parsed = parse(body != nullptr ? *body : kEmpty, field, *name);
    if (!parsed.ok()) {
      return parsed.error();
    }
    if (!out.emplace(*name, *std::move(parsed)).second) {
      return util::invalidArgument(item + ".name: duplicate name " + util::quoteGo(*name));
    }
  }
  return out;
}

Result<Kubeconfig> parseKubeconfig(std::string_view text) {
  Result<std::vector<json>> docs = api::parseDocuments(text);
  if (!docs.ok()) {
    return docs.error();
  }
  if (docs->empty()) {
    return util::invalidArgument("the file is empty");
  }
  if (docs->size() > 1) {
    return util::invalidArgument("expected one document, found " + std::to_string(docs->size()));
  }
  const json& doc = docs->front();
  if (!doc.is_object()) {
    return util::invalidArgument("must be a YAML or JSON object");
  }
  // Both may be omitted: client-go defaults them to v1 Config.
  Result<std::string> kind = getString(doc, "kind", "");
  if (!kind.ok()) {
    return kind.error();
  }
  if (!kind->empty() && *kind != "Config") {
    return util::invalidArgument("kind: must be \"Config\", not " + util::quoteGo(*kind));
  }
  Result<std::string> apiVersion = getString(doc, "apiVersion", "");
  if (!apiVersion.ok()) {
    return apiVersion.error();
  }
  if (!apiVersion->empty() && *apiVersion != "v1") {
    return util::invalidArgument("apiVersion: must be \"v1\", not " + util::quoteGo(*apiVersion));
  }

  Kubeconfig cfg;
  auto clusters =
      parseNamedList<Cluster>(doc, "clusters", "cluster",
                              [](const json& obj, const std::string& field, const std::string&) {
                                return parseCluster(obj, field);
                              });
  if (!clusters.ok()) {
    return clusters.error();
  }
  cfg.clusters = *std::move(clusters);
  auto users = parseNamedList<User>(doc, "users", "user", parseUser);
  if (!users.ok()) {
    return users.error();
  }
  cfg.users = *std::move(users);
  auto contexts =
      parseNamedList<Context>(doc, "contexts", "context",
                              [](const json& obj, const std::string& field, const std::string&) {
                                return parseContext(obj, field);
                              });
  if (!contexts.ok()) {
    return contexts.error();
  }
  cfg.contexts = *std::move(contexts);
  Result<std::string> current = getString(doc, "current-context", "");
  if (!current.ok()) {
    return current.error();
  }
  cfg.currentContext = *std::move(current);
  return cfg;
}

// --- Paths: relative references resolve against the kubeconfig's directory ----------------------

// Lexical cleanup as Go's filepath.Clean: drops "." and empty segments, folds "dir/..".
std::string cleanPath(std::string_view path) {
  const bool absolute = !path.empty() && path.front() == '/';
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) {
      end = path.size();
    }
    const std::string_view part = path.substr(start, end - start);
    start = end + 1;
    if (part.empty() || part == ".") {
      continue;
    }
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
        continue;
      }
      if (absolute) {
        continue;  // "/.." is "/"
      }
    }
    parts.push_back(part);
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) {
      out += '/';
    }
    out += parts[i];
  }
  if (out.empty()) {
    return ".";
  }
  return out;
}

std::string resolvePath(std::string_view kubeconfigPath, const std::string& ref) {
  if (ref.empty() || ref.front() == '/') {
    return ref;
  }
  const size_t slash = kubeconfigPath.rfind('/');
  const std::string_view dir =
      slash == std::string_view::npos ? "." : kubeconfigPath.substr(0, slash == 0 ? 1 : slash);
  return cleanPath(std::string(dir) + "/" + ref);
}

Result<std::string> readReferenced(const FileReader& read, const std::string& path,
                                   const std::string& field,
                                   size_t maxBytes = kMaxConfigFileBytes) {
  Result<std::string> content = read(path, maxBytes);
  if (!content.ok()) {
    return content.error().wrap(field + ": reading " + util::quoteGo(path));
  }
  return content;
}

// PEM content checks, so a wrong file is reported here rather than as a TLS handshake failure.
bool hasPemBlock(std::string_view pem, std::string_view type) {
  return pem.find("-----BEGIN " + std::string(type)) != std::string_view::npos;
}

std::string_view trimSpace(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return {};
  }
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// A token file larger than any token is refused by name rather than sent as a header.
Result<void> checkTokenSize(const std::string& token, const std::string& path) {
  if (token.size() > kMaxTokenFileBytes) {
    return util::invalidArgument("token file " + util::quoteGo(path) + " is larger than " +
                                 std::to_string(kMaxTokenFileBytes) + " bytes");
  }
  return {};
}

// --- Building the RestConfig from the chosen context ---------------------------------------------

Result<void> applyCluster(const Cluster& c, std::string_view name, const FileReader& read,
                          RestConfig& out) {
  const std::string& path = c.file;
  if (c.server.empty()) {
    return util::invalidArgument(c.field + ".server: no server found for cluster " +
                                 util::quoteGo(name));
  }
  const bool https = c.server.starts_with("https://");
  const bool http = c.server.starts_with("http://");
  const size_t hostStart = https ? 8 : 7;
  if ((!https && !http) || c.server.size() == hostStart || c.server[hostStart] == '/') {
    return util::invalidArgument(c.field + ".server: " + util::quoteGo(c.server) +
                                 " is not an https:// or http:// URL");
  }
  if (c.hasProxy) {
    return Error{util::ErrorCode::Unimplemented,
                 c.field + ".proxy-url: proxies are not supported by berth"};
  }
  if (!c.caFile.empty() && !c.caData.empty()) {
    // client-go's validation message (it is an error there too, despite "will override").
    return util::invalidArgument(c.field +
                                 ": certificate-authority-data and certificate-authority are "
                                 "both specified for " +
                                 std::string(name) + ". certificate-authority-data will override.");
  }
  if (c.insecure && (!c.caFile.empty() || !c.caData.empty())) {
    return util::invalidArgument(
        c.field +
        ".insecure-skip-tls-verify: specifying a root certificates file with the insecure flag "
        "is not allowed");
  }
  out.server = c.server;
  out.insecureSkipTLSVerify = c.insecure;
  out.tlsServerName = c.tlsServerName;
  std::string caField = c.field + ".certificate-authority-data";
  out.caPem = c.caData;
  if (!c.caFile.empty()) {
    caField = c.field + ".certificate-authority";
    Result<std::string> pem = readReferenced(read, resolvePath(path, c.caFile), caField);
    if (!pem.ok()) {
      return pem.error();
    }
    out.caPem = *std::move(pem);
  }
  if ((!c.caFile.empty() || !c.caData.empty()) && !hasPemBlock(out.caPem, "CERTIFICATE")) {
    return util::invalidArgument(
        caField + ": unable to load root certificates: unable to parse bytes as PEM block");
  }
  if (c.insecure) {
    out.warnings.push_back("cluster " + util::quoteGo(name) +
                           " sets insecure-skip-tls-verify: the API server's certificate will "
                           "not be verified");
  }
  return {};
}

Result<void> applyUser(const User& u, std::string_view name, const FileReader& read,
                       RestConfig& out) {
  const std::string& path = u.file;
  if (u.unsupported) {
    return *u.unsupported;
  }
  if (u.exec) {
    if (!u.token.empty() || !u.tokenFile.empty() || !u.certFile.empty() || !u.certData.empty()) {
      return util::invalidArgument(u.field + ": user " + util::quoteGo(std::string(name)) +
                                   " sets both exec and a token or client certificate: use one");
    }
    ExecConfig e = *u.exec;
    // As client-go: a relative command with a slash is relative to the kubeconfig; a bare name
    // is looked up on PATH.
    if (e.command.find('/') != std::string::npos) {
      e.command = resolvePath(path, e.command);
    }
    if (e.provideClusterInfo) {
      json cluster = {{"server", out.server}};
      if (!out.tlsServerName.empty()) cluster["tls-server-name"] = out.tlsServerName;
      if (out.insecureSkipTLSVerify) cluster["insecure-skip-tls-verify"] = true;
      if (!out.caPem.empty()) cluster["certificate-authority-data"] = util::encodeBase64(out.caPem);
      e.clusterInfo = cluster.dump();
    }
    out.exec = std::move(e);
    return {};
  }
  if (!u.certFile.empty() || !u.certData.empty()) {
    // client-go's validation messages, word for word.
    if (!u.certFile.empty() && !u.certData.empty()) {
      return util::invalidArgument(u.field +
                                   ": client-cert-data and client-cert are both specified for " +
                                   std::string(name) + ". client-cert-data will override.");
    }
    if (!u.keyFile.empty() && !u.keyData.empty()) {
      return util::invalidArgument(u.field +
                                   ": client-key-data and client-key are both specified for " +
                                   std::string(name) + "; client-key-data will override");
    }
    if (u.keyFile.empty() && u.keyData.empty()) {
      return util::invalidArgument(
          u.field + ": client-key-data or client-key must be specified for " + std::string(name) +
          " to use the clientCert authentication method.");
    }
    std::string certField = u.field + ".client-certificate-data";
    out.clientCertPem = u.certData;
    if (!u.certFile.empty()) {
      certField = u.field + ".client-certificate";
      Result<std::string> pem = readReferenced(read, resolvePath(path, u.certFile), certField);
      if (!pem.ok()) {
        return pem.error();
      }
      out.clientCertPem = *std::move(pem);
    }
    if (!hasPemBlock(out.clientCertPem, "CERTIFICATE")) {
      return util::invalidArgument(certField +
                                   ": tls: failed to find any PEM data in certificate input");
    }
    std::string keyField = u.field + ".client-key-data";
    out.clientKeyPem = u.keyData;
    if (!u.keyFile.empty()) {
      keyField = u.field + ".client-key";
      Result<std::string> pem = readReferenced(read, resolvePath(path, u.keyFile), keyField);
      if (!pem.ok()) {
        return pem.error();
      }
      out.clientKeyPem = *std::move(pem);
    }
    if (out.clientKeyPem.find("PRIVATE KEY-----") == std::string::npos) {
      return util::invalidArgument(keyField + ": tls: failed to find any PEM data in key input");
    }
  }
  // As client-go: a token wins over tokenFile, which is then only kept for later refreshes.
  out.bearerToken = u.token;
  if (!u.tokenFile.empty()) {
    out.tokenFile = resolvePath(path, u.tokenFile);
  }
  if (u.token.empty() && !u.tokenFile.empty()) {
    const std::string field = u.field + ".tokenFile";
    Result<std::string> token = readReferenced(read, out.tokenFile, field, kMaxTokenFileBytes);
    if (!token.ok()) {
      return token.error();
    }
    if (Result<void> size = checkTokenSize(*token, out.tokenFile); !size.ok()) {
      return size.error().wrap(field);
    }
    out.bearerToken = std::string(trimSpace(*token));
    if (out.bearerToken.empty()) {
      return util::invalidArgument(field + ": read empty token from file " +
                                   util::quoteGo(out.tokenFile));
    }
  }
  return {};
}

}  // namespace

Result<std::string> readFileAtMost(const std::string& path, size_t maxBytes) {
  const auto tooLarge = [&] {
    return util::invalidArgument("larger than " + std::to_string(maxBytes) + " bytes");
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return Error{err == ENOENT ? util::ErrorCode::NotFound : util::ErrorCode::InvalidArgument,
                 std::generic_category().message(err)};
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<uint64_t>(st.st_size) > maxBytes) {
    ::close(fd);
    return tooLarge();
  }
  // One byte more than the limit tells a file that fits from one that does not.
  std::string content(maxBytes + 1, '\0');
  size_t got = 0;
  while (got < content.size()) {
    const ssize_t n = ::read(fd, content.data() + got, content.size() - got);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return util::invalidArgument(std::generic_category().message(err));
    }
    if (n == 0) {
      break;
    }
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got > maxBytes) {
    return tooLarge();
  }
  content.resize(got);
  return content;
}

std::string defaultUserAgent() { return std::string("berth/") + BERTH_VERSION; }

Result<RestConfig> loadKubeconfigs(const std::vector<KubeconfigFile>& files,
                                   std::string_view context, const FileReader& read) {
  std::string allPaths;
  for (const KubeconfigFile& f : files) {
    allPaths += (allPaths.empty() ? "" : ":") + f.path;
  }
  // The first file to set a map key or a value wins; later entries of that name are dropped
  // whole (kubectl's "never change the value or map key").
  Kubeconfig cfg;
  for (const KubeconfigFile& f : files) {
    Result<Kubeconfig> parsed = parseKubeconfig(f.text);
    if (!parsed.ok()) {
      return parsed.error().wrap("kubeconfig " + f.path);
    }
    for (auto& [name, c] : parsed->clusters) {
      c.file = f.path;
      cfg.clusters.emplace(name, std::move(c));
    }
    for (auto& [name, u] : parsed->users) {
      u.file = f.path;
      cfg.users.emplace(name, std::move(u));
    }
    for (auto& [name, c] : parsed->contexts) {
      c.file = f.path;
      cfg.contexts.emplace(name, std::move(c));
    }
    if (cfg.currentContext.empty()) {
      cfg.currentContext = parsed->currentContext;
    }
  }
  const std::string prefix = "kubeconfig " + allPaths;

  const std::string contextName = context.empty() ? cfg.currentContext : std::string(context);
  const std::string contextField = context.empty() ? "current-context" : "--context";
  if (contextName.empty()) {
    return util::invalidArgument("current-context: not set, and no --context was given")
        .wrap(prefix);
  }
  const auto ctx = cfg.contexts.find(contextName);
  if (ctx == cfg.contexts.end()) {
    return util::invalidArgument(contextField + ": context " + util::quoteGo(contextName) +
                                 " not found")
        .wrap(prefix);
  }
  const Context& c = ctx->second;
  const std::string contextPrefix = "kubeconfig " + c.file;

  if (c.cluster.empty()) {
    return util::invalidArgument(c.field + ".cluster: cluster was not specified for context " +
                                 util::quoteGo(contextName))
        .wrap(contextPrefix);
  }
  const auto cluster = cfg.clusters.find(c.cluster);
  if (cluster == cfg.clusters.end()) {
    return util::invalidArgument(c.field + ".cluster: cluster " + util::quoteGo(c.cluster) +
                                 " not found")
        .wrap(contextPrefix);
  }
  // An empty user means anonymous, as in client-go; a named one must exist (client-go would
  // silently go anonymous, which only surfaces later as 401 or 403).
  const User* user = nullptr;
  if (!c.user.empty()) {
    const auto it = cfg.users.find(c.user);
    if (it == cfg.users.end()) {
      return util::invalidArgument(c.field + ".user: user " + util::quoteGo(c.user) + " not found")
          .wrap(contextPrefix);
    }
    user = &it->second;
  }

  RestConfig out;
  if (Result<void> r = applyCluster(cluster->second, c.cluster, read, out); !r.ok()) {
    return r.error().wrap("kubeconfig " + cluster->second.file);
  }
  if (user != nullptr) {
    if (Result<void> r = applyUser(*user, c.user, read, out); !r.ok()) {
      return r.error().wrap("kubeconfig " + user->file);
    }
  }
  out.namespace_ = c.namespace_;
  // client-go applies TLS settings and credentials only to https servers, so a token never
  // crosses a plain connection.
  if (out.server.starts_with("http://")) {
    const bool hadCredentials = !out.bearerToken.empty() || !out.tokenFile.empty() ||
                                !out.clientCertPem.empty() || out.exec.has_value();
    RestConfig plain;
    plain.server = out.server;
    plain.namespace_ = out.namespace_;
    if (hadCredentials) {
      plain.warnings.push_back("server " + util::quoteGo(out.server) +
                               " is plain http: the user's credentials are not sent");
    }
    return plain;
  }
  return out;
}

Result<RestConfig> loadKubeconfig(std::string_view text, std::string_view path,
                                  std::string_view context, const FileReader& read) {
  return loadKubeconfigs({KubeconfigFile{std::string(path), std::string(text)}}, context, read);
}

std::vector<std::string> kubeconfigSearchPaths(const Env& getenv) {
  std::vector<std::string> paths;
  const std::string list = getenv("KUBECONFIG");
  if (list.empty()) {
    const std::string home = getenv("HOME");
    if (!home.empty()) {
      paths.push_back(home + "/.kube/config");
    }
    return paths;
  }
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(':', start);
    if (end == std::string::npos) {
      end = list.size();
    }
    std::string path = list.substr(start, end - start);
    start = end + 1;
    if (!path.empty() && std::find(paths.begin(), paths.end(), path) == paths.end()) {
      paths.push_back(std::move(path));
    }
  }
  return paths;
}

Result<RestConfig> loadKubeconfigFiles(const std::vector<std::string>& paths,
                                       std::string_view context, const FileReader& read,
                                       const FileExists& exists) {
  std::vector<KubeconfigFile> files;
  std::string looked;
  for (const std::string& path : paths) {
    looked += (looked.empty() ? "" : ", ") + path;
    if (!exists(path)) {
      continue;  // as kubectl: a listed file that does not exist is skipped
    }
    Result<std::string> text = read(path, kMaxConfigFileBytes);
    if (!text.ok()) {
      return text.error().wrap("kubeconfig " + path);
    }
    files.push_back(KubeconfigFile{path, *std::move(text)});
  }
  if (files.empty()) {
    return Error{util::ErrorCode::NotFound,
                 looked.empty() ? "no kubeconfig: neither KUBECONFIG nor HOME is set"
                                : "no kubeconfig file exists (looked at " + looked + ")"};
  }
  return loadKubeconfigs(files, context, read);
}

Result<RestConfig> inClusterConfig(const Env& getenv, const FileReader& read) {
  const std::string host = getenv("KUBERNETES_SERVICE_HOST");
  const std::string port = getenv("KUBERNETES_SERVICE_PORT");
  if (host.empty() || port.empty()) {
    return Error{util::ErrorCode::NotFound,
                 "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
                 "KUBERNETES_SERVICE_PORT must be defined"};
  }
  RestConfig out;
  // An IPv6 address is bracketed, as net.JoinHostPort does.
  const bool ipv6 = host.find(':') != std::string::npos;
  out.server = "https://" + (ipv6 ? "[" + host + "]" : host) + ":" + port;

  const std::string tokenPath(kServiceAccountTokenPath);
  Result<std::string> token = read(tokenPath, kMaxTokenFileBytes);
  if (!token.ok()) {
    return token.error().wrap("unable to load in-cluster configuration: reading " + tokenPath);
  }
  if (Result<void> size = checkTokenSize(*token, tokenPath); !size.ok()) {
    return size.error().wrap("unable to load in-cluster configuration");
  }
  out.bearerToken = std::string(trimSpace(*token));
  out.tokenFile = tokenPath;

  // As client-go: an unusable ca.crt is logged and the system roots are used instead.
  const std::string caPath(kServiceAccountCAPath);
  Result<std::string> ca = read(caPath, kMaxConfigFileBytes);
  if (!ca.ok()) {
    out.warnings.push_back("Expected to load root CA config from " + caPath +
                           ", but got err: " + ca.error().message);
  } else if (!hasPemBlock(*ca, "CERTIFICATE")) {
    out.warnings.push_back("Expected to load root CA config from " + caPath +
                           ", but got err: data does not contain any valid RSA or ECDSA "
                           "certificates");
  } else {
    out.caPem = *std::move(ca);
  }
  return out;
}

}  // namespace berth::client
