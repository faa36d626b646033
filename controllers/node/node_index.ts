/**
 * Nodes by provider ID and by InternalIP/ExternalIP address, kept up to date from the Node informer's
 * events. Initializing a Node looks for other Nodes with its server or its addresses; scanning every
 * Node for each made a burst of N joining Nodes cost N² (at 10 000 Nodes the controller spent its
 * time there, ~0.2 s a Node); a lookup here costs what the answer holds.
 *
 * @module
 */
import type { Node } from "kubernetes-types/core/v1.d.ts";

/** The address types another Node must not share (traffic and pod routes follow them). */
const INDEXED_ADDRESS_TYPES = new Set(["InternalIP", "ExternalIP"]);

/** See the module doc. */
export class NodeIndex {
  readonly #byProviderID = new Map<string, Set<string>>();
  readonly #byAddress = new Map<string, Set<string>>();
  /** What each Node was indexed under, to take it out again. */
  readonly #keys = new Map<string, { providerID?: string; addresses: string[] }>();

  /** Indexes `node` as it is now (added or changed). */
  update(node: Node): void {
    const name = node.metadata?.name;
    if (!name) return;
    this.#drop(name);
    const providerID = node.spec?.providerID || undefined;
    const addresses = [
      ...new Set(
        (node.status?.addresses ?? []).filter((a) => INDEXED_ADDRESS_TYPES.has(a.type)).map((a) => a.address),
      ),
    ];
    this.#keys.set(name, { providerID, addresses });
    if (providerID) add(this.#byProviderID, providerID, name);
    for (const address of addresses) add(this.#byAddress, address, name);
  }

  /** Forgets `node` (deleted). */
  remove(node: Node): void {
    const name = node.metadata?.name;
    if (name) this.#drop(name);
  }

  /** Names of the Nodes whose provider ID is `providerID`. */
  withProviderID(providerID: string): string[] {
    return [...this.#byProviderID.get(providerID) ?? []];
  }

  /** Names of the Nodes having `address` as an InternalIP or ExternalIP. */
  withAddress(address: string): string[] {
    return [...this.#byAddress.get(address) ?? []];
  }

  #drop(name: string): void {
    const keys = this.#keys.get(name);
    if (!keys) return;
    this.#keys.delete(name);
    if (keys.providerID) take(this.#byProviderID, keys.providerID, name);
    for (const address of keys.addresses) take(this.#byAddress, address, name);
  }
}

function add(map: Map<string, Set<string>>, key: string, name: string): void {
  const names = map.get(key);
  if (names) names.add(name);
  else map.set(key, new Set([name]));
}

function take(map: Map<string, Set<string>>, key: string, name: string): void {
  const names = map.get(key);
  names?.delete(name);
  if (names?.size === 0) map.delete(key);
}
