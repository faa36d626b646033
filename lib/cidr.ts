/**
 * IP addresses and CIDR ranges: parsing, containment and overlap, for IPv4 and IPv6.
 *
 * @module
 */

/** A parsed CIDR range. */
export interface Cidr {
  /** 4 or 6. */
  family: 4 | 6;
  /** The network address as a big integer (host bits zeroed). */
  network: bigint;
  /** The prefix length. */
  prefix: number;
  /** Canonical text, e.g. `10.244.0.0/16`. */
  text: string;
}

/** Parses an IPv4 or IPv6 address into its family and integer value. */
export function parseIp(text: string): { family: 4 | 6; value: bigint } | undefined {
  if (text.includes(":")) {
    const value = parseIpv6(text);
    return value === undefined ? undefined : { family: 6, value };
  }
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255 || (p.length > 1 && p.startsWith("0"))) return undefined;
    value = (value << 8n) | BigInt(p);
  }
  return { family: 4, value };
}

function parseIpv6(text: string): bigint | undefined {
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (s: string) => (s === "" ? [] : s.split(":"));
  let head = groups(halves[0]);
  let tail = halves.length === 2 ? groups(halves[1]) : [];
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two groups.
  const last = (tail.length ? tail : head).at(-1);
  if (last?.includes(".")) {
    const v4 = parseIp(last);
    if (!v4 || v4.family !== 4) return undefined;
    const extra = [(v4.value >> 16n).toString(16), (v4.value & 0xffffn).toString(16)];
    if (tail.length) tail = [...tail.slice(0, -1), ...extra];
    else head = [...head.slice(0, -1), ...extra];
  }
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  let value = 0n;
  for (const g of [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...tail]) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    value = (value << 16n) | BigInt(parseInt(g, 16));
  }
  return value;
}

/** Formats an integer address of `family` as text (IPv6 compressed). */
export function formatIp(family: 4 | 6, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 255n)).join(".");
  const groups = Array.from(
    { length: 8 },
    (_, i) => ((value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16),
  );
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8;) {
    if (groups[i] !== "0") {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > best.len && j - i > 1) best = { at: i, len: j - i };
    i = j;
  }
  if (best.at < 0) return groups.join(":");
  return `${groups.slice(0, best.at).join(":")}::${groups.slice(best.at + best.len).join(":")}`;
}

/** Parses `a.b.c.d/n` or `x::/n`; host bits must be zero unless `strict` is false. */
export function parseCidr(text: string, strict = false): Cidr | undefined {
  const slash = text.indexOf("/");
  if (slash < 0) return undefined;
  const ip = parseIp(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!ip || !/^\d{1,3}$/.test(prefixText)) return undefined;
  const bits = ip.family === 4 ? 32 : 128;
  const prefix = Number(prefixText);
  if (prefix > bits) return undefined;
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix);
  const network = ip.value & mask;
  if (strict && network !== ip.value) return undefined;
  return { family: ip.family, network, prefix, text: `${formatIp(ip.family, network)}/${prefix}` };
}

/** The last address of a range. */
export function lastAddress(cidr: Cidr): bigint {
  const bits = cidr.family === 4 ? 32 : 128;
  return cidr.network | ((1n << BigInt(bits - cidr.prefix)) - 1n);
}

/** True when `ip` (text or parsed) lies inside `cidr`. */
export function cidrContains(cidr: Cidr, ip: string): boolean {
  const parsed = parseIp(ip);
  return !!parsed && parsed.family === cidr.family && parsed.value >= cidr.network &&
    parsed.value <= lastAddress(cidr);
}

/** True when `inner` lies wholly inside `outer`. */
export function cidrWithin(inner: Cidr, outer: Cidr): boolean {
  return inner.prefix >= outer.prefix && cidrsOverlap(inner, outer);
}

/** True when the two ranges share at least one address. */
export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  return a.family === b.family && a.network <= lastAddress(b) && b.network <= lastAddress(a);
}
