// Checks for berth's deployment artifacts, run by scripts/check-deploy.sh with the packages of
// tests/deploy/package.json installed under NODE_MODULES (default .tools/node/node_modules).
//
//   node check.mjs validate FILE...          every object against the Kubernetes OpenAPI schema
//   node check.mjs reject FILE...            every object must fail validation (a self-test)
//   node check.mjs compare PLAIN CHART       deploy/ and the chart's default rendering are the same
//   node check.mjs rbac FILE                 the RBAC rules are exactly berth's least privilege
//   node check.mjs configs FILE DIR          writes each ConfigMap's config.yaml to DIR/NAME.yaml
//   node check.mjs rules FILE OUT            writes the PrometheusRule's spec to OUT (for promtool)
//   node check.mjs metrics SCRAPE FILE...    rules, dashboards and rule tests use berth's metrics
//   node check.mjs config-values CONFIG OUT  chart values carrying CONFIG's profiles
//   node check.mjs same-profiles CONFIG RENDERED   the chart rendered CONFIG's profiles unchanged
//   node check.mjs get FILE KIND PATH        the value at PATH of FILE's one KIND object, as JSON
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
  // `helm test` pods exist only while the test runs; deploy/ has no counterpart.
  const installed = (o) => o.metadata?.annotations?.["helm.sh/hook"] === undefined;
  const plain = new Map(readObjects(plainFile).map((o) => [key(o), normalise(o)]));
  const chart = new Map(readObjects(chartFile).filter(installed).map((o) => [key(o), normalise(o)]));
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
// Pod delete is preemption's (DefaultPreemption's victims), as in upstream's system:kube-scheduler.
const wantRules = {
  ClusterRole: [
    { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "delete"] },
    { apiGroups: [""], resources: ["nodes"], verbs: ["list", "watch"] },
    { apiGroups: [""], resources: ["namespaces"], verbs: ["list", "watch"] },
    { apiGroups: [""], resources: ["services"], verbs: ["list", "watch"] },
    { apiGroups: [""], resources: ["replicationcontrollers"], verbs: ["list", "watch"] },
    { apiGroups: ["apps"], resources: ["replicasets"], verbs: ["list", "watch"] },
    { apiGroups: ["apps"], resources: ["statefulsets"], verbs: ["list", "watch"] },
    { apiGroups: ["policy"], resources: ["poddisruptionbudgets"], verbs: ["list", "watch"] },
    { apiGroups: [""], resources: ["persistentvolumes"],
      verbs: ["get", "list", "watch", "update"] },
    { apiGroups: [""], resources: ["persistentvolumeclaims"],
      verbs: ["get", "list", "watch", "update"] },
    { apiGroups: ["storage.k8s.io"], resources: ["storageclasses"], verbs: ["list", "watch"] },
    { apiGroups: ["storage.k8s.io"], resources: ["csinodes"], verbs: ["list", "watch"] },
    { apiGroups: ["storage.k8s.io"], resources: ["csidrivers"], verbs: ["list", "watch"] },
    { apiGroups: ["storage.k8s.io"], resources: ["csistoragecapacities"], verbs: ["list", "watch"] },
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

// The role Prometheus' service account is bound to, to read /metrics (berth asks the API server
// with a SubjectAccessReview); the chart and deploy/ do not bind it.
const metricsReaderRules = [{ nonResourceURLs: ["/metrics", "/metrics/resources"], verbs: ["get"] }];
const isMetricsReader = (o) => o.kind === "ClusterRole" && o.metadata.name.endsWith("-metrics-reader");
// The bootstrap Role that lets delegating components read the cluster's client CA.
const authReader = "extension-apiserver-authentication-reader";

function rbac(file) {
  const all = readObjects(file);
  const readers = all.filter(isMetricsReader);
  if (readers.length !== 1 || !isDeepStrictEqual(readers[0].rules, metricsReaderRules)) {
    throw new Error(`${file}: want one ClusterRole *-metrics-reader with rules ` +
                    `${JSON.stringify(metricsReaderRules)}, got ${JSON.stringify(readers)}`);
  }
  const objects = all.filter((o) => !isMetricsReader(o));
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

// --- alerts and dashboard -----------------------------------------------------------------------

// The one PrometheusRule of FILE, its spec written to OUT as a Prometheus rules file for promtool.
function rules(file, out) {
  const found = readObjects(file).filter((o) => o.kind === "PrometheusRule");
  if (found.length !== 1) {
    throw new Error(`${file}: want one PrometheusRule, got ${found.length}`);
  }
  writeFileSync(out, YAML.stringify(found[0].spec));
  console.log(`rules: ${describe(found[0])} written to ${out}`);
}

// A /metrics scrape: each metric name with the label-name sets of its samples, and the families
// (a histogram's samples are NAME_bucket, NAME_sum and NAME_count).
function readScrape(file) {
  const samples = new Map();
  const families = new Map();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const type = line.match(/^# TYPE (\S+) (\S+)/);
    if (type) {
      families.set(type[1], type[2]);
      continue;
    }
    const sample = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? /);
    if (!sample) {
      continue;
    }
    const labels = [...(sample[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)].map((m) => m[1]);
    if (!samples.has(sample[1])) {
      samples.set(sample[1], new Set());
    }
    samples.get(sample[1]).add(labels.sort().join(","));
  }
  if (families.size === 0) {
    throw new Error(`${file}: not a Prometheus text exposition`);
  }
  return { samples, families };
}

function exported(scrape, name) {
  if (scrape.families.has(name) || scrape.samples.has(name)) {
    return true;
  }
  const base = name.replace(/_(bucket|sum|count)$/, "");
  return base !== name && ["histogram", "summary"].includes(scrape.families.get(base));
}

// The metric names a PromQL expression selects: identifiers outside strings, label matchers, range
// and subquery brackets and grouping clauses, that are neither functions nor keywords.
const promqlKeywords = new Set(["and", "or", "unless", "by", "without", "on", "ignoring",
  "group_left", "group_right", "bool", "offset", "inf", "nan"]);
function metricNames(expr) {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names = [];
  for (const m of bare.matchAll(/(?<![\w.:$])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    if (!m[2] && !promqlKeywords.has(m[1].toLowerCase())) {
      names.push(m[1]);
    }
  }
  return names;
}

// Every expression of a Grafana dashboard, with where it is; label_values(METRIC, label) in the
// templating names METRIC.
function dashboardExpressions(dashboard, where) {
  const exprs = [];
  const ids = new Set();
  const variables = new Set(["__rate_interval", "__interval", "__range"]);
  for (const v of dashboard.templating?.list ?? []) {
    variables.add(v.name);
    const query = typeof v.query === "string" ? v.query : v.query?.query;
    const labelValues = query?.match(/^label_values\(\s*([^,)]+?)\s*,/);
    if (labelValues) {
      exprs.push({ where: `${where}: variable ${v.name}`, expr: labelValues[1] });
    }
  }
  if (!Array.isArray(dashboard.panels) || dashboard.panels.length === 0 || !dashboard.uid ||
      !dashboard.title) {
    throw new Error(`${where}: a dashboard needs a title, a uid and panels`);
  }
  for (const panel of dashboard.panels) {
    const name = `${where}: panel ${panel.id} "${panel.title}"`;
    if (!Number.isInteger(panel.id) || ids.has(panel.id) || !panel.title || !panel.gridPos ||
        !Array.isArray(panel.targets) || panel.targets.length === 0) {
      throw new Error(`${name}: needs a unique id, a title, a gridPos and targets`);
    }
    ids.add(panel.id);
    for (const target of panel.targets) {
      for (const used of (target.expr ?? "").matchAll(/\$\{?(\w+)/g)) {
        if (!variables.has(used[1])) {
          throw new Error(`${name}: $${used[1]} is not a dashboard variable`);
        }
      }
      exprs.push({ where: name, expr: target.expr });
    }
  }
  return exprs;
}

// Files of PrometheusRules, Grafana dashboards (JSON, or ConfigMaps holding *.json) and promtool
// tests (other objects are skipped): every metric their expressions name is one berth exports (in SCRAPE, a real /metrics),
// and every test input series has the name and label names of a scraped series.
function metrics(scrapeFile, files) {
  const scrape = readScrape(scrapeFile);
  const exprs = [];
  const series = [];
  for (const file of files) {
    const before = exprs.length + series.length;
    if (file.endsWith(".json")) {
      exprs.push(...dashboardExpressions(JSON.parse(readFileSync(file, "utf8")), file));
      continue;
    }
    for (const obj of readObjects(file)) {
      if (obj.kind === "PrometheusRule") {
        for (const group of obj.spec.groups) {
          for (const rule of group.rules) {
            exprs.push({ where: `${file}: ${rule.alert ?? rule.record}`, expr: rule.expr });
          }
        }
      } else if (obj.kind === "ConfigMap") {
        for (const [key, text] of Object.entries(obj.data ?? {})) {
          if (key.endsWith(".json")) {
            exprs.push(...dashboardExpressions(JSON.parse(text), `${file}: ${key}`));
          }
        }
      } else if (Array.isArray(obj.tests)) {
        for (const test of obj.tests) {
          for (const input of test.input_series ?? []) {
            series.push({ where: file, series: input.series });
          }
          for (const e of test.promql_expr_test ?? []) {
            exprs.push({ where: `${file}: promql_expr_test`, expr: e.expr });
          }
        }
      }
    }
    if (exprs.length + series.length === before) {
      throw new Error(`${file}: no PrometheusRule, dashboard or rules test`);
    }
  }
  const problems = [];
  let names = 0;
  for (const { where, expr } of exprs) {
    const used = metricNames(expr);
    if (used.length === 0) {
      problems.push(`${where}: no metric in ${JSON.stringify(expr)}`);
    }
    for (const name of used) {
      names++;
      if (!exported(scrape, name)) {
        problems.push(`${where}: ${name} is not in berth's /metrics`);
      }
    }
  }
  // Prometheus adds job and instance (and the Operator namespace, pod, service...): not berth's.
  const added = new Set(["job", "instance"]);
  const unsampled = new Set();
  for (const { where, series: text } of series) {
    const m = text.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?$/);
    const labels = [...(m?.[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*=/g)]
      .map((l) => l[1]).filter((l) => !added.has(l)).sort().join(",");
    if (m && !scrape.samples.has(m[1]) && exported(scrape, m[1])) {
      unsampled.add(m[1]);  // declared, but the scrape had no sample to compare labels with
    } else if (!m || !scrape.samples.has(m[1])) {
      problems.push(`${where}: input series ${text}: no such series in berth's /metrics`);
    } else if (!scrape.samples.get(m[1]).has(labels)) {
      problems.push(`${where}: input series ${text}: berth's ${m[1]} has labels ` +
                    `${[...scrape.samples.get(m[1])].map((l) => `{${l}}`).join(" or ")}`);
    }
  }
  if (problems.length > 0) {
    throw new Error(`expressions or series berth does not export:\n  ${problems.join("\n  ")}`);
  }
  console.log(`metrics: ${exprs.length} expressions (${names} metric names) and ${series.length} ` +
              `test series match ${basename(scrapeFile)}`);
  if (unsampled.size > 0) {
    console.log(`metrics: no samples of ${[...unsampled].join(", ")} in the scrape: their test ` +
                `series' label names are unchecked`);
  }
}

// The value at PATH (/spec/endpoints/0/tlsConfig) of the one KIND object in FILE, as JSON.
function get(file, kind, path) {
  const found = readObjects(file).filter((o) => o.kind === kind);
  if (found.length !== 1) {
    throw new Error(`${file}: want one ${kind}, got ${found.length}`);
  }
  const value = path.split("/").filter((p) => p !== "").reduce((v, k) => v?.[k], found[0]);
  console.log(JSON.stringify(value));
}

// --- values from a configuration ----------------------------------------------------------------

// The chart values that carry CONFIG's profiles and global scheduling settings, written to OUT;
// `same-profiles` then checks the chart rendered them unchanged.
const carried = ["profiles", "percentageOfNodesToScore", "parallelism", "podInitialBackoffSeconds",
  "podMaxBackoffSeconds"];
function configValues(config, out) {
  const parsed = YAML.parse(readFileSync(config, "utf8"));
  writeFileSync(out, YAML.stringify(Object.fromEntries(carried.map((k) => [k, parsed[k] ?? null]))));
  console.log(`config-values: ${config}: ${parsed.profiles.length} profiles written to ${out}`);
}

function sameProfiles(config, rendered) {
  const want = YAML.parse(readFileSync(config, "utf8"));
  const got = YAML.parse(readFileSync(rendered, "utf8"));
  const problems = carried.flatMap((k) => differences(want[k], got[k], `/${k}`));
  if (problems.length > 0) {
    throw new Error(`${rendered} differs from ${config}:\n  ${problems.join("\n  ")}`);
  }
  console.log(`same-profiles: ${basename(rendered)} has ${basename(config)}'s profiles`);
}

const [command, ...args] = process.argv.slice(2);
const commands = {
  validate: () => validate(args),
  reject: () => reject(args),
  compare: () => compare(args[0], args[1]),
  rbac: () => rbac(args[0]),
  configs: () => configs(args[0], args[1]),
  rules: () => rules(args[0], args[1]),
  metrics: () => metrics(args[0], args.slice(1)),
  "config-values": () => configValues(args[0], args[1]),
  "same-profiles": () => sameProfiles(args[0], args[1]),
  get: () => get(args[0], args[1], args[2]),
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
