#!/usr/bin/env bash
# Writes a real /metrics scrape of berth to OUT, for the checks of the alerts and the dashboard
# (scripts/check-deploy.sh): `berth run` against `berth apiserver` serving examples/cluster.yaml,
# after it has scheduled the example's pods and a kubelet (played by a status patch) has rejected
# one of them, so that the series those alerts read carry samples.
#   tests/deploy/scrape-metrics.sh BERTH OUT
set -euo pipefail
cd "$(dirname "$0")/../.."
berth=$1
out=$2
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "scrape-metrics: $*" >&2
  for log in "$work"/*.log; do echo "--- $log" >&2; tail -20 "$log" >&2; done
  exit 1
}
# Polls COMMAND every 0.2 s for up to SECONDS s.
within() {
  local seconds=$1
  shift
  for _ in $(seq $((seconds * 5))); do
    if "$@"; then return 0; fi
    sleep 0.2
  done
  return 1
}

"$berth" apiserver --cluster examples/cluster.yaml --port 0 \
  --write-kubeconfig "$work/kubeconfig" >"$work/apiserver.log" 2>&1 &
pids+=($!)
within 60 test -s "$work/kubeconfig" || fail "berth apiserver wrote no kubeconfig"
server=$(sed -n 's/^ *server: *//p' "$work/kubeconfig")

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if "$berth" run --help 2>&1 | grep -q -- "--secure-port"; then
  # HTTPS with the self-signed certificate; /metrics without a token, as for the health paths.
  serving=(--secure-port="$port" "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics")
  url=https://127.0.0.1:$port
else
  serving=(--port="$port")
  url=http://127.0.0.1:$port
fi
"$berth" run --kubeconfig "$work/kubeconfig" --bind-address=127.0.0.1 "${serving[@]}" \
  --leader-elect-resource-namespace=default >"$work/run.log" 2>&1 &
pids+=($!)

pod=$server/api/v1/namespaces/default/pods/admission-rejected
curl -sSf -o /dev/null -X POST -H "Content-Type: application/json" \
  "$server/api/v1/namespaces/default/pods" --data '{"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "admission-rejected", "namespace": "default"},
    "spec": {"schedulerName": "berth", "containers": [{"name": "app", "image": "app",
      "resources": {"requests": {"cpu": "10m"}}}]}}' || fail "could not create a pod"
bound() { curl -sSf "$pod" | grep -q '"nodeName"'; }
within 60 bound || fail "berth did not bind default/admission-rejected"
curl -sSf -o /dev/null -X PATCH -H "Content-Type: application/merge-patch+json" "$pod/status" \
  --data '{"status": {"phase": "Failed", "reason": "OutOfcpu",
    "message": "Pod was rejected: Node didn'"'"'t have enough resource: cpu"}}' ||
  fail "could not mark default/admission-rejected rejected by the kubelet"

scraped() {
  # curl's errors go to a log that fail() prints.
  curl -sSfk "$url/metrics" >"$out" 2>>"$work/scrape.log" &&
    grep -q '^leader_election_master_status{name="berth"} 1' "$out" &&
    grep -q '^scheduler_schedule_attempts_total{' "$out"
}
within 60 scraped || fail "berth's /metrics never showed a leader that scheduled pods"
rejected() {
  curl -sfk "$url/metrics" >"$out" &&
    grep -q '^berth_kubelet_admission_rejections_total{reason="OutOfcpu"} 1' "$out"
}
if ! within 10 rejected; then
  echo "scrape-metrics: berth did not count the kubelet's rejection of default/admission-rejected"
fi
echo "scrape-metrics: $(grep -vc '^#' "$out") samples from $url/metrics"
