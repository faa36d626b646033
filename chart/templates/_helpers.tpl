{{/* The object name. The official chart's default, so `helm upgrade` from it replaces its objects in place. */}}
{{- define "deno-ccm.name" -}}
{{- .Values.nameOverride | default "hcloud-cloud-controller-manager" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The ClusterRole and its binding: a name of our own, since a binding's roleRef cannot change. */}}
{{- define "deno-ccm.rbacName" -}}
system:{{ include "deno-ccm.name" . }}:deno-ccm
{{- end }}

{{/* The pods' selector labels (values.selectorLabels, templated). */}}
{{- define "deno-ccm.selectorLabels" -}}
{{- tpl (toYaml .Values.selectorLabels) . }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "deno-ccm.labels" -}}
{{ include "deno-ccm.selectorLabels" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
{{- end }}

{{/* Leader election: off only for a single-replica Deployment, as in the official chart. */}}
{{- define "deno-ccm.leaderElect" -}}
{{- if and (eq .Values.kind "Deployment") (eq (int .Values.replicaCount) 1) }}false{{ else }}true{{ end }}
{{- end }}

{{/*
An EnvVar's source, templated. A `value` wins over a `valueFrom`: values files merge into the defaults,
so `value: x` set over a default `valueFrom` would otherwise give both, which the apiserver refuses.
*/}}
{{- define "deno-ccm.envSource" -}}
{{- $root := index . 0 }}
{{- $var := index . 1 }}
{{- if hasKey $var "value" }}
{{- tpl (toYaml (dict "value" (toString $var.value))) $root }}
{{- else }}
{{- tpl (toYaml $var) $root }}
{{- end }}
{{- end }}
