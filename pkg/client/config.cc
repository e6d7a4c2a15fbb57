#include "pkg/client/config.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
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
  std::string field;  // "clusters[0].cluster"
  std::string server;
  std::string caFile;
  std::string caData;
  bool insecure = false;
  std::string tlsServerName;
  bool hasProxy = false;
};

struct User {
  std::string field;  // "users[0].user"
  std::string certFile, certData, keyFile, keyData;
  std::string token, tokenFile;
  // The first setting berth cannot honour, reported only if this user is chosen.
  std::optional<Error> unsupported;
};

struct Context {
  std::string field;  // "contexts[0].context"
  std::string cluster;
  std::string user;
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
  // Settings that would change who berth is or how it gets credentials: refuse rather than ignore.
  if (member(obj, "exec") != nullptr) {
    u.unsupported = Error{
        util::ErrorCode::Unimplemented,
        "user " + util::quoteGo(name) + ": exec credential plugins are not supported by berth"};
  } else if (member(obj, "auth-provider") != nullptr) {
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
                                   const std::string& field) {
  Result<std::string> content = read(path);
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

Result<void> applyCluster(const Cluster& c, std::string_view name, std::string_view path,
                          const FileReader& read, RestConfig& out) {
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

Result<void> applyUser(const User& u, std::string_view name, std::string_view path,
                       const FileReader& read, RestConfig& out) {
  if (u.unsupported) {
    return *u.unsupported;
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
    Result<std::string> token = readReferenced(read, out.tokenFile, field);
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

std::string defaultUserAgent() { return std::string("berth/") + BERTH_VERSION; }

Result<RestConfig> loadKubeconfig(std::string_view text, std::string_view path,
                                  std::string_view context, const FileReader& read) {
  const std::string prefix = "kubeconfig " + std::string(path);
  Result<Kubeconfig> parsed = parseKubeconfig(text);
  if (!parsed.ok()) {
    return parsed.error().wrap(prefix);
  }
  const Kubeconfig& cfg = *parsed;

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

  if (c.cluster.empty()) {
    return util::invalidArgument(c.field + ".cluster: cluster was not specified for context " +
                                 util::quoteGo(contextName))
        .wrap(prefix);
  }
  const auto cluster = cfg.clusters.find(c.cluster);
  if (cluster == cfg.clusters.end()) {
    return util::invalidArgument(c.field + ".cluster: cluster " + util::quoteGo(c.cluster) +
                                 " not found")
        .wrap(prefix);
  }
  // An empty user means anonymous, as in client-go; a named one must exist (client-go would
  // silently go anonymous, which only surfaces later as 401 or 403).
  const User* user = nullptr;
  if (!c.user.empty()) {
    const auto it = cfg.users.find(c.user);
    if (it == cfg.users.end()) {
      return util::invalidArgument(c.field + ".user: user " + util::quoteGo(c.user) + " not found")
          .wrap(prefix);
    }
    user = &it->second;
  }

  RestConfig out;
  if (Result<void> r = applyCluster(cluster->second, c.cluster, path, read, out); !r.ok()) {
    return r.error().wrap(prefix);
  }
  if (user != nullptr) {
    if (Result<void> r = applyUser(*user, c.user, path, read, out); !r.ok()) {
      return r.error().wrap(prefix);
    }
  }
  // client-go applies TLS settings and credentials only to https servers, so a token never
  // crosses a plain connection.
  if (out.server.starts_with("http://")) {
    const bool hadCredentials =
        !out.bearerToken.empty() || !out.tokenFile.empty() || !out.clientCertPem.empty();
    RestConfig plain;
    plain.server = out.server;
    if (hadCredentials) {
      plain.warnings.push_back("server " + util::quoteGo(out.server) +
                               " is plain http: the user's credentials are not sent");
    }
    return plain;
  }
  return out;
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
  Result<std::string> token = read(tokenPath);
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
  Result<std::string> ca = read(caPath);
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
