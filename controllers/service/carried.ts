/**
 * Which class-less Services an exclusive `--load-balancer-class` still serves: those it served before
 * the switch keep their balancers until they go. "Served before" is what the cloud holds — a balancer
 * of the Service's own — not the Service's finalizer: a tenant can write the finalizer onto any
 * Service, and where the class is kept from tenants by policy that would have bought a balancer the
 * policy refuses them.
 *
 * Cost: one lookup per such Service per process, paid in a sync its namespace's budget admitted; a
 * Service nothing was asked about yet counts as served (nothing is swept for it meanwhile).
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";

/** Whether the cloud holds a balancer of the Service's own (undefined: cannot tell, assume it does). */
export type BalancerProbe = (svc: Service, signal: AbortSignal) => Promise<boolean | undefined>;

/** See the module doc. */
export class CarriedServices {
  readonly #known = new Map<string, { uid: string; carried: boolean }>();

  constructor(private readonly probe?: BalancerProbe) {}

  /** What is known of the Service at `key`: carried, not, or not asked yet (undefined). */
  known(key: string, svc: Service): boolean | undefined {
    const entry = this.#known.get(key);
    return entry && entry.uid === svc.metadata?.uid ? entry.carried : undefined;
  }

  /** Asks the cloud once per Service (by UID) and remembers the answer. */
  async resolve(key: string, svc: Service, signal: AbortSignal): Promise<boolean> {
    const known = this.known(key, svc);
    if (known !== undefined) return known;
    // A provider that cannot look balancers up keeps the finalizer's word, as before.
    const carried = (await this.probe?.(svc, signal)) ?? true;
    this.#known.set(key, { uid: svc.metadata?.uid ?? "", carried });
    return carried;
  }

  /** The Service went: its answer with it. */
  forget(key: string): void {
    this.#known.delete(key);
  }
}
