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

Deno.test("differences: two Services naming one balancer, and a Node outside the Network, each have their rule (issue 59 item 7)", () => {
  const named = (name: string) => ({
    name,
    annotations: { [`${P}name`]: "shared-lb" },
    ports: [{ port: 80 }],
  });
  const c = caseWith([named("victim"), named("hostile"), {
    name: "other",
    annotations: {},
    ports: [{ port: 80 }],
  }]);
  const at = (path: string, expected: unknown = "<uid:hostile>", actual: unknown = "<uid:victim>") => ({
    phase: "step1:create_service",
    path,
    expected,
    actual,
  });
  assertEquals(
    listedFor(c, at("load_balancers[shared-lb].labels[hcloud-ccm/service-uid]"))?.id,
    "one-name-first-service-keeps",
  );
  assertEquals(listedFor(c, at("load_balancers[shared-lb]", {}, null))?.id, "one-name-first-service-keeps");
  assertEquals(
    listedFor(c, at("services.hostile.ingress", [{ ip: "x" }], []))?.id,
    "one-name-first-service-keeps",
  );
  assertEquals(
    listedFor(c, at("services.other.ingress", [{ ip: "x" }], [])),
    undefined,
    "another Service's ingress",
  );
  assertEquals(
    listedFor(c, at("load_balancers[<default-name:other>].labels[x]")),
    undefined,
    "another balancer",
  );
  assertEquals(listedFor(caseWith([named("victim")]), at("load_balancers[shared-lb]", {}, null)), undefined);

  const outside: Case = {
    name: "t",
    env: { HCLOUD_NETWORK: "k8s" },
    seed: { servers: [{ name: "node-0", private_net: [{ network: "k8s" }] }, { name: "node-1" }] },
    nodes: [{ name: "node-0" }, { name: "node-1" }],
    services: [],
  };
  const settled = { phase: "initial", path: "converged", expected: false, actual: true };
  assertEquals(listedFor(outside, settled)?.id, "node-outside-network-settles");
  assertEquals(
    listedFor(outside, { ...settled, expected: true, actual: false }),
    undefined,
    "ours must settle",
  );
  const inside = { ...outside, seed: { servers: [outside.seed.servers![0]] }, nodes: [{ name: "node-0" }] };
  assertEquals(listedFor(inside, settled), undefined);
});
