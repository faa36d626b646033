/**
 * The `--controllers` flag: upstream names, aliases, `*` and `-name`.
 *
 * @module
 */

/** The controllers this CCM runs, by upstream name (and ours for the one upstream has not). */
export const CONTROLLER_NAMES = [
  "cloud-node-controller",
  "cloud-node-lifecycle-controller",
  "service-lb-controller",
  "node-route-controller",
  "kubelet-serving-csr-approver",
  "node-ipam-controller",
] as const;

/**
 * Controllers `*` does not turn on (as upstream's disabled-by-default ones): they must be named.
 * The CSR approver: a cluster may already run another approver; node IPAM: kube-controller-manager's
 * allocator usually gives the pod CIDRs, and two allocators must never run at once.
 */
export const OFF_BY_DEFAULT: ReadonlySet<string> = new Set([
  "kubelet-serving-csr-approver",
  "node-ipam-controller",
]);

/** One of {@link CONTROLLER_NAMES}. */
export type ControllerName = (typeof CONTROLLER_NAMES)[number];

const ALIASES: Record<string, ControllerName> = {
  "cloud-node": "cloud-node-controller",
  "cloud-node-lifecycle": "cloud-node-lifecycle-controller",
  service: "service-lb-controller",
  "service-controller": "service-lb-controller",
  route: "node-route-controller",
  "route-controller": "node-route-controller",
  "csr-approver": "kubelet-serving-csr-approver",
  nodeipam: "node-ipam-controller",
  "node-ipam": "node-ipam-controller",
};

function canonical(name: string): ControllerName | undefined {
  if ((CONTROLLER_NAMES as readonly string[]).includes(name)) return name as ControllerName;
  return ALIASES[name];
}

/**
 * Resolves a `--controllers` list (e.g. `*,-node-route-controller` or `cloud-node,service`) into
 * the enabled set. Unknown names are returned as errors naming them.
 */
export function resolveControllers(items: string[]): { enabled: Set<ControllerName>; errors: string[] } {
  const errors: string[] = [];
  const on = new Set<ControllerName>();
  const off = new Set<ControllerName>();
  let star = false;
  for (const raw of items.map((i) => i.trim()).filter((i) => i !== "")) {
    if (raw === "*") {
      star = true;
      continue;
    }
    const disable = raw.startsWith("-");
    const name = canonical(disable ? raw.slice(1) : raw);
    if (!name) {
      errors.push(
        `--controllers: unknown controller "${raw}" (known: ${CONTROLLER_NAMES.join(", ")}; aliases: ${
          Object.keys(ALIASES).join(", ")
        })`,
      );
      continue;
    }
    (disable ? off : on).add(name);
  }
  const enabled = new Set<ControllerName>(
    star ? [...CONTROLLER_NAMES.filter((n) => !OFF_BY_DEFAULT.has(n)), ...on] : on,
  );
  for (const name of off) enabled.delete(name);
  return { enabled, errors };
}
