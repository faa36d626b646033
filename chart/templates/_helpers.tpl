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

{{/*
Leader election: always on, on the official CCM's lease (kube-system/cloud-controller-manager), also at
one replica (where the official chart switches it off): a CCM left running beside this one (an official
DaemonSet, a second release) then waits instead of acting at the same time.
*/}}
{{- define "deno-ccm.leaderElect" -}}
true
{{- end }}

{{/* args[key] when the user set it (false and 0 included), else the default: (list args key default). */}}
{{- define "deno-ccm.argOr" -}}
{{- $v := index (index . 0) (index . 1) }}
{{- if kindIs "invalid" $v }}{{ index . 2 }}{{ else }}{{ $v }}{{ end }}
{{- end }}

{{/* The status server's port: args.secure-port when the user set it (kube-hetzner moves it off 10258 on
k3s hosts with hostNetwork), else statusPort. */}}
{{- define "deno-ccm.statusPort" -}}
{{- $set := index (.Values.args | default dict) "secure-port" }}
{{- if kindIs "invalid" $set }}{{ .Values.statusPort }}{{ else }}{{ $set }}{{ end }}
{{- end }}

{{/* The official chart's helper names, which values files copied from it use (selectorLabels). */}}
{{- define "hcloud-cloud-controller-manager.name" -}}
{{- include "deno-ccm.name" . }}
{{- end }}
{{- define "hcloud-cloud-controller-manager.selectorLabels" -}}
{{- include "deno-ccm.selectorLabels" . }}
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
