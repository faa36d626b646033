/**
 * How long balancers keep a Node that leaves (the controller's graceful draining,
 * controllers/service/departures.ts): long enough for a health check to fail the Node — Hetzner
 * stops sending it new connections then, and open ones finish — before the target is removed.
 * Opt-in with `HCLOUD_LOAD_BALANCERS_DRAIN_TARGETS`; one period for every balancer, as most share
 * one label-selector target, timed by the `HCLOUD_LOAD_BALANCERS_HEALTH_CHECK_*` defaults (what a
 * tenant annotates cannot lengthen it for others).
 *
 * The check fails a leaving Node by itself where the Node's health endpoint says it is leaving:
 * kube-proxy's `/healthz` (KEP-3836: failing on a Node being deleted or carrying the autoscaler's
 * taint; `service.deno-ccm.io/health-check-kube-proxy`) or, for `externalTrafficPolicy: Local`, the
 * health check node port once the Node's endpoints are gone. With a TCP check on the NodePort the
 * Node keeps getting traffic until the period ends, as it would without draining.
 *
 * @module
 */
import type { LoadBalancerDefaults } from "../spec/mod.ts";

/** Hetzner's health-check defaults (seconds; retries) when nothing is configured. */
const HETZNER_DEFAULTS = { interval: 15, timeout: 10, retries: 3 };
/** Added to the time the check needs, for the balancer to act on its verdict. */
export const DRAIN_MARGIN_MS = 5_000;

/**
 * The drain period (ms): 0 without draining, else the time for `retries` failed checks after the
 * next one begins (one interval more than `retries` intervals, plus a timeout) and a margin. The
 * controller bounds it (10 minutes).
 */
export function drainPeriodMs(defaults: LoadBalancerDefaults): number {
  if (!defaults.drainTargets) return 0;
  const interval = (defaults.healthCheckIntervalMs ?? HETZNER_DEFAULTS.interval * 1000) / 1000;
  const timeout = (defaults.healthCheckTimeoutMs ?? HETZNER_DEFAULTS.timeout * 1000) / 1000;
  const retries = defaults.healthCheckRetries ?? HETZNER_DEFAULTS.retries;
  return Math.round(((retries + 1) * interval + timeout) * 1000) + DRAIN_MARGIN_MS;
}
