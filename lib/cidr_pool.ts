/**
 * Equal subnets of a range handed out one per holder (the `/24`s of a pod range, one per Node),
 * and the subnet at an index of a larger range (a server's `/64` split into `/80`s). Pure: the node
 * IPAM controller keeps one pool per address family and rebuilds it from the Nodes at start.
 *
 * @module
 */
import { type Cidr, formatIp } from "./cidr.ts";

/**
 * The subnet of `range` with prefix length `prefix` at `index` (0 is the first), or undefined when
 * there is no such subnet (`prefix` shorter than the range's or past the family's bits, `index`
 * out of range).
 */
export function subnetAt(range: Cidr, prefix: number, index: bigint): Cidr | undefined {
  const bits = range.family === 4 ? 32 : 128;
  if (!Number.isInteger(prefix) || prefix < range.prefix || prefix > bits) return undefined;
  if (index < 0n || index >= 1n << BigInt(prefix - range.prefix)) return undefined;
  const network = range.network | (index << BigInt(bits - prefix));
  return { family: range.family, network, prefix, text: `${formatIp(range.family, network)}/${prefix}` };
}

/** The most subnets one pool holds (kube-controller-manager's limit: 16 bits between the prefixes). */
export const MAX_POOL_BITS = 16;

/** See the module doc. */
export class CidrPool {
  /** Who holds each taken subnet, by index. */
  readonly #taken = new Map<bigint, string>();
  /** Where the next search starts: freed subnets are reused only after the rest (as upstream). */
  #next = 0n;
  readonly #size: bigint;

  /**
   * A pool of the `/prefix` subnets of `range`. Throws a RangeError when `prefix` does not split
   * `range` into 1 to 2^{@link MAX_POOL_BITS} subnets.
   */
  constructor(readonly range: Cidr, readonly prefix: number) {
    const bits = range.family === 4 ? 32 : 128;
    if (!Number.isInteger(prefix) || prefix < range.prefix || prefix > bits) {
      throw new RangeError(`a /${prefix} is not a subnet of ${range.text}`);
    }
    if (prefix - range.prefix > MAX_POOL_BITS) {
      throw new RangeError(
        `${range.text} holds 2^${prefix - range.prefix} subnets of /${prefix}: at most 2^${MAX_POOL_BITS}`,
      );
    }
    this.#size = 1n << BigInt(prefix - range.prefix);
  }

  /** How many subnets the pool has. */
  get size(): bigint {
    return this.#size;
  }

  /** How many are taken. */
  get used(): number {
    return this.#taken.size;
  }

  /** The index of `cidr` when it is one of the pool's subnets, else undefined. */
  indexOf(cidr: Cidr): bigint | undefined {
    if (cidr.family !== this.range.family || cidr.prefix !== this.prefix) return undefined;
    const bits = cidr.family === 4 ? 32 : 128;
    const index = (cidr.network - this.range.network) >> BigInt(bits - this.prefix);
    return index >= 0n && index < this.#size &&
        subnetAt(this.range, this.prefix, index)?.network === cidr.network
      ? index
      : undefined;
  }

  /** Who holds `cidr`, if anyone. */
  holderOf(cidr: Cidr): string | undefined {
    const index = this.indexOf(cidr);
    return index === undefined ? undefined : this.#taken.get(index);
  }

  /**
   * Marks `cidr` as `holder`'s. Returns the other holder when someone else has it already (it stays
   * theirs); a range that is not one of the pool's subnets is ignored.
   */
  occupy(cidr: Cidr, holder: string): string | undefined {
    const index = this.indexOf(cidr);
    if (index === undefined) return undefined;
    const current = this.#taken.get(index);
    if (current !== undefined && current !== holder) return current;
    this.#taken.set(index, holder);
    return undefined;
  }

  /** Frees `cidr` when `holder` holds it. */
  release(cidr: Cidr, holder: string): void {
    const index = this.indexOf(cidr);
    if (index !== undefined && this.#taken.get(index) === holder) this.#taken.delete(index);
  }

  /** Takes the next free subnet for `holder`, or undefined when every one is taken. */
  allocate(holder: string): Cidr | undefined {
    for (let i = 0n; i < this.#size; i++) {
      const index = (this.#next + i) % this.#size;
      if (this.#taken.has(index)) continue;
      this.#taken.set(index, holder);
      this.#next = (index + 1n) % this.#size;
      return subnetAt(this.range, this.prefix, index);
    }
    return undefined;
  }
}
