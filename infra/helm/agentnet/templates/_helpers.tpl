{{/* The six services, in the order the Dockerfile builds them. */}}
{{- define "agentnet.serviceNames" -}}
control-plane provider-verifier telemetry consumption gateway-proxy api-gateway
{{- end }}

{{/* The services clients reach over HTTP, and the port each listens on in its image. */}}
{{- define "agentnet.httpPorts" -}}
gateway-proxy: 8090
api-gateway: 8080
{{- end }}

{{- define "agentnet.fullname" -}}
{{- printf "%s-%s" .root.Release.Name .name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "agentnet.selectorLabels" -}}
app.kubernetes.io/name: agentnet
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end }}

{{- define "agentnet.labels" -}}
{{ include "agentnet.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end }}

{{- define "agentnet.secretEnv" -}}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ required (printf "%s: the name of an existing Secret is required" .what) .secret }}
      key: {{ .key }}
{{- end }}

{{/*
A service's environment: the bus for all, then each one's backends. Credentials only as
references to Secrets, never as values.
*/}}
{{- define "agentnet.env" -}}
{{- $values := .root.Values -}}
- name: NATS_URL
  value: {{ required "nats.url is required" $values.nats.url | quote }}
- name: NATS_USER
  value: {{ .name }}
{{ include "agentnet.secretEnv" (dict "env" "NATS_PASSWORD" "secret" $values.nats.existingSecret "key" .name "what" "nats.existingSecret") }}
- name: AGN_STREAM_REPLICAS
  value: {{ $values.nats.streamReplicas | quote }}
{{- if $values.nats.tlsCa.existingSecret }}
- name: NATS_CA
  value: /etc/agentnet/nats/ca.crt
{{- end }}
- name: LOG_LEVEL
  value: {{ $values.logLevel | quote }}
{{- if $values.metrics.enabled }}
- name: AGN_METRICS_PORT
  value: {{ $values.metrics.port | quote }}
- name: AGN_METRICS_HOST
  value: 0.0.0.0
{{- end }}
{{- if has .name (list "control-plane" "consumption") }}
{{ include "agentnet.secretEnv" (dict "env" "MONGO_URL" "secret" $values.mongodb.existingSecret "key" $values.mongodb.urlKey "what" "mongodb.existingSecret") }}
{{- end }}
{{- if has .name (list "control-plane" "gateway-proxy") }}
{{ include "agentnet.secretEnv" (dict "env" "AGN_SEALING_KEY" "secret" $values.sealing.existingSecret "key" $values.sealing.key "what" "sealing.existingSecret") }}
{{- end }}
{{- if eq .name "telemetry" }}
- name: CLICKHOUSE_URL
  value: {{ required "clickhouse.url is required: telemetry's embedded chDB keeps its files in one process, which pods cannot share" $values.clickhouse.url | quote }}
- name: CLICKHOUSE_DATABASE
  value: {{ $values.clickhouse.database | quote }}
{{ include "agentnet.secretEnv" (dict "env" "CLICKHOUSE_USER" "secret" $values.clickhouse.existingSecret "key" $values.clickhouse.userKey "what" "clickhouse.existingSecret") }}
{{ include "agentnet.secretEnv" (dict "env" "CLICKHOUSE_PASSWORD" "secret" $values.clickhouse.existingSecret "key" $values.clickhouse.passwordKey "what" "clickhouse.existingSecret") }}
{{- end }}
{{- if eq .name "gateway-proxy" }}
- name: AGN_SHUTDOWN_DRAIN_MS
  value: {{ mul .service.drainSeconds 1000 | quote }}
{{- end }}
{{- range $key, $value := .service.env }}
- name: {{ $key }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}

{{/*
The images' health checks. The HTTP services answer /readyz and /healthz on their own port; the
others serve them on HEALTH_PORT on the pod's loopback only, so the kubelet asks from inside the
container, as the image's HEALTHCHECK does.
*/}}
{{- define "agentnet.probe" -}}
{{- if .port }}
httpGet:
  path: {{ .path }}
  port: http
{{- else }}
exec:
  command:
    - node
    - -e
    - fetch('http://127.0.0.1:'+process.env.HEALTH_PORT+'{{ .path }}').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))
{{- end }}
{{- end }}
