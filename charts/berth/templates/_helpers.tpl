{{/* The release's full name: the release name, prefixed to the chart name unless it contains it. */}}
{{- define "berth.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "berth.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "berth.labels" -}}
{{ include "berth.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "berth.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "berth.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The scheduler name of the first profile: berth's default Lease name and the one NOTES shows. */}}
{{- define "berth.schedulerName" -}}
{{- (first .Values.profiles).schedulerName -}}
{{- end -}}

{{/* The leader election Lease, named after the first profile's scheduler as berth does by default. */}}
{{- define "berth.leaseName" -}}
{{- default (include "berth.schedulerName" .) .Values.leaderElection.resourceName -}}
{{- end -}}

{{/* The image, by digest when one is given. */}}
{{- define "berth.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{- define "berth.scheme" -}}
{{- if .Values.metrics.https -}}HTTPS{{- else -}}HTTP{{- end -}}
{{- end -}}

{{/* The job label Prometheus gives berth's series: the Service's name under a ServiceMonitor. */}}
{{- define "berth.job" -}}
{{- default (printf "%s-metrics" (include "berth.fullname" .)) .Values.prometheusRule.job -}}
{{- end -}}

{{/*
The KubeSchedulerConfiguration; its sections are built as data and written with toYaml so that
every value is quoted correctly. Null global values are left out: berth then applies its defaults.
*/}}
{{- define "berth.config" -}}
{{- $le := .Values.leaderElection -}}
{{- $leaderElection := dict "leaderElect" $le.enabled -}}
{{- if $le.enabled -}}
{{- $_ := set $leaderElection "leaseDuration" $le.leaseDuration -}}
{{- $_ := set $leaderElection "renewDeadline" $le.renewDeadline -}}
{{- $_ := set $leaderElection "retryPeriod" $le.retryPeriod -}}
{{- $_ := set $leaderElection "resourceLock" "leases" -}}
{{- $_ := set $leaderElection "resourceName" (include "berth.leaseName" .) -}}
{{- $_ := set $leaderElection "resourceNamespace" .Release.Namespace -}}
{{- end -}}
{{- $global := dict -}}
{{- range $key := list "percentageOfNodesToScore" "parallelism" "podInitialBackoffSeconds" "podMaxBackoffSeconds" -}}
{{- if not (kindIs "invalid" (index $.Values $key)) -}}
{{- $_ := set $global $key (index $.Values $key) -}}
{{- end -}}
{{- end -}}
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
{{- with $global }}
{{ toYaml . }}
{{- end }}
leaderElection:
  {{- toYaml $leaderElection | nindent 2 }}
clientConnection:
  {{- toYaml .Values.clientConnection | nindent 2 }}
profiles:
  {{- toYaml .Values.profiles | nindent 2 }}
{{- end -}}

{{/* The port's name tells meshes and Prometheus' conventions the protocol. */}}
{{- define "berth.portName" -}}
{{- if .Values.metrics.https -}}https-metrics{{- else -}}http-metrics{{- end -}}
{{- end -}}
