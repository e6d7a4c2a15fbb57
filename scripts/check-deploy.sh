#!/usr/bin/env bash
# Checks berth's deployment artifacts: deploy/ (kustomize), charts/berth (Helm) and the Dockerfile.
#
#   scripts/check-deploy.sh [BERTH_BINARY]      (or BERTH=path; run scripts/install-tools.sh first)
#
# - helm lint (strict) and helm template of the chart with default, custom and minimal values
#   (tests/deploy/values-*.yaml) and with examples/config.yaml's profiles, and kubectl kustomize
#   deploy/;
# - the Dockerfile, scripts/demo.sh and CI build with the one release definition;
# - every rendered object, deploy/optional and deploy/examples against the Kubernetes OpenAPI schemas
#   (kubernetes-models, unknown fields rejected), after proving the validator rejects bad objects;
# - the chart's values schema and guards reject bad values, and its plugin names are berth's;
# - the ServiceMonitor's HTTPS settings, with the self-signed and with a mounted certificate;
# - the alerts: `promtool check rules` and `promtool test rules` (tests/deploy/rules-test.yaml), and
#   the Grafana dashboard's JSON;
# - deploy/ and the chart's default rendering are the same objects, and the RBAC is exactly berth's;
# - with a berth binary: each rendered KubeSchedulerConfiguration is accepted by `berth simulate`,
#   every metric the alerts, the dashboard and the rule tests' series use is in a real /metrics
#   of berth (tests/deploy/scrape-metrics.sh), and the Dockerfile's runtime packages are exactly
#   those owning the libraries in `ldd berth` (give the release binary, not a sanitizer build).
set -euo pipefail
cd "$(dirname "$0")/.."
berth=${1:-${BERTH:-}}
helm=.tools/bin/helm
kubectl=.tools/bin/kubectl
if [ ! -x "$helm" ] || [ ! -x "$kubectl" ]; then
  echo "check-deploy: $helm and $kubectl are missing: run scripts/install-tools.sh" >&2
  exit 1
fi
if ! command -v promtool >/dev/null 2>&1; then
  echo "check-deploy: promtool is missing: run scripts/install-deps.sh (Debian package prometheus)" >&2
  exit 1
fi

# The validators, pinned by tests/deploy/package-lock.json, installed once into .tools/node.
node_dir=.tools/node
if ! cmp -s tests/deploy/package-lock.json "$node_dir/package-lock.json" ||
    [ ! -d "$node_dir/node_modules/kubernetes-models" ]; then
  echo "== installing the validators into $node_dir"
  mkdir -p "$node_dir"
  cp tests/deploy/package.json tests/deploy/package-lock.json "$node_dir/"
  npm ci --prefix "$node_dir" --no-audit --no-fund --loglevel=error
