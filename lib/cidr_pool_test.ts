import { assertEquals, assertThrows } from "../testing/assert.ts";
import { parseCidr } from "./cidr.ts";
import { CidrPool, subnetAt } from "./cidr_pool.ts";

const cidr = (text: string) => parseCidr(text)!;

Deno.test("subnetAt: a server's /64 split into /80s; index 1 skips the host's ::1", () => {
  assertEquals(subnetAt(cidr("2a01:4f8:c0c:1234::/64"), 80, 1n)?.text, "2a01:4f8:c0c:1234:1::/80");
  assertEquals(subnetAt(cidr("2a01:4f8:c0c:1234::/64"), 112, 1n)?.text, "2a01:4f8:c0c:1234::1:0/112");
  assertEquals(subnetAt(cidr("10.244.0.0/16"), 24, 255n)?.text, "10.244.255.0/24");
  assertEquals(subnetAt(cidr("10.244.0.0/16"), 24, 256n), undefined, "past the range");
  assertEquals(subnetAt(cidr("10.244.0.0/16"), 8, 0n), undefined, "wider than the range");
  assertEquals(subnetAt(cidr("2001:db8::/64"), 129, 0n), undefined, "past the family's bits");
});

Deno.test("CidrPool: hands out subnets in order, one per holder, and knows who holds what", () => {
  const pool = new CidrPool(cidr("10.244.0.0/22"), 24);
  assertEquals(pool.size, 4n);
  assertEquals(pool.occupy(cidr("10.244.1.0/24"), "a"), undefined);
  assertEquals(pool.allocate("b")?.text, "10.244.0.0/24");
  assertEquals(pool.allocate("c")?.text, "10.244.2.0/24", "a's is skipped");
  assertEquals(pool.occupy(cidr("10.244.1.0/24"), "d"), "a", "a collision names the holder; a keeps it");
  assertEquals(pool.holderOf(cidr("10.244.1.0/24")), "a");
  assertEquals(pool.occupy(cidr("10.244.1.0/24"), "a"), undefined, "occupying again is harmless");
  assertEquals(pool.occupy(cidr("10.245.0.0/24"), "x"), undefined, "outside the range: ignored");
  assertEquals(pool.occupy(cidr("10.244.0.0/25"), "x"), "b", "a narrower range is in b's subnet: b keeps it");
  assertEquals(
    pool.overlapping(cidr("10.244.0.0/16")),
    [0n, 1n, 2n, 3n],
    "a wider range overlaps all it covers",
  );
  assertEquals(pool.overlapping(cidr("10.244.2.128/25")), [2n]);
  assertEquals(pool.overlapping(cidr("10.243.0.0/24")), [], "outside");
  assertEquals(pool.allocate("e")?.text, "10.244.3.0/24");
  assertEquals(pool.allocate("f"), undefined, "full");
  pool.release(cidr("10.244.0.0/24"), "someone-else");
  assertEquals(pool.allocate("f"), undefined, "only the holder releases");
  pool.release(cidr("10.244.0.0/24"), "b");
  assertEquals(pool.used, 3);
  assertEquals(pool.allocate("f")?.text, "10.244.0.0/24");
});

Deno.test("CidrPool: IPv6 ranges, and the limits kube-controller-manager has", () => {
  const pool = new CidrPool(cidr("fd00:10::/56"), 64);
  assertEquals(pool.allocate("a")?.text, "fd00:10::/64");
  assertEquals(pool.allocate("b")?.text, "fd00:10:0:1::/64");
  assertEquals(
    assertThrows(() => new CidrPool(cidr("10.0.0.0/8"), 25), RangeError).message,
    "10.0.0.0/8 holds 2^17 subnets of /25: at most 2^16",
  );
  assertEquals(
    assertThrows(() => new CidrPool(cidr("10.244.0.0/16"), 12), RangeError).message,
    "a /12 is not a subnet of 10.244.0.0/16",
  );
});
