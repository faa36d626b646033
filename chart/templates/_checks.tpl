{{/*
Install-time checks with messages naming the value. Secrets are looked up only when the chart is
rendered against a cluster (helm install/upgrade); `helm template` cannot see them.
*/}}
{{- define "deno-ccm.checks" -}}
{{- if .Values.networking.enabled }}
{{- range $cidr := splitList "," .Values.networking.clusterCIDR }}
{{- if not (regexMatch "^([0-9]{1,3}\\.){3}[0-9]{1,3}/[0-9]{1,2}$|^[0-9a-fA-F:]+:[0-9a-fA-F:]*/[0-9]{1,3}$" (trim $cidr)) }}
{{- fail (printf "networking.clusterCIDR: %q is not a CIDR such as 10.244.0.0/16" $cidr) }}
{{- end }}
{{- end }}
{{- end }}
{{- if eq .Values.kind "DaemonSet" }}
{{- $deployment := lookup "apps/v1" "Deployment" .Release.Namespace (include "deno-ccm.name" .) }}
{{- $args := join " " (default list (dig "spec" "template" "spec" "containers" list $deployment | first | default dict | dig "args" list)) }}
{{- if and $deployment (not (include "deno-ccm.currentIsOurs" .)) (contains "--leader-elect=false" $args) }}
{{- fail (printf "kind: DaemonSet would start its pods while Deployment %s/%s, a CCM without leader election, is still being removed: upgrade with kind: Deployment first, then switch to DaemonSet" .Release.Namespace (include "deno-ccm.name" .)) }}
{{- end }}
{{- end }}
{{- if lookup "v1" "Namespace" "" .Release.Namespace }}
{{- $sources := dict }}
{{- range $name, $var := .Values.env }}
{{- if $var }}{{ $_ := set $sources (printf "env.%s" $name) $var }}{{ end }}
{{- end }}
{{- if .Values.networking.enabled }}{{ $_ := set $sources "networking.network" .Values.networking.network }}{{ end }}
{{- range $path, $var := $sources }}
{{- $ref := dig "valueFrom" "secretKeyRef" dict $var }}
{{- if and $ref (not $ref.optional) }}
{{- $secret := lookup "v1" "Secret" $.Release.Namespace $ref.name }}
{{- if not $secret }}
{{- fail (printf "%s: Secret %s/%s does not exist (kubectl -n %s create secret generic %s --from-literal=%s=...)" $path $.Release.Namespace $ref.name $.Release.Namespace $ref.name $ref.key) }}
{{- end }}
{{- if not (hasKey (default dict $secret.data) $ref.key) }}
{{- fail (printf "%s: Secret %s/%s has no key %q" $path $.Release.Namespace $ref.name $ref.key) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
