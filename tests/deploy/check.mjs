// Checks for berth's deployment artifacts, run by scripts/check-deploy.sh with the packages of
// tests/deploy/package.json installed under NODE_MODULES (default .tools/node/node_modules).
//
//   node check.mjs validate FILE...          every object against the Kubernetes OpenAPI schema
//   node check.mjs reject FILE...            every object must fail validation (a self-test)
//   node check.mjs compare PLAIN CHART       deploy/ and the chart's default rendering are the same
//   node check.mjs rbac FILE                 the RBAC rules are exactly berth's least privilege
//   node check.mjs configs FILE DIR          writes each ConfigMap's config.yaml to DIR/NAME.yaml
//
// Validation uses the schemas compiled by the kubernetes-models packages (Kubernetes' own OpenAPI
// definitions, and the Prometheus Operator's CRD schema for ServiceMonitor). Those schemas, like
// the API server's, do not forbid unknown fields, so the check adds what `kubectl --validate=strict`
// does: the object is handed to the validator behind a proxy that records which fields the schema
// looks up, and a field of a typed object that the schema never looked up is reported as unknown.

import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join, resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { pathToFileURL } from "node:url";

const modules = resolve(process.env.NODE_MODULES ?? ".tools/node/node_modules");
const requireModule = createRequire(join(modules, "noop.js"));
const YAML = requireModule("yaml");
const localizeEn = requireModule("ajv-i18n/localize/en");  // ajv's English messages

// Kubernetes reads manifests as YAML 1.1 (yes/no/on/off are booleans), so the checks do too.
function readObjects(file) {
  const docs = YAML.parseAllDocuments(readFileSync(file, "utf8"), { version: "1.1" });
  const objects = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      throw new Error(`${file}: ${doc.errors[0].message}`);
    }
    const value = doc.toJS();
    if (value === null || value === undefined) {
      continue;  // an empty document, e.g. a template that rendered nothing
    }
    objects.push(value);
  }
  return objects;
}

function describe(obj) {
  const ns = obj?.metadata?.namespace ? `${obj.metadata.namespace}/` : "";
  return `${obj?.kind ?? "?"} ${ns}${obj?.metadata?.name ?? "?"}`;
}

// --- validation ---------------------------------------------------------------------------------

// The compiled schema of an apiVersion/kind: kubernetes-models names them IoK8sApi<Group><Version>
// <Kind> after the first label of the group ("" is Core).
async function schemaFor(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
  let file;
  if (group === "monitoring.coreos.com") {
    file = join(modules, "@kubernetes-models/prometheus-operator/_schemas",
                `ComGithubPrometheusOperatorPrometheusOperatorPkgApisMonitoring${cap(version)}${kind}.js`);
  } else {
    const groupName = group === "" ? "Core" : cap(group.split(".")[0]);
    file = join(modules, "kubernetes-models/_schemas", `IoK8sApi${groupName}${cap(version)}${kind}.js`);
  }
  try {
    return (await import(pathToFileURL(file).href)).validate;
  } catch (e) {
    if (e.code === "ERR_MODULE_NOT_FOUND") {
      throw new Error(`no schema for ${apiVersion} ${kind}`);
    }
    throw e;
  }
}

// Wraps value so that every object records the keys the validator read and whether it listed them
// (as it does for maps such as labels).
function tracked(value, path, records) {
  if (value === null || typeof value !== "object") {
    return value;
  }
  const record = { path, value, read: new Set(), listed: false };
  if (!Array.isArray(value)) {
    records.push(record);
  }
  const children = new Map();
  return new Proxy(value, {
    get(target, key, receiver) {
      if (typeof key !== "string" || !Object.hasOwn(target, key)) {
        return Reflect.get(target, key, receiver);
      }
      record.read.add(key);
      if (!children.has(key)) {
        children.set(key, tracked(target[key], `${path}/${key}`, records));
      }
      return children.get(key);
    },
    has(target, key) {
      record.read.add(key);
      return Reflect.has(target, key);
    },
    ownKeys(target) {
      record.listed = true;
      return Reflect.ownKeys(target);
    },
  });
}

async function validationErrors(obj) {
  if (typeof obj?.apiVersion !== "string" || typeof obj?.kind !== "string") {
    return ["apiVersion and kind are required"];
  }
  let validate;
  try {
    validate = await schemaFor(obj.apiVersion, obj.kind);
  } catch (e) {
    return [e.message];
  }
  const records = [];
  const errors = [];
  if (!validate(tracked(obj, "", records))) {
    localizeEn(validate.errors);
    for (const e of validate.errors) {
      errors.push(`${e.instancePath || "/"}: ${e.message}`);
    }
  }
  for (const { path, value, read, listed } of records) {
    // A typed object reads each of its declared fields; an untyped one reads none: skip those.
    if (listed || read.size === 0) {
      continue;
    }
    for (const key of Object.keys(value)) {
      if (!read.has(key)) {
        errors.push(`${path}/${key}: unknown field "${key}"`);
      }
    }
  }
  return errors;
}

