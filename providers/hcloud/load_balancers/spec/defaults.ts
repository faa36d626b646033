/**
 * The operator's defaults for every balancer (`HCLOUD_LOAD_BALANCERS_*`), as the configuration reads
 * them: a type of this room, so the room's files never import the configuration reader.
 *
 * @module
 */

/** Defaults for load balancers (`HCLOUD_LOAD_BALANCERS_*`); `undefined` = not set. */
export interface LoadBalancerDefaults {
  /** `HCLOUD_LOAD_BALANCERS_ENABLED`: the service controller runs. */
  enabled: boolean;
  /** `HCLOUD_LOAD_BALANCERS_LOCATION`. */
  location?: string;
  /** `HCLOUD_LOAD_BALANCERS_NETWORK_ZONE`. */
  networkZone?: string;
  /** `HCLOUD_LOAD_BALANCERS_TYPE`. */
  type?: string;
  /** `HCLOUD_LOAD_BALANCERS_ALGORITHM_TYPE`. */
  algorithmType?: "round_robin" | "least_connections";
  /** `HCLOUD_LOAD_BALANCERS_DISABLE_PRIVATE_INGRESS`. */
  disablePrivateIngress: boolean;
  /** `HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP`. */
  usePrivateIp: boolean;
  /** `HCLOUD_LOAD_BALANCERS_DISABLE_IPV6`. */
  disableIpv6: boolean;
  /** `HCLOUD_LOAD_BALANCERS_DISABLE_PUBLIC_NETWORK`. */
  disablePublicNetwork?: boolean;
  /** `HCLOUD_LOAD_BALANCERS_USES_PROXYPROTOCOL`. */
  usesProxyProtocol?: boolean;
  /** `HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_INTERVAL`, in ms. */
  healthCheckIntervalMs?: number;
  /** `HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_TIMEOUT`, in ms. */
  healthCheckTimeoutMs?: number;
  /** `HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_RETRIES`. */
  healthCheckRetries?: number;
  /** `HCLOUD_LOAD_BALANCERS_PRIVATE_SUBNET_IP_RANGE`. */
  privateSubnetIpRange?: string;
  /**
   * `HCLOUD_LOAD_BALANCERS_EXTERNAL_OBJECTS_NAMESPACES`: the namespaces whose Services may name cloud
   * objects made outside the CCM (uploaded certificates, Primary IPs, balancers to adopt or attach to)
   * without the object's own consent label; `"*"` (the default, the official CCM's behaviour): all.
   */
  externalObjectsNamespaces?: "*" | string[];
  /** `HCLOUD_LOAD_BALANCERS_LABELS`: labels on every balancer (and managed certificate) created. */
  labels?: Record<string, string>;
  /**
   * `HCLOUD_LOAD_BALANCERS_DRAIN_TARGETS` (ours): a Node that leaves stays a target of every balancer
   * until a health check with the `HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_*` timing has failed it
   * (load_balancers/targets/draining.ts).
   */
  drainTargets?: boolean;
  /**
   * `HCLOUD_LOAD_BALANCERS_KUBE_PROXY_HEALTH_CHECK` (ours): `externalTrafficPolicy: Cluster` balancers
   * without health-check settings check kube-proxy's `/healthz` on port 10256 instead of the NodePort.
   */
  kubeProxyHealthCheck?: boolean;
  /**
   * `HCLOUD_LOAD_BALANCERS_TRAFFIC_METRICS` (ours): each drift repair pass reads the traffic of up to
   * 30 of this cluster's balancers (inventory/traffic.ts) and exports it as gauges.
   */
  trafficMetrics?: boolean;
  /**
   * `HCLOUD_LOAD_BALANCERS_INGRESS_FOLLOWS_IP_FAMILIES` (ours): a Service's ingress lists only the
   * addresses of its `spec.ipFamilies`, in that order, unless its annotation says otherwise.
   */
  ingressFollowsIpFamilies?: boolean;
  /**
   * `HCLOUD_LOAD_BALANCERS_FIREWALL` (ours): the name of a Cloud Firewall whose rules for this
   * cluster's balancers the CCM keeps (created when missing; applied by the operator, never by the CCM).
   */
  firewall?: string;
  /**
   * `HCLOUD_LOAD_BALANCERS_FIREWALL_NODEPORT_NAMESPACES` (ours): the namespaces whose NodePort
   * Services may open their NodePorts in that firewall (`"*"`: all; unset: none).
   */
  firewallNodePortNamespaces?: "*" | string[];
  /**
   * `HCLOUD_LOAD_BALANCERS_TLS_SECRETS` (ours): Services may name `kubernetes.io/tls` Secrets (labelled
   * for it) whose certificate the CCM uploads and keeps on their HTTPS ports (load_balancers/certificates/tls_secrets.ts).
   * Needs read access to Secrets (the chart's `tlsSecrets.enabled`).
   */
  tlsSecrets?: boolean;
}
