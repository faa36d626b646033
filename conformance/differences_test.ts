import { assertEquals } from "../testing/assert.ts";
import { listedFor, refusedAnnotations } from "./differences.ts";
import type { Case } from "./case_file.ts";

const P = "load-balancer.hetzner.cloud/";
const caseWith = (services: Case["services"], env: Record<string, string> = {}): Case => ({
  name: "t",
  seed: {},
  nodes: [],
  env,
  services,
});

Deno.test("differences: a refused value excuses only its own Service's missing balancer", () => {
  const c = caseWith([
    { name: "bad", annotations: { [`${P}ipv6-disabled`]: "yes" }, ports: [{ port: 80 }] },
    { name: "good", annotations: {}, ports: [{ port: 80 }] },
  ]);
  assertEquals([...refusedAnnotations(c, c.services![0])], ["ipv6-disabled"]);
  const missing = (name: string) => ({
    phase: "initial",
    path: `load_balancers[<default-name:${name}>]`,
    expected: { target_servers: ["node-0"] },
    actual: null,
  });
  assertEquals(listedFor(c, missing("bad"))?.id, "bad-input-creates-nothing");
  assertEquals(listedFor(c, missing("good")), undefined, "another Service's balancer must be there");
});

Deno.test("differences: use-private-ip without a network is refused; bare seconds are their own rule", () => {
  const c = caseWith([{ name: "s", annotations: {}, ports: [{ port: 80 }] }], {
    HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP: "true",
  });
  assertEquals([...refusedAnnotations(c, c.services![0])], ["use-private-ip"]);
  const bare = caseWith([{
    name: "s",
    annotations: { [`${P}health-check-interval`]: "20" },
    ports: [{ port: 80 }],
  }]);
  assertEquals(refusedAnnotations(bare, bare.services![0]).size, 0, "ours accepts bare seconds");
  const d = {
    phase: "initial",
    path: "load_balancers[<default-name:s>].services[80]",
    expected: null,
    actual: {},
  };
  assertEquals(listedFor(bare, d)?.id, "duration-bare-seconds");
});
