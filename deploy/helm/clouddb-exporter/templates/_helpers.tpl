{{/* Name of the chart, overridable. */}}
{{- define "clouddb-exporter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name, at most 63 characters (DNS names). */}}
{{- define "clouddb-exporter.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "clouddb-exporter.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "clouddb-exporter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "clouddb-exporter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "clouddb-exporter.labels" -}}
helm.sh/chart: {{ include "clouddb-exporter.chart" . }}
{{ include "clouddb-exporter.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: clouddb-exporter
{{- end }}

{{- define "clouddb-exporter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "clouddb-exporter.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image, pinned to the chart's appVersion unless tag or digest is set. */}}
{{- define "clouddb-exporter.image" -}}
{{- $repo := printf "%s/%s" .Values.image.registry .Values.image.repository | trimPrefix "/" }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repo .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repo (default (printf "v%s" .Chart.AppVersion) .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The credentials' Secret: the chart's own when accessKey is set, else existingSecret. */}}
{{- define "clouddb-exporter.credentialsSecret" -}}
{{- if .Values.credentials.accessKey }}
{{- printf "%s-credentials" (include "clouddb-exporter.fullname" .) }}
{{- else }}
{{- .Values.credentials.existingSecret }}
{{- end }}
{{- end }}

{{- define "clouddb-exporter.hasConfig" -}}
{{- if or .Values.config.existingConfigMap .Values.config.content }}true{{ end }}
{{- end }}

{{- define "clouddb-exporter.hasPricing" -}}
{{- if or .Values.pricing.existingConfigMap .Values.pricing.content }}true{{ end }}
{{- end }}

{{/* Namespace of an optional object: its own setting or the release's. */}}
{{- define "clouddb-exporter.namespace" -}}
{{- default .root.Release.Namespace .namespace }}
{{- end }}

{{/*
A probe from the values; HTTPS when the web config turns TLS on. Helm
merges a probe of the values over the default one: another handler replaces
the default httpGet (Kubernetes takes one handler per probe).
*/}}
{{- define "clouddb-exporter.probe" -}}
{{- $probe := deepCopy .probe }}
{{- if or $probe.tcpSocket $probe.exec $probe.grpc }}
{{- $_ := unset $probe "httpGet" }}
{{- end }}
{{- if and .tls $probe.httpGet (not $probe.httpGet.scheme) }}
{{- $_ := set $probe.httpGet "scheme" "HTTPS" }}
{{- end }}
{{- toYaml $probe }}
{{- end }}

{{/*
The scrape endpoint settings shared by the ServiceMonitor and the PodMonitor
(.m: the monitor's values, .root: the chart's).
*/}}
{{- define "clouddb-exporter.monitorEndpoint" -}}
interval: {{ .m.interval }}
scrapeTimeout: {{ .m.scrapeTimeout }}
{{- with .m.scheme | default (ternary "https" "" .root.Values.webConfig.tls) }}
scheme: {{ . }}
{{- end }}
path: {{ include "clouddb-exporter.telemetryPath" (dict "m" .m "root" .root "name" .name) }}
{{- with .m.tlsConfig }}
tlsConfig:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .m.basicAuth }}
basicAuth:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- $job := include "clouddb-exporter.jobName" .root }}
{{- range .m.relabelings }}
{{- if eq (.targetLabel | default "") "job" }}
{{- fail (printf "%s.relabelings: a relabeling sets the job, which the PrometheusRule's alerts would not select: set jobName instead (%q now)" $.name $job) }}
{{- end }}
{{- end }}
relabelings:
  # The job the PrometheusRule's alerts select (jobName), whatever the
  # release, nameOverride or fullnameOverride.
  - targetLabel: job
    replacement: {{ $job | quote }}
{{- with .m.relabelings }}
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .m.metricRelabelings }}
metricRelabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
The Prometheus job of the exporter's targets: the monitors set it and the
PrometheusRule's alerts on up select it, so that the two always agree.
*/}}
{{- define "clouddb-exporter.jobName" -}}
{{- .Values.jobName | default "clouddb-exporter" }}
{{- end }}

{{/* The alerts' selector of the exporter's targets: exporterSelector, or the job. */}}
{{- define "clouddb-exporter.exporterSelector" -}}
{{- $job := include "clouddb-exporter.jobName" . }}
{{- $selector := .Values.prometheusRule.exporterSelector }}
{{- if not $selector }}
{{- printf "job=%q" $job }}
{{- else }}
{{- if and (or .Values.serviceMonitor.enabled .Values.podMonitor.enabled) (not (regexMatch (printf "(^|[ ,{])job=[\"']%s[\"']" (regexQuoteMeta $job)) $selector)) }}
{{- fail (printf "prometheusRule.exporterSelector %s does not select the job %q of the chart's monitors: leave it empty, or set jobName" $selector $job) }}
{{- end }}
{{- $selector }}
{{- end }}
{{- end }}

{{/*
The scrape path: the monitor's path, else the --web.telemetry-path of
extraArgs, else /metrics. A path other than extraArgs' would scrape a 404.
*/}}
{{- define "clouddb-exporter.telemetryPath" -}}
{{- $fromArgs := "" }}
{{- range .root.Values.extraArgs }}
{{- if regexMatch "^--web\\.telemetry-path=" . }}
{{- $fromArgs = regexReplaceAll "^--web\\.telemetry-path=" . "" }}
{{- end }}
{{- end }}
{{- if and .m.path $fromArgs (ne .m.path $fromArgs) }}
{{- fail (printf "%s.path %s is not the exporter's --web.telemetry-path=%s of extraArgs: leave it empty" .name .m.path $fromArgs) }}
{{- end }}
{{- .m.path | default $fromArgs | default "/metrics" }}
{{- end }}

{{/*
The state file (--state.file): stateFile, or logState, its deprecated
name, which renders the same (the same volume and file). "true" or "".
*/}}
{{- define "clouddb-exporter.stateFile" -}}
{{- if or .Values.stateFile.enabled .Values.logState.enabled }}true{{ end }}
{{- end }}

{{/* The state file's claim: stateFile's, or logState's (deprecated). */}}
{{- define "clouddb-exporter.stateFileClaim" -}}
{{- $new := .Values.stateFile.existingClaim }}
{{- $old := .Values.logState.existingClaim }}
{{- if and $new $old (ne $new $old) }}
{{- fail (printf "stateFile.existingClaim and its deprecated alias logState.existingClaim differ (%s, %s): set stateFile only" $new $old) }}
{{- end }}
{{- $new | default $old }}
{{- end }}