async function validate(files) {
  let failed = 0;
  let count = 0;
  for (const file of files) {
    for (const obj of readObjects(file)) {
      count++;
      const errors = await validationErrors(obj);
      for (const e of errors) {
        console.error(`${file}: ${describe(obj)}: ${e}`);
      }
      failed += errors.length > 0 ? 1 : 0;
    }
  }
  if (failed > 0) {
    throw new Error(`${failed} of ${count} objects are invalid`);
  }
  console.log(`validate: ${count} objects valid`);
}

// Each object must be rejected, with the message its `expect` annotation names: proves that the
// validator catches wrong types, bad enums and unknown fields.
async function reject(files) {
  let count = 0;
  for (const file of files) {
    for (const obj of readObjects(file)) {
      count++;
      const expect = obj.metadata?.annotations?.expect;
      delete obj.metadata.annotations;
      const errors = await validationErrors(obj);
      if (!errors.some((e) => e.includes(expect))) {
        throw new Error(`${file}: ${describe(obj)}: want an error containing "${expect}", ` +
                        `got ${JSON.stringify(errors)}`);
      }
    }
  }
  console.log(`reject: ${count} invalid objects rejected`);
}

// --- deploy/ against the chart ------------------------------------------------------------------

const helmLabels = ["helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/version"];

// What the chart adds for Helm's sake: its bookkeeping labels and the config checksum annotation.
// Configurations are compared as data, since the chart writes them with different key order.
function normalise(obj) {
  const copy = structuredClone(obj);
  const strip = (meta, annotations) => {
    for (const l of helmLabels) {
      delete meta?.labels?.[l];
    }
    for (const a of annotations) {
      delete meta?.annotations?.[a];
    }
    if (meta?.annotations && Object.keys(meta.annotations).length === 0) {
      delete meta.annotations;
    }
  };
  strip(copy.metadata, []);
  if (copy.kind === "Deployment") {
    strip(copy.spec.template.metadata, ["checksum/config"]);
  }
  if (copy.kind === "ConfigMap" && copy.data?.["config.yaml"] !== undefined) {
    copy.data["config.yaml"] = YAML.parse(copy.data["config.yaml"]);
  }
  return copy;
}

function differences(a, b, path = "") {
  if (isDeepStrictEqual(a, b)) {
    return [];
  }
  if (a && b && typeof a === "object" && typeof b === "object" &&
      Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => differences(a[k], b[k], `${path}/${k}`));
  }
  return [`${path || "/"}: deploy/ has ${JSON.stringify(a)}, the chart ${JSON.stringify(b)}`];
}

