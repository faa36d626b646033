/**
 * Who holds which pod CIDR, for the node IPAM controller: a pool per family handed out from
 * `--cluster-cidr`, and the IPv6 ranges taken from machines. Filled from the Nodes as the informer
 * lists and watches them (so a new leader knows every range in use before it hands one out); a
 * range a Node was registered with that another Node holds is reported, and stays the first
 * holder's; one that is not a subnet of the pool is reported.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { FamilyPlan } from "./node_ipam_plan.ts";
import { podCidrs } from "../node_metadata.ts";
import { type Cidr, parseCidr } from "../../lib/cidr.ts";
import { CidrPool } from "../../lib/cidr_pool.ts";

/** See the module doc. */
export class PodCidrBook {
  readonly #pools = new Map<4 | 6, CidrPool>();
  /** Ranges not from a pool (IPv6 from machines), by text: the Node holding each. */
  readonly #others = new Map<string, string>();

  /** A book with a pool for each family of `families` that is handed out from its range. */
  constructor(families: FamilyPlan[]) {
    for (const f of families) {
      if (f.source === "pool") this.#pools.set(f.family, new CidrPool(f.clusterRange, f.prefix));
    }
  }

  /** The pool of `family`, when that family comes from a pool. */
  pool(family: 4 | 6): CidrPool | undefined {
    return this.#pools.get(family);
  }

  /** Who holds `cidr` outside the pools (a machine's range), if anyone. */
  holderOf(cidr: Cidr): string | undefined {
    return this.#pools.get(cidr.family)?.holderOf(cidr) ?? this.#others.get(cidr.text);
  }

  /**
   * Marks the Node's pod CIDRs as its own. Returns those another Node holds already, with that Node,
   * and those that are not one of the pool's subnets, with why (security review Q7). A range inside one
   * subnet (a `/25`) holds that subnet. A wider one (a `/16`) holds nothing: one kubelet registering a
   * range of its choosing must not take every Node's (the pool would be empty), so it is only reported;
   * a range outside `--cluster-cidr` is reported too.
   */
  occupy(
    node: Node,
  ): { conflicts: { cidr: string; holder: string }[]; misfits: { cidr: string; why: string }[] } {
    const name = node.metadata?.name ?? "";
    const conflicts: { cidr: string; holder: string }[] = [];
    const misfits: { cidr: string; why: string }[] = [];
    for (const text of podCidrs(node)) {
      const cidr = parseCidr(text);
      if (!cidr) continue;
      const pool = this.#pools.get(cidr.family);
      let other: string | undefined;
      if (pool) {
        const covered = pool.overlapping(cidr).length;
        if (covered === 0) {
          misfits.push({ cidr: cidr.text, why: `outside --cluster-cidr ${pool.range.text}` });
          continue;
        }
        if (covered > 1) {
          misfits.push({
            cidr: cidr.text,
            why: `wider than the /${pool.prefix} each Node gets: it overlaps ${covered} of them, which are ` +
              "not held for it (they stay free for other Nodes, whose pods then share addresses with this Node's)",
          });
          continue;
        }
        if (pool.indexOf(cidr) === undefined) {
          misfits.push({
            cidr: cidr.text,
            why: `not a /${pool.prefix} of --cluster-cidr: the /${pool.prefix} holding it is held`,
          });
        }
        other = pool.occupy(cidr, name);
      } else {
        other = this.#others.get(cidr.text);
        if (other === undefined) this.#others.set(cidr.text, name);
      }
      if (other !== undefined && other !== name) conflicts.push({ cidr: cidr.text, holder: other });
    }
    return { conflicts, misfits };
  }

  /** Frees the ranges the Node holds (a deleted Node). */
  free(node: Node): void {
    const name = node.metadata?.name ?? "";
    for (const text of podCidrs(node)) {
      const cidr = parseCidr(text);
      if (cidr) this.release(cidr, name);
    }
  }

  /** Frees `cidr` when `holder` holds it. */
  release(cidr: Cidr, holder: string): void {
    this.#pools.get(cidr.family)?.release(cidr, holder);
    if (this.#others.get(cidr.text) === holder) this.#others.delete(cidr.text);
  }
}
