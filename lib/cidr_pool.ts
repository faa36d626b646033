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

  /**
   * The indexes of the pool's subnets `cidr` overlaps: its own for one of them, every one inside a
   * wider range, the one holding a narrower range; none outside the pool's range or of another family.
   */
  overlapping(cidr: Cidr): bigint[] {
    if (cidr.family !== this.range.family) return [];
    const bits = BigInt(cidr.family === 4 ? 32 : 128);
    const end = (c: Cidr) => c.network + (1n << (bits - BigInt(c.prefix))) - 1n;
    const low = cidr.network > this.range.network ? cidr.network : this.range.network;
    const high = end(cidr) < end(this.range) ? end(cidr) : end(this.range);
    if (low > high) return [];
    const shift = bits - BigInt(this.prefix);
    const first = (low - this.range.network) >> shift, last = (high - this.range.network) >> shift;
    const indexes: bigint[] = [];
    for (let i = first; i <= last; i++) indexes.push(i);
    return indexes;
  }

  /** Who holds `cidr` (or the first taken subnet it overlaps), if anyone. */
  holderOf(cidr: Cidr): string | undefined {
    for (const index of this.overlapping(cidr)) {
      const holder = this.#taken.get(index);
      if (holder !== undefined) return holder;
    }
    return undefined;
  }

  /**
   * Marks every subnet `cidr` overlaps as `holder`'s (a range inside one subnet holds that subnet;
   * the node IPAM's book never passes a wider one, which would let one kubelet empty the pool).
   * Returns another holder of one of them when there is one (those stay theirs); nothing is taken
   * outside the pool's range.
   */
  occupy(cidr: Cidr, holder: string): string | undefined {
    let other: string | undefined;
    for (const index of this.overlapping(cidr)) {
      const current = this.#taken.get(index);
      if (current !== undefined && current !== holder) other ??= current;
      else this.#taken.set(index, holder);
    }
    return other;
  }

  /** Frees the subnets `cidr` overlaps that `holder` holds. */
  release(cidr: Cidr, holder: string): void {
    for (const index of this.overlapping(cidr)) {
      if (this.#taken.get(index) === holder) this.#taken.delete(index);
    }
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
