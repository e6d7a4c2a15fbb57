#!/usr/bin/env bash
# Checks berth's deployment artifacts: deploy/ (kustomize), charts/berth (Helm) and the Dockerfile.
#
#   scripts/check-deploy.sh [BERTH_BINARY]      (or BERTH=path; run scripts/install-tools.sh first)
#
# - helm lint (strict) and helm template of the chart with default, custom and minimal values
#   (tests/deploy/values-*.yaml), and kubectl kustomize deploy/;
# - the Dockerfile, scripts/demo.sh and CI build with the one release definition;
# - every rendered object, deploy/optional and deploy/examples against the Kubernetes OpenAPI schemas
#   (kubernetes-models, unknown fields rejected), after proving the validator rejects bad objects;
# - the chart's values schema and guards reject bad values;
# - deploy/ and the chart's default rendering are the same objects, and the RBAC is exactly berth's;
# - with a berth binary: each rendered KubeSchedulerConfiguration is accepted by `berth simulate`,
#   and the Dockerfile's runtime packages are exactly those owning the libraries in `ldd berth`
#   (give the release binary, not a sanitizer build).
set -euo pipefail
cd "$(dirname "$0")/.."
berth=${1:-${BERTH:-}}
helm=.tools/bin/helm
kubectl=.tools/bin/kubectl
if [ ! -x "$helm" ] || [ ! -x "$kubectl" ]; then
  echo "check-deploy: $helm and $kubectl are missing: run scripts/install-tools.sh" >&2
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
"$helm" template berth charts/berth -n berth-system --set serviceMonitor.enabled=true \
  --show-only templates/servicemonitor.yaml >"$out/chart-servicemonitor.yaml"
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
profile.plugins.scor.enabled[0].name=NodeAffinity|additional properties 'scor' not allowed
profile.plugins.score.enabled[0].weight=0|at '/profile/plugins/score/enabled/0'
image.pullPolicy=Sometimes|at '/image/pullPolicy'
image.digest=latest|at '/image/digest'
leaderElection.enabled=false|replicas > 1 needs leaderElection.enabled
serviceMonitor.enabled=true,metrics.service.enabled=false|serviceMonitor.enabled needs metrics.service.enabled
EOF
echo "chart values: bad values rejected"
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
check compare deploy/optional/servicemonitor.yaml "$out/chart-servicemonitor.yaml"
check rbac "$out/plain.yaml"
check rbac "$out/chart-default.yaml"
app_version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/berth/Chart.yaml)
project_version=$(sed -n 's/^project(berth VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
if [ "$app_version" != "$project_version" ]; then
  echo "check-deploy: charts/berth appVersion $app_version, CMakeLists.txt version $project_version" >&2
  exit 1
fi
echo "versions: chart appVersion and image tag $app_version = berth $project_version"

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
  # Every rendering has one profile, which --all-pending applies to every pending pod.
  for file in $configs; do
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