fi
export NODE_MODULES="$PWD/$node_dir/node_modules"
check() { node tests/deploy/check.mjs "$@"; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== helm lint and render"
"$helm" lint --strict --quiet charts/berth
"$helm" lint --strict --quiet charts/berth -f tests/deploy/values-custom.yaml
"$helm" lint --strict --quiet charts/berth -f tests/deploy/values-minimal.yaml
"$helm" template berth charts/berth -n berth-system >"$out/chart-default.yaml"
"$helm" template sched charts/berth -n scheduling -f tests/deploy/values-custom.yaml \
  >"$out/chart-custom.yaml"
"$helm" template berth charts/berth -n berth-system -f tests/deploy/values-minimal.yaml \
  >"$out/chart-minimal.yaml"
for part in servicemonitor:serviceMonitor prometheusrule:prometheusRule \
    grafana-dashboard:grafanaDashboard; do
  "$helm" template berth charts/berth -n berth-system --set "${part#*:}.enabled=true" \
    --show-only "templates/${part%%:*}.yaml" >"$out/chart-${part%%:*}.yaml"
done
# examples/config.yaml's profiles and global settings as values deploy as they are.
check config-values examples/config.yaml "$out/values-examples.yaml"
"$helm" lint --strict --quiet charts/berth -f "$out/values-examples.yaml"
"$helm" template berth charts/berth -n berth-system -f "$out/values-examples.yaml" \
  >"$out/chart-examples.yaml"
mkdir "$out/examples"
check configs "$out/chart-examples.yaml" "$out/examples" >/dev/null
check same-profiles examples/config.yaml "$out/examples/berth-config.yaml"
"$kubectl" kustomize deploy/ >"$out/plain.yaml"

echo "== the chart rejects bad values"
# --set VALUE and a part of the error helm must print.
while IFS='|' read -r value want; do
  if err=$("$helm" template berth charts/berth --set "$value" 2>&1 >/dev/null); then
    echo "check-deploy: helm template --set $value succeeded; want an error" >&2
    exit 1
  fi
  if [[ "$err" != *"$want"* ]]; then
    echo "check-deploy: helm template --set $value: want \"$want\", got: $err" >&2
    exit 1
  fi
done <<'EOF'
replicas=two|at '/replicas': got string, want integer
replica=2|additional properties 'replica' not allowed
leaderElection.leaseDuration=15|at '/leaderElection/leaseDuration'
leaderElection.leaseDuration=15 seconds|at '/leaderElection/leaseDuration'
profiles[0].plugins.scor.enabled[0].name=NodeAffinity|additional properties 'scor' not allowed
profiles[0].plugins.score.enabled[0].name=NodeAffinity,profiles[0].plugins.score.enabled[0].weight=0|at '/profiles/0/plugins/score/enabled/0/weight'
profiles[0].plugins.filter.enabled[0].name=DynamicResources|at '/profiles/0/plugins/filter/enabled/0/name'
profiles[0].plugins.filter.disabled[0].name=NodeAfinity|at '/profiles/0/plugins/filter/disabled/0/name'
profiles[0].pluginConfig[0].name=NodeResourceFit,profiles[0].pluginConfig[0].args.x=1|at '/profiles/0/pluginConfig/0/name'
profiles[0].percentageOfNodesToScore=101|at '/profiles/0/percentageOfNodesToScore'
profiles=null|missing property 'profiles'
schedulerName=berth|additional properties 'schedulerName' not allowed
metrics.https=yes|at '/metrics/https'
tls.secretName=Not_A_Name|at '/tls/secretName'
tls.secretName=berth-tls,metrics.https=false|tls.secretName needs metrics.https
profiles[0].schedulerName=a,profiles[1].schedulerName=a|two profiles have the schedulerName "a"
prometheusRule.noLeaderFor=5 minutes|at '/prometheusRule/noLeaderFor'
prometheusRule.apiErrorRatio=2|at '/prometheusRule/apiErrorRatio'
extraArgs[0]=-v=3|at '/extraArgs/0'
networkPolicy.enable=true|additional properties 'enable' not allowed
image.pullPolicy=Sometimes|at '/image/pullPolicy'
image.digest=latest|at '/image/digest'
leaderElection.enabled=false|replicas > 1 needs leaderElection.enabled
serviceMonitor.enabled=true,metrics.service.enabled=false|serviceMonitor.enabled needs metrics.service.enabled
EOF
echo "chart values: bad values rejected"
# The schema's plugin names are berth's (pkg/plugins/names.h) and DefaultPreemption.
schema_plugins=$(node -e '
    const s = JSON.parse(require("fs").readFileSync("charts/berth/values.schema.json", "utf8"));
    console.log(s.definitions.pluginName.enum.join("\n"))' | sort)
berth_plugins=$({ grep -o '"[A-Za-z]*"' pkg/plugins/names.h | tr -d '"'; echo DefaultPreemption; } |
  sort -u)
if [ "$schema_plugins" != "$berth_plugins" ]; then
  echo "check-deploy: the values schema's plugin names differ from pkg/plugins/names.h:" >&2
  diff <(echo "$berth_plugins") <(echo "$schema_plugins") >&2
  exit 1
fi
echo "chart values: the schema's plugin names are berth's ($(wc -l <<<"$berth_plugins"))"
digest=sha256:$(printf '0%.0s' {1..64})
if ! "$helm" template berth charts/berth --set "image.digest=$digest" \
    --show-only templates/deployment.yaml | grep -q "image: \"berth@$digest\""; then
  echo "check-deploy: --set image.digest=$digest does not render the image by digest" >&2
  exit 1
fi
echo "chart values: image.digest pins the image by digest"
overlay=$out/digest-overlay
mkdir "$overlay"
cp deploy/*.yaml "$overlay/"
sed -i "s/^    newTag: .*/&\n    digest: $digest/" "$overlay/kustomization.yaml"
if ! "$kubectl" kustomize "$overlay" | grep -q "image: berth:.*@$digest"; then
  echo "check-deploy: a digest in deploy/kustomization.yaml does not pin the image" >&2
  exit 1
fi
echo "deploy/: a digest under images pins the image by digest"

echo "== OpenAPI validation"
check reject tests/deploy/invalid.yaml
check validate "$out/plain.yaml" "$out"/chart-*.yaml deploy/optional/*.yaml deploy/examples/*.yaml

echo "== deploy/ and the chart agree"
check compare "$out/plain.yaml" "$out/chart-default.yaml"
for part in servicemonitor prometheusrule grafana-dashboard; do
  check compare "deploy/optional/$part.yaml" "$out/chart-$part.yaml"
done
check rbac "$out/plain.yaml"
check rbac "$out/chart-default.yaml"
app_version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/berth/Chart.yaml)
project_version=$(sed -n 's/^project(berth VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
if [ "$app_version" != "$project_version" ]; then
  echo "check-deploy: charts/berth appVersion $app_version, CMakeLists.txt version $project_version" >&2
  exit 1
fi
echo "versions: chart appVersion and image tag $app_version = berth $project_version"

echo "== HTTPS: probes and the ServiceMonitor"
# Default: the self-signed certificate, not verified; custom: the mounted Secret's CA.
want_probe='{"path":"/readyz","port":"https-metrics","scheme":"HTTPS"}'
for file in plain chart-default; do
  got=$(check get "$out/$file.yaml" Deployment /spec/template/spec/containers/0/readinessProbe/httpGet)
  if [ "$got" != "$want_probe" ]; then
    echo "check-deploy: $file: readinessProbe.httpGet is $got, want $want_probe" >&2
    exit 1
  fi
done
while IFS='|' read -r file want; do
  got=$(check get "$file" ServiceMonitor /spec/endpoints/0)
  if [ "$got" != "$want" ]; then
    echo "check-deploy: $file: the ServiceMonitor's endpoint is $got, want $want" >&2
    exit 1
  fi
done <<ENDPOINTS
$out/chart-servicemonitor.yaml|{"port":"https-metrics","path":"/metrics","scheme":"https","interval":"30s","bearerTokenFile":"/var/run/secrets/kubernetes.io/serviceaccount/token","tlsConfig":{"insecureSkipVerify":true}}
$out/chart-custom.yaml|{"port":"https-metrics","path":"/metrics","scheme":"https","interval":"15s","scrapeTimeout":"10s","bearerTokenFile":"/var/run/secrets/kubernetes.io/serviceaccount/token","tlsConfig":{"ca":{"secret":{"name":"berth-serving-cert","key":"ca.crt"}},"serverName":"sched-berth-metrics.scheduling.svc"}}
ENDPOINTS
echo "ServiceMonitor: https with the service account token; self-signed: not verified, else the CA"

echo "== alerts and dashboard"
check rules deploy/optional/prometheusrule.yaml "$out/rules.yaml"
promtool check rules "$out/rules.yaml"
cp tests/deploy/rules-test.yaml "$out/"
promtool test rules "$out/rules-test.yaml"
check rules "$out/chart-custom.yaml" "$out/rules-custom.yaml"
promtool check rules "$out/rules-custom.yaml"
# Without leader election: no BerthNoLeader, and the queue gauges of the one replica.
"$helm" template berth charts/berth -n berth-system -f tests/deploy/values-minimal.yaml \
  --set prometheusRule.enabled=true --show-only templates/prometheusrule.yaml \
  >"$out/chart-rules-minimal.yaml"
check rules "$out/chart-rules-minimal.yaml" "$out/rules-minimal.yaml"
promtool check rules "$out/rules-minimal.yaml"
dashboard_json() {
  node -e 'console.log(JSON.stringify(require("fs").readFileSync(process.argv[1], "utf8")))' "$1"
}
if [ "$(check get deploy/optional/grafana-dashboard.yaml ConfigMap /data/berth.json)" != \
    "$(dashboard_json charts/berth/dashboards/berth.json)" ]; then
  echo "check-deploy: deploy/optional/grafana-dashboard.yaml is not charts/berth/dashboards/berth.json" >&2
  exit 1
fi
echo "dashboard: deploy/optional/grafana-dashboard.yaml holds charts/berth/dashboards/berth.json"

echo "== one release build"
# CI, the image and the demo build with scripts/build-release.sh, and none spells release flags of
# its own: what CI tests is what the image ships.
for f in Dockerfile scripts/demo.sh scripts/test.sh; do
  if ! grep -q "scripts/build-release.sh" "$f"; then
    echo "check-deploy: $f does not build with scripts/build-release.sh" >&2
    exit 1
  fi
  if grep -n -e "CMAKE_BUILD_TYPE=Release" -e "CMAKE_CXX_FLAGS_RELEASE" -e "cmake -S" "$f" >&2; then
    echo "check-deploy: $f sets release build flags of its own (above); use scripts/build-release.sh" >&2
    exit 1
  fi
done
echo "release flags: Dockerfile, scripts/demo.sh and scripts/test.sh use scripts/build-release.sh"

echo "== berth accepts the configurations"
configs=$(for f in plain chart-default chart-custom chart-minimal; do
  mkdir "$out/config-$f"
  check configs "$out/$f.yaml" "$out/config-$f"
done)
if [ -z "$berth" ]; then
  echo "skipped: no berth binary given (scripts/check-deploy.sh BERTH_BINARY)"
else
  # --all-pending places every pending pod, whatever its scheduler name; every profile is built.
  for file in $configs "$out/examples/berth-config.yaml"; do
    name=$(basename "$(dirname "$file")")/$(basename "$file")
    if ! result=$("$berth" simulate --cluster examples/cluster.yaml --config "$file" --all-pending 2>&1)
    then
      echo "check-deploy: berth rejects $name:" >&2
      echo "$result" >&2
      exit 1
    fi
    echo "berth simulate --config $name: $(tail -1 <<<"$result")"
  done
fi

echo "== the alerts and the dashboard use berth's metrics"
if [ -z "$berth" ]; then
  echo "skipped: no berth binary given"
else
  tests/deploy/scrape-metrics.sh "$berth" "$out/metrics.txt"
  if err=$(check metrics "$out/metrics.txt" tests/deploy/metrics-invalid.yaml 2>&1) ||
      [[ "$err" != *"scheduler_schedule_attempt_total is not in"* ]] ||
      [[ "$err" != *"has labels {queue}"* ]]; then
    echo "check-deploy: check.mjs metrics accepts tests/deploy/metrics-invalid.yaml: $err" >&2
    exit 1
  fi
  check metrics "$out/metrics.txt" deploy/optional/prometheusrule.yaml "$out/chart-custom.yaml" \
    charts/berth/dashboards/berth.json tests/deploy/rules-test.yaml
fi

echo "== Dockerfile runtime packages and ldd"
if [ -z "$berth" ]; then
  echo "skipped: no berth binary given"
else
  # The Debian package owning a library; ldd prints /lib paths, dpkg may know /usr/lib (usrmerge).
  package_of() {
    local path owner
    for path in "$1" "/usr$1" "${1#/usr}" "$(readlink -f "$1")"; do
      if owner=$(dpkg -S "$path" 2>/dev/null); then
        owner=${owner%%$'\n'*}
        echo "${owner%%:*}"
        return
      fi
    done
    echo "check-deploy: no Debian package owns $1 (from ldd $berth)" >&2
    return 1
  }
  ldd_packages=$(ldd "$berth" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
    while read -r lib; do package_of "$lib"; done | sort -u)
  # The package names after --no-install-recommends in the last stage's apt-get install.
  docker_packages=$(awk '/^FROM /{ stage = "" } { stage = stage " " $0 } END { print stage }' \
      Dockerfile | sed 's/\\//g' | grep -o -- '--no-install-recommends[^&]*' |
    tr -s ' ' '\n' | grep -v -e '^-' -e '^$' | sort -u)
  if [ "$ldd_packages" != "$docker_packages" ]; then
    echo "check-deploy: the Dockerfile's runtime packages differ from the libraries berth loads:" >&2
    diff <(echo "$docker_packages") <(echo "$ldd_packages") |
      sed -n -e 's/^< /  remove from the Dockerfile: /p' -e 's/^> /  add to the Dockerfile: /p' >&2
    exit 1
  fi
  echo "runtime packages: $(tr '\n' ' ' <<<"$docker_packages")"
fi
echo "deploy checks passed"
