/**
 * Work priorities for the cloud API budget. Controllers run their work inside `withPriority`; the
 * hcloud transport reads the current priority and, when the rate-limit bucket runs low, lets
 * important work through first instead of running into 429s: node initialization and lifecycle,
 * then the balancers' targets and cluster-wide repairs, then routes, then periodic refreshes, and
 * last the work tenants cause by writing Services (creating, changing and deleting their
 * balancers). A tenant churning Services can thus use at most three quarters of the hourly budget;
 * the last quarter keeps serving Nodes, targets, routes and refreshes (issue 33, probe N14).
 *
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** Priorities, most important first. */
export const PRIORITIES = ["node", "loadbalancer", "route", "refresh", "service"] as const;
/** One of {@link PRIORITIES}. */
export type Priority = (typeof PRIORITIES)[number];

const storage = new AsyncLocalStorage<Priority>();

/** Runs `fn` with `priority` for every cloud call it makes. */
export function withPriority<T>(priority: Priority, fn: () => T): T {
  return storage.run(priority, fn);
}

/** The priority of the current work (`node` when none was set: startup and tests). */
export function currentPriority(): Priority {
  return storage.getStore() ?? "node";
}

/**
 * The share of the bucket each priority must leave for the ones above it: node work may use the
 * last request, periodic refreshes stop while fewer than 15 % remain, Service syncs below 25 %.
 */
export const RESERVE: Record<Priority, number> = {
  node: 0,
  loadbalancer: 0.05,
  route: 0.1,
  refresh: 0.15,
  service: 0.25,
};
