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

{{/* The leader election Lease, named after the scheduler as berth does by default. */}}
{{- define "berth.leaseName" -}}
{{- default .Values.schedulerName .Values.leaderElection.resourceName -}}
{{- end -}}

{{/*
The KubeSchedulerConfiguration; its sections are built as data and written with toYaml so that
every value is quoted correctly. Empty profile values are left out: berth then applies its defaults.
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
{{- $profile := dict "schedulerName" .Values.schedulerName -}}
{{- if not (kindIs "invalid" .Values.profile.percentageOfNodesToScore) -}}
{{- $_ := set $profile "percentageOfNodesToScore" .Values.profile.percentageOfNodesToScore -}}
{{- end -}}
{{- with .Values.profile.plugins -}}
{{- $_ := set $profile "plugins" . -}}
{{- end -}}
{{- with .Values.profile.pluginConfig -}}
{{- $_ := set $profile "pluginConfig" . -}}
{{- end -}}
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  {{- toYaml $leaderElection | nindent 2 }}
clientConnection:
  {{- toYaml .Values.clientConnection | nindent 2 }}
profiles:
  {{- toYaml (list $profile) | nindent 2 }}
{{- end -}}
