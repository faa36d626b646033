{{/*
Values as the official chart's users pass them, made whole. Every template includes "deno-ccm.values"
first; it changes .Values in place and is idempotent.

- Missing keys come from files/defaults.yaml (a copy of values.yaml, `deno task manifests`): with
  `helm upgrade --reuse-values` from the official chart (or an older deno-ccm), helm hands the templates
  the old chart's values instead of ours. Only missing keys are added (a `false` stays false); env, args
  and selectorLabels are the user's as given (a null there drops an entry, as documented).
- Booleans given as strings ("true", as older kube-hetzner templates write them) become booleans, and a
  replicaCount given as a string a number.
*/}}
{{- define "deno-ccm.values" -}}
{{- $defaults := fromYaml (.Files.Get "files/defaults.yaml") }}
{{- range $key := list "env" "args" "selectorLabels" }}
{{- if hasKey $.Values $key }}{{ $_ := unset $defaults $key }}{{ end }}
{{- end }}
{{- include "deno-ccm.fillMissing" (list .Values $defaults) }}
{{- range $path := include "deno-ccm.booleanValues" . | fromYamlArray }}
{{- $parts := splitList "." $path }}
{{- $parent := $.Values }}
{{- range initial $parts }}{{ $parent = get $parent . }}{{ end }}
{{- if and (kindIs "map" $parent) (hasKey $parent (last $parts)) }}
{{- $_ := set $parent (last $parts) (eq (toString (get $parent (last $parts))) "true") }}
{{- end }}
{{- end }}
{{- $_ := set .Values "replicaCount" (int .Values.replicaCount) }}
{{- end }}

{{/* Sets each key of the map (index . 1) missing from the map (index . 0), map by map. */}}
{{- define "deno-ccm.fillMissing" -}}
{{- $dst := index . 0 }}
{{- range $key, $value := index . 1 }}
{{- if not (hasKey $dst $key) }}
{{- $_ := set $dst $key $value }}
{{- else if and (kindIs "map" $value) (kindIs "map" (get $dst $key)) }}
{{- include "deno-ccm.fillMissing" (list (get $dst $key) $value) }}
{{- end }}
{{- end }}
{{- end }}

{{/* The boolean values (a string "true"/"false" is accepted for each). */}}
{{- define "deno-ccm.booleanValues" -}}
- hostNetwork
- networking.enabled
- monitoring.enabled
- monitoring.podMonitor.enabled
- monitoring.serviceMonitor.enabled
- monitoring.prometheusRule.enabled
- monitoring.dashboard.enabled
- robot.enabled
- rbac.create
- admissionPolicy.enabled
- csrApprover.enabled
- csrApprover.deny
- nodeIpam.enabled
- tlsSecrets.enabled
- networkPolicy.enabled
- podDisruptionBudget.enabled
{{- end }}

{{/*
The keys of the sections a values file written for the official chart may carry ("" is the top level):
any other key there is ignored and named in NOTES, as the official chart (which has no schema) ignores
it silently. tests/chart_test.ts checks this list against values.schema.json.
*/}}
{{- define "deno-ccm.knownValues" -}}
"": [args, kind, replicaCount, strategy, env, image, monitoring, nameOverride, networking, podSecurityContext, securityContext, hostNetwork, resources, selectorLabels, additionalTolerations, nodeSelector, affinity, admissionPolicy, csrApprover, nodeIpam, tlsSecrets, firewall, robot, podLabels, podAnnotations, extraVolumes, extraVolumeMounts, priorityClassName, dnsPolicy, dnsConfig, serviceAccount, rbac, networkPolicy, statusPort, podDisruptionBudget]
image: [repository, tag, pullPolicy, pullSecrets]
monitoring: [enabled, podMonitor, serviceMonitor, prometheusRule, dashboard]
monitoring.podMonitor: [enabled, labels, annotations, spec]
networking: [enabled, clusterCIDR, network]
robot: [enabled]
rbac: [create]
serviceAccount: [annotations]
{{- end }}

{{/*
The names in env: that look like the CCM's (HCLOUD_, ROBOT_) but that deno-ccm does not read, as a YAML
list (a misspelled setting is never silent: review Q12). files/env_vars.yaml is generated from the code.
*/}}
{{- define "deno-ccm.unknownEnv" -}}
{{- $known := .Files.Get "files/env_vars.yaml" | fromYamlArray }}
{{- $unknown := list }}
{{- range $name, $_ := .Values.env }}
{{- if and (or (hasPrefix "HCLOUD_" $name) (hasPrefix "ROBOT_" $name)) (not (has $name $known)) }}
{{- $unknown = append $unknown $name }}
{{- end }}
{{- end }}
{{- toYaml (sortAlpha $unknown) }}
{{- end }}

{{/* The names env: sets, comma-separated (the CCM names those it does not read). */}}
{{- define "deno-ccm.envNames" -}}
{{- $names := list }}
{{- range $name, $var := .Values.env }}{{ if $var }}{{ $names = append $names $name }}{{ end }}{{ end }}
{{- join "," (sortAlpha $names) }}
{{- end }}

{{/* The values this chart ignores, as dotted paths (a YAML list). */}}
{{- define "deno-ccm.ignoredValues" -}}
{{- $ignored := list }}
{{- range $section, $keys := include "deno-ccm.knownValues" . | fromYaml }}
{{- $map := $.Values }}
{{- if $section }}{{ range splitList "." $section }}{{ $map = get $map . }}{{ end }}{{ end }}
{{- if kindIs "map" $map }}
{{- range $key, $_ := $map }}
{{- if not (has $key $keys) }}
{{- $ignored = append $ignored (ternary $key (printf "%s.%s" $section $key) (eq $section "")) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- toYaml (sortAlpha $ignored) }}
{{- end }}

{{/*
The official CCM's images (HCCM, and the Syself fork): a values file copied from the official chart
names one. This chart runs deno-ccm's image instead (NOTES says so); a mirror of it is any other name.
*/}}
{{- define "deno-ccm.officialImage" -}}
{{- if regexMatch "(^|/)(hetznercloud/hcloud-cloud-controller-manager|syself/hetzner-cloud-controller-manager)$" (toString .Values.image.repository) }}true{{ end }}
{{- end }}

{{/* The container image. */}}
{{- define "deno-ccm.image" -}}
{{- $image := .Values.image }}
{{- if include "deno-ccm.officialImage" . }}
{{- $image = (fromYaml (.Files.Get "files/defaults.yaml")).image }}
{{- end }}
{{- printf "%s:%s" $image.repository (tpl (toString $image.tag) .) }}
{{- end }}

{{/*
The Deployment in the cluster (helm install/upgrade) when this chart rendered it: its `helm.sh/chart`
label names this chart. Empty under `helm template`, where nothing can be looked up.
*/}}
{{- define "deno-ccm.currentIsOurs" -}}
{{- $current := lookup "apps/v1" "Deployment" .Release.Namespace (include "deno-ccm.name" .) }}
{{- if hasPrefix (printf "%s-" .Chart.Name) (dig "metadata" "labels" "helm.sh/chart" "" $current) }}true{{ end }}
{{- end }}