function compare(plainFile, chartFile) {
  const key = (o) => `${o.kind} ${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
  const plain = new Map(readObjects(plainFile).map((o) => [key(o), normalise(o)]));
  const chart = new Map(readObjects(chartFile).map((o) => [key(o), normalise(o)]));
  const problems = [];
  for (const [k, obj] of plain) {
    if (obj.kind === "Namespace") {
      continue;  // helm install --create-namespace makes it
    }
    if (!chart.has(k)) {
      problems.push(`${k}: in deploy/ but not rendered by the chart`);
      continue;
    }
    problems.push(...differences(obj, chart.get(k)).map((d) => `${k}: ${d}`));
  }
  for (const k of chart.keys()) {
    if (!plain.has(k)) {
      problems.push(`${k}: rendered by the chart but not in deploy/`);
    }
  }
  if (problems.length > 0) {
    throw new Error(`deploy/ and the chart differ:\n  ${problems.join("\n  ")}`);
  }
  console.log(`compare: ${basename(plainFile)} and ${basename(chartFile)} agree (${chart.size} objects)`);
}

// --- RBAC ---------------------------------------------------------------------------------------

// Exactly what the daemon uses (see deploy/rbac.yaml): a new permission is a deliberate change here.
const wantRules = {
  ClusterRole: [
    { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] },
    { apiGroups: [""], resources: ["nodes"], verbs: ["list", "watch"] },
    { apiGroups: [""], resources: ["namespaces"], verbs: ["list", "watch"] },
    { apiGroups: [""], resources: ["services"], verbs: ["list", "watch"] },
    { apiGroups: [""], resources: ["replicationcontrollers"], verbs: ["list", "watch"] },
    { apiGroups: ["apps"], resources: ["replicasets"], verbs: ["list", "watch"] },
    { apiGroups: ["apps"], resources: ["statefulsets"], verbs: ["list", "watch"] },
    { apiGroups: [""], resources: ["pods/binding"], verbs: ["create"] },
    { apiGroups: [""], resources: ["pods/status"], verbs: ["patch"] },
    { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
    { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
    { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
    { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
  ],
  Role: [
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], resourceNames: ["berth"],
      verbs: ["get", "update"] },
  ],
};

// The ClusterRole scrapers are bound to (not berth's own).
const wantMetricsReader = [{ nonResourceURLs: ["/metrics", "/metrics/resources"], verbs: ["get"] }];
const isMetricsReader = (o) => o.kind === "ClusterRole" && o.metadata.name.endsWith("-metrics-reader");
// The bootstrap Role that lets delegating components read the cluster's client CA.
const authReader = "extension-apiserver-authentication-reader";

function rbac(file) {
  const objects = readObjects(file);
  const readers = objects.filter(isMetricsReader);
  if (readers.length !== 1 || !isDeepStrictEqual(readers[0].rules, wantMetricsReader)) {
    throw new Error(`${file}: want one *-metrics-reader ClusterRole with rules\n` +
                    YAML.stringify(wantMetricsReader));
  }
  for (const [kind, want] of Object.entries(wantRules)) {
    const roles = objects.filter((o) => o.kind === kind && !isMetricsReader(o));
    if (roles.length !== 1) {
      throw new Error(`${file}: want one ${kind}, got ${roles.length}`);
    }
    if (!isDeepStrictEqual(roles[0].rules, want)) {
      throw new Error(`${file}: ${describe(roles[0])}: rules are\n${YAML.stringify(roles[0].rules)}` +
                      `want\n${YAML.stringify(want)}`);
    }
  }
  // Each role is bound to berth's service account, in berth's namespace; so is the bootstrap
  // Role in kube-system.
  const account = objects.find((o) => o.kind === "ServiceAccount");
  const subjects = [{ kind: "ServiceAccount", name: account.metadata.name,
    namespace: account.metadata.namespace }];
  for (const kind of ["ClusterRoleBinding", "RoleBinding"]) {
    const roleKind = kind.replace("Binding", "");
    const role = objects.find((o) => o.kind === roleKind && !isMetricsReader(o));
    const bindings = objects.filter((o) => o.kind === kind && o.roleRef.name !== authReader);
    const ok = bindings.length === 1 && bindings[0].roleRef.kind === roleKind &&
        bindings[0].roleRef.name === role.metadata.name &&
        isDeepStrictEqual(bindings[0].subjects, subjects);
    if (!ok) {
      throw new Error(`${file}: want one ${kind} of ${roleKind} ${role.metadata.name} to ` +
                      `ServiceAccount ${describe(account)}`);
    }
  }
  const readerBindings = objects.filter((o) => o.kind === "RoleBinding" &&
      o.roleRef.name === authReader);
  if (readerBindings.length !== 1 || readerBindings[0].roleRef.kind !== "Role" ||
      readerBindings[0].metadata.namespace !== "kube-system" ||
      !isDeepStrictEqual(readerBindings[0].subjects, subjects)) {
    throw new Error(`${file}: want one RoleBinding of Role ${authReader} in kube-system to ` +
                    `ServiceAccount ${describe(account)}`);
  }
  const role = objects.find((o) => o.kind === "Role");
  if (role.metadata.namespace !== account.metadata.namespace) {
    throw new Error(`${file}: the leader election Role must be in berth's namespace`);
  }
  console.log(`rbac: ${basename(file)}: exactly berth's rules, bound to ${describe(account)}`);
}

// --- configurations -----------------------------------------------------------------------------

function configs(file, dir) {
  const names = [];
  for (const obj of readObjects(file)) {
    if (obj.kind === "ConfigMap" && obj.data?.["config.yaml"] !== undefined) {
      const config = YAML.parse(obj.data["config.yaml"]);
      // berth's Lease lives where berth runs: the daemon's Role only reaches that namespace.
      if (config.leaderElection?.leaderElect !== false &&
          config.leaderElection?.resourceNamespace !== obj.metadata.namespace) {
        throw new Error(`${file}: ${describe(obj)}: leaderElection.resourceNamespace is ` +
                        `${config.leaderElection?.resourceNamespace}, want ${obj.metadata.namespace}`);
      }
      const path = join(dir, `${obj.metadata.name}.yaml`);
      writeFileSync(path, obj.data["config.yaml"]);
      names.push(path);
    }
  }
  if (names.length === 0) {
    throw new Error(`${file}: no ConfigMap with config.yaml`);
  }
  console.log(names.join("\n"));
}

const [command, ...args] = process.argv.slice(2);
const commands = {
  validate: () => validate(args),
  reject: () => reject(args),
  compare: () => compare(args[0], args[1]),
  rbac: () => rbac(args[0]),
  configs: () => configs(args[0], args[1]),
};
if (!commands[command]) {
  console.error(`usage: node check.mjs ${Object.keys(commands).join("|")} ARGS...`);
  process.exit(2);
}
try {
  await commands[command]();
} catch (e) {
  console.error(`${command}: ${e.message}`);
  process.exit(1);
}
