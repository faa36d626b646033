{{/* The pod template of the Deployment and the DaemonSet. */}}
{{- define "deno-ccm.podTemplate" -}}
metadata:
  labels:
    {{- include "deno-ccm.selectorLabels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with .Values.podAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  serviceAccountName: {{ include "deno-ccm.name" . }}
  {{- with .Values.image.pullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.priorityClassName }}
  priorityClassName: {{ . | quote }}
  {{- end }}
  {{- if or .Values.networking.enabled .Values.hostNetwork }}
  # Routes need the node's network; a pod there cannot use the cluster DNS.
  hostNetwork: true
  {{- end }}
  dnsPolicy: {{ .Values.dnsPolicy }}
  {{- with .Values.dnsConfig }}
  dnsConfig:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- $pod := dict "runAsNonRoot" true "runAsUser" 65532 "runAsGroup" 65532 "seccompProfile" (dict "type" "RuntimeDefault") }}
    {{- range $key, $value := .Values.podSecurityContext }}{{ $_ := set $pod $key $value }}{{ end }}
    {{- toYaml $pod | nindent 4 }}
  tolerations:
    # The CCM initializes Nodes, so it must run on Nodes it has not initialized yet.
    - key: node.cloudprovider.kubernetes.io/uninitialized
      value: "true"
      effect: NoSchedule
    - key: CriticalAddonsOnly
      operator: Exists
    - key: node-role.kubernetes.io/control-plane
      operator: Exists
      effect: NoSchedule
    - key: node-role.kubernetes.io/master
      operator: Exists
      effect: NoSchedule
    - key: node.kubernetes.io/not-ready
      effect: NoExecute
    {{- with .Values.additionalTolerations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: {{ include "deno-ccm.name" . }}
      image: {{ include "deno-ccm.image" . | quote }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      {{- /* Controllers off by default that a section turns on, added to args.controllers (or *). */}}
      {{- $extra := list }}
      {{- if .Values.csrApprover.enabled }}{{ $extra = append $extra "kubelet-serving-csr-approver" }}{{ end }}
      {{- if .Values.nodeIpam.enabled }}{{ $extra = append $extra "node-ipam-controller" }}{{ end }}
      {{- /* Flags the chart renders itself: a value the user gave for one in args is the one
      rendered (once), never overridden by the chart's (the last flag wins in the CCM's parser). */}}
      {{- $args := .Values.args | default dict }}
      {{- $cidrs := or .Values.networking.enabled .Values.nodeIpam.enabled }}
      {{- $own := list "secure-port" "leader-elect" }}
      {{- if $cidrs }}{{ $own = concat $own (list "allocate-node-cidrs" "cluster-cidr") }}{{ end }}
      {{- if $extra }}{{ $own = append $own "controllers" }}{{ end }}
      {{- if .Values.csrApprover.enabled }}{{ $own = append $own "kubelet-serving-csr-deny" }}{{ end }}
      {{- if .Values.nodeIpam.enabled }}{{ $own = concat $own (list "cidr-allocator-type" "node-cidr-mask-size-ipv4" "node-cidr-mask-size-ipv6") }}{{ end }}
      {{- $leaderElect := include "deno-ccm.leaderElect" . }}
      {{- $askedElect := index $args "leader-elect" }}
      {{- if and (not (kindIs "invalid" $askedElect)) (ne (toString $askedElect) "true") }}
      {{- fail (printf "args.leader-elect=%v: deno-ccm always elects a leader on the official CCM's lease, so no two CCMs act at once (a Deployment being replaced, a second replica, a CCM left beside it); remove args.leader-elect" $askedElect) }}
      {{- end }}
      args:
        {{- range $key, $value := $args }}
        {{- if and (not (kindIs "invalid" $value)) (not (has $key $own)) }}
        - {{ printf "--%s%s" $key (ternary "" (printf "=%v" $value) (eq (toString $value) "")) | quote }}
        {{- end }}
        {{- end }}
        {{- if $cidrs }}
        - {{ printf "--allocate-node-cidrs=%v" (include "deno-ccm.argOr" (list $args "allocate-node-cidrs" "true")) | quote }}
        - {{ printf "--cluster-cidr=%s" (include "deno-ccm.argOr" (list $args "cluster-cidr" .Values.networking.clusterCIDR)) | quote }}
        {{- end }}
        {{- if $extra }}
        - {{ printf "--controllers=%s,%s" (toString (default "*" (index $args "controllers"))) (join "," $extra) | quote }}
        {{- end }}
        {{- if .Values.csrApprover.enabled }}
        - {{ printf "--kubelet-serving-csr-deny=%v" (include "deno-ccm.argOr" (list $args "kubelet-serving-csr-deny" .Values.csrApprover.deny)) | quote }}
        {{- end }}
        {{- if .Values.nodeIpam.enabled }}
        - {{ printf "--cidr-allocator-type=%s" (include "deno-ccm.argOr" (list $args "cidr-allocator-type" .Values.nodeIpam.allocatorType)) | quote }}
        - {{ printf "--node-cidr-mask-size-ipv4=%v" (include "deno-ccm.argOr" (list $args "node-cidr-mask-size-ipv4" .Values.nodeIpam.nodeCidrMaskSizeIpv4)) | quote }}
        - {{ printf "--node-cidr-mask-size-ipv6=%v" (include "deno-ccm.argOr" (list $args "node-cidr-mask-size-ipv6" .Values.nodeIpam.nodeCidrMaskSizeIpv6)) | quote }}
        {{- end }}
        - "--leader-elect={{ $leaderElect }}"
        - "--secure-port={{ include "deno-ccm.statusPort" . }}"
      env:
        {{- with include "deno-ccm.envNames" . }}
        # The names set below, so the CCM can name one it does not read (it may read only its own).
        - name: DENO_CCM_ENV_NAMES
          value: {{ . | quote }}
        {{- end }}
        {{- range $name, $var := .Values.env }}
        {{- if $var }}
        - name: {{ $name }}
          {{- include "deno-ccm.envSource" (list $ $var) | nindent 10 }}
        {{- end }}
        {{- end }}
        {{- if .Values.networking.enabled }}
        - name: HCLOUD_NETWORK
          {{- include "deno-ccm.envSource" (list . .Values.networking.network) | nindent 10 }}
        {{- end }}
        {{- if .Values.robot.enabled }}
        - name: ROBOT_ENABLED
          value: "true"
        {{- end }}
        {{- with .Values.firewall.name }}
        - name: HCLOUD_LOAD_BALANCERS_FIREWALL
          value: {{ . | quote }}
        {{- end }}
        {{- with .Values.firewall.nodePortNamespaces }}
        - name: HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES
          value: {{ . | quote }}
        {{- end }}
        {{- if .Values.tlsSecrets.enabled }}
        - name: HCLOUD_LOAD_BALANCERS_TLS_SECRETS
          value: "true"
        {{- end }}
        {{- if not .Values.monitoring.enabled }}
        - name: HCLOUD_METRICS_ENABLED
          value: "false"
        {{- end }}
      ports:
        # Declared so that two host-network replicas never share a node.
        - name: status
          containerPort: {{ include "deno-ccm.statusPort" . }}
        {{- if .Values.monitoring.enabled }}
        - name: metrics
          containerPort: 8233
        {{- end }}
      livenessProbe:
        httpGet:
          path: /healthz
          port: status
        initialDelaySeconds: 10
        periodSeconds: 10
      readinessProbe:
        httpGet:
          path: /readyz
          port: status
        periodSeconds: 5
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        {{- $container := dict "allowPrivilegeEscalation" false "readOnlyRootFilesystem" true "capabilities" (dict "drop" (list "ALL")) }}
        {{- range $key, $value := .Values.securityContext }}{{ $_ := set $container $key $value }}{{ end }}
        {{- toYaml $container | nindent 8 }}
      {{- with .Values.extraVolumeMounts }}
      volumeMounts:
        {{- toYaml . | nindent 8 }}
      {{- end }}
  {{- with .Values.extraVolumes }}
  volumes:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
