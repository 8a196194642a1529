{{/*
The exporter's command line, as a JSON list: the flags the chart sets, then
extraArgs. kingpin refuses a repeated flag ("flag cannot be repeated") and
the pod would crash-loop, so an extraArgs entry naming a flag the chart
already set fails the render, naming the value to use instead.
*/}}
{{- define "clouddb-exporter.args" -}}
{{- $hasConfig := include "clouddb-exporter.hasConfig" . }}
{{- $creds := .Values.credentials }}
{{- $args := list (printf "--web.listen-address=:%v" .Values.service.port) (printf "--log.level=%s" .Values.logLevel) (printf "--log.format=%s" .Values.logFormat) }}
{{- if .Values.webConfig.existingSecret }}
{{- $args = append $args (printf "--web.config.file=/etc/clouddb/web/%s" .Values.webConfig.key) }}
{{- end }}
{{- if $hasConfig }}
{{- /* The file lists the projects and their credentials: single-project flags would contradict it. */}}
{{- $args = append $args "--config.file=/etc/clouddb/config/config.yml" }}
{{- else }}
{{- $url := required "api.url is required: the base URL of your cloud API, ending in its version segment (or list the projects in config.content)" .Values.api.url }}
{{- $args = append $args (printf "--api.url=%s" $url) }}
{{- /* Without a project id, the exporter discovers the projects the credentials can access. */}}
{{- with .Values.api.projectId }}
{{- $args = append $args (printf "--api.project-id=%s" .) }}
{{- end }}
{{- $args = append $args (printf "--api.access-key-file=/etc/clouddb/credentials/%s" $creds.accessKeyKey) }}
{{- $args = append $args (printf "--api.secret-key-file=/etc/clouddb/credentials/%s" $creds.secretKeyKey) }}
{{- if or (and $creds.accessKey $creds.apiKey) (and (not $creds.accessKey) $creds.existingSecretHasApiKey) }}
{{- $args = append $args (printf "--api.key-file=/etc/clouddb/credentials/%s" $creds.apiKeyKey) }}
{{- end }}
{{- end }}
{{- if .Values.admin.enabled }}
{{- $args = append $args (printf "--admin.listen-address=:%v" .Values.admin.port) }}
{{- $args = append $args (printf "--admin.token-file=/etc/clouddb/admin/%s" .Values.admin.tokenSecret.key) }}
{{- if .Values.admin.allowInsecureListener }}
{{- $args = append $args "--admin.allow-insecure-listener" }}
{{- end }}
{{- range .Values.admin.allow }}
{{- $args = append $args (printf "--admin.allow=%s" .) }}
{{- end }}
{{- end }}
{{- if .Values.sharding.enabled }}
{{- $args = concat $args (list "--shard.from-hostname" (printf "--total-shards=%v" .Values.sharding.totalShards)) }}
{{- end }}
{{- if include "clouddb-exporter.hasPricing" . }}
{{- $args = append $args "--pricing.file=/etc/clouddb/pricing/pricing.yml" }}
{{- end }}
{{- if include "clouddb-exporter.stateFile" . }}
{{- $args = append $args "--state.file=/var/lib/clouddb/logs/positions.json" }}
{{- end }}
{{- if .Values.changesFile.enabled }}
{{- $args = append $args "--changes.file=/var/lib/clouddb/changes/changes.ndjson" }}
{{- end }}
{{- $set := dict }}
{{- range $args }}
{{- $_ := set $set (regexReplaceAll "^--([^= ]+).*$" . "${1}") true }}
{{- end }}
{{- if include "clouddb-exporter.stateFile" . }}
{{- /* The deprecated name of --state.file would name a second file. */}}
{{- $_ := set $set "collect.logs.state-file" true }}
{{- end }}
{{- $values := dict "web.listen-address" "service.port" "log.level" "logLevel" "log.format" "logFormat" "web.config.file" "webConfig" "config.file" "config.content or config.existingConfigMap" "api.url" "api.url" "api.project-id" "api.projectId" "api.access-key-file" "credentials" "api.secret-key-file" "credentials" "api.key-file" "credentials.existingSecretHasApiKey or credentials.apiKey" "admin.listen-address" "admin.port" "admin.token-file" "admin.tokenSecret" "admin.allow" "admin.allow" "admin.allow-insecure-listener" "admin.allowInsecureListener" "shard.from-hostname" "sharding.enabled" "total-shards" "sharding.totalShards" "state.file" "stateFile" "collect.logs.state-file" "stateFile" "pricing.file" "pricing.content or pricing.existingConfigMap" "changes.file" "changesFile" }}
{{- range .Values.extraArgs }}
{{- $flag := regexReplaceAll "^--(no-)?([^= ]+).*$" . "${2}" }}
{{- if and (hasPrefix "--" .) (hasKey $set $flag) }}
{{- fail (printf "extraArgs: --%s is set by the chart: use %s instead" $flag (get $values $flag)) }}
{{- end }}
{{- end }}
{{- concat $args .Values.extraArgs | toJson }}
{{- end }}
