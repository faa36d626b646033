import { assert, assertEquals } from "../testing/assert.ts";
import { cidrContains, cidrsOverlap, formatIp, parseCidr, parseIp } from "./cidr.ts";

Deno.test("cidr: parse, canonicalize, contain and overlap (IPv4 and IPv6)", () => {
  assertEquals(parseCidr("10.244.1.7/24")?.text, "10.244.1.0/24");
  assertEquals(parseCidr("10.244.1.7/24", true), undefined);
  assertEquals(parseCidr("fd00:0:0:1::/64")?.text, "fd00:0:0:1::/64");
  assertEquals(parseCidr("2001:db8::/129"), undefined);
  for (const bad of ["10.0.0.0", "10.0.0/8", "10.0.0.256/8", "01.0.0.0/8", "x/8", "1::2::3/64"]) {
    assertEquals(parseCidr(bad), undefined, bad);
  }
  const pods = parseCidr("10.244.0.0/16")!;
  assert(cidrContains(pods, "10.244.255.1"));
  assert(!cidrContains(pods, "10.245.0.1"));
  assert(!cidrContains(pods, "fd00::1"));
  assert(cidrsOverlap(pods, parseCidr("10.244.3.0/24")!));
  assert(!cidrsOverlap(pods, parseCidr("10.0.0.0/16")!));
  assertEquals(formatIp(6, parseIp("2001:db8:0:0:1:0:0:1")!.value), "2001:db8::1:0:0:1");
  assertEquals(formatIp(6, parseIp("::ffff:1.2.3.4")!.value), "::ffff:102:304");
  assertEquals(parseIp("1.2.3"), undefined);
});
