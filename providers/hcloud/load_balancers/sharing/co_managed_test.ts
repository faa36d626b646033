import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assertEquals } from "../../../../testing/assert.ts";
import { CO_MANAGED_STATE, planCoManaged, planRelease } from "./co_managed.ts";
import { readCoManagedState, writeCoManagedState } from "./co_managed_record.ts";
import { RecordSeal } from "../../record_seal.ts";
import { parseLoadBalancerSpec } from "../spec/mod.ts";
import type { DesiredService } from "../core/desired.ts";
import type { components } from "../../../../hcloud_api/mod.ts";

type LB = components["schemas"]["load_balancer"];
const SEL = "deno-ccm/lb-target=c1";

function svc(port: number, destination = 30000 + port): DesiredService {
  return {
    listen_port: port,
    destination_port: destination,
    protocol: "tcp",
    proxyprotocol: false,
    health_check: { protocol: "tcp", port: destination },
  } as DesiredService;
}
/** A balancer with `ports`, sending them to `destination` (the maker's, unless given). */
function lb(ports: number[], selector = false, destination = (p: number) => 20000 + p, others = true): LB {
  return {
    id: 5,
    name: "shared",
    services: ports.map((p) => ({
      ...svc(p, destination(p)),
      health_check: { ...svc(p, destination(p)).health_check, interval: 15, timeout: 10, retries: 3 },
    })),
    targets: [
      ...(others ? [{ type: "server", server: { id: 1 } }] : []),
      ...(selector ? [{ type: "label_selector", label_selector: { selector: SEL } }] : []),
    ],
  } as unknown as LB;
}
const target = (addedByCluster = false) => ({ selector: SEL, usePrivateIp: false, addedByCluster });

Deno.test("co-managed plan: own ports added, updated and removed; others reported; target added once", () => {
  const first = planCoManaged(lb([9000]), [svc(80), svc(9000)], undefined, target());
  assertEquals(first.actions.map((a) => a.kind), ["add_service", "add_target"]);
  assertEquals(first.conflicts, [9000]);
  assertEquals(first.state, { id: 5, ports: [80], target: true });

  const moved = planCoManaged(lb([80, 9000], true), [svc(8080)], first.state, target(true));
  assertEquals(moved.actions, [{ kind: "delete_service", listenPort: 80 }, {
    kind: "add_service",
    service: svc(8080),
  }]);
  assertEquals(moved.state, { id: 5, ports: [8080], target: true });

  const changed = planCoManaged(
    lb([80], true),
    [svc(80, 31111)],
    { id: 5, ports: [80], target: false },
    target(),
  );
  assertEquals(changed.actions.map((a) => a.kind), ["update_service"]);
  assertEquals(changed.state.target, false, "a target found there is not ours");

  const otherBalancer = planCoManaged(lb([80]), [svc(80)], { id: 99, ports: [80], target: true }, target());
  assertEquals(otherBalancer.conflicts, [80], "ports owned on another balancer are not owned here");

  // No (valid) record: a port that sends to the NodePort the tenant chose is not the Service's, even
  // where every target is this cluster's (review N1d: someone's 80 → 31731, taken by a Service that
  // picked NodePort 31731, rewritten and deleted with it) ...
  const taken = planCoManaged(lb([80], true, (p) => 30000 + p, false), [svc(80)], undefined, target(true));
  assertEquals([taken.conflicts, taken.actions, taken.state.ports], [[80], [], []]);
  // ... nor beside another owner's target (probe P2).
  const chosen = planCoManaged(lb([80], true, (p) => 30000 + p), [svc(80)], undefined, target(true));
  assertEquals([chosen.conflicts, chosen.actions, chosen.state.ports], [[80], [], []]);
});

Deno.test("co-managed release: own ports, and the target only when the cluster added it and nobody needs it", () => {
  const state = { id: 5, ports: [80, 81], target: true };
  const kinds = (keep: boolean, added: boolean) =>
    planRelease(lb([80, 9000], true), state, { selector: SEL, addedByCluster: added, stillServed: keep })
      .map((a) => a.kind === "delete_service" ? `delete ${a.listenPort}` : a.kind);
  assertEquals(kinds(false, true), ["delete 80", "remove_target"]);
  assertEquals(kinds(true, true), ["delete 80"]);
  assertEquals(kinds(false, false), ["delete 80"]);
});

Deno.test("co-managed input: only a sealed record of this Service counts; whole-balancer annotations refused", async () => {
  const service = (annotations: Record<string, string>, uid = "uid-s"): Service => ({
    metadata: { name: "s", uid, annotations },
  });
  const seal = new RecordSeal(() => ["the-cloud-token"]);
  assertEquals(await readCoManagedState(service({ [CO_MANAGED_STATE]: "{bad" }), seal), undefined);
  // What a tenant can write (probe N1): a plausible record without a valid seal is no record.
  const forged = '{"id":38,"ports":[443],"target":true}';
  assertEquals(await readCoManagedState(service({ [CO_MANAGED_STATE]: forged }), seal), undefined);
  const state = { id: 5, ports: [80], target: false };
  const written = await writeCoManagedState(service({}), state, seal);
  assertEquals(await readCoManagedState(service({ [CO_MANAGED_STATE]: written }), seal), state);
  assertEquals(
    await readCoManagedState(service({ [CO_MANAGED_STATE]: written }, "uid-other"), seal),
    undefined,
    "a record copied onto another Service",
  );
  const widened = JSON.stringify({ ...JSON.parse(written), ports: [80, 443] });
  assertEquals(await readCoManagedState(service({ [CO_MANAGED_STATE]: widened }), seal), undefined, "edited");
  const defaults = { enabled: true, disablePrivateIngress: false, usePrivateIp: false, disableIpv6: false };
  const P = "load-balancer.hetzner.cloud/";
  const { errors } = parseLoadBalancerSpec(
    service({
      [`${P}attach-to`]: "shared",
      [`${P}type`]: "lb21",
      [`${P}algorithm-type`]: "least_connections",
    }),
    defaults,
  );
  assertEquals(errors.length, 1);
  assertEquals(errors[0].includes(`${P}type, ${P}algorithm-type`), true, errors[0]);
  const bad = parseLoadBalancerSpec(service({ [`${P}attach-to`]: "-x-" }), defaults);
  assertEquals(bad.errors[0].includes('"-x-"'), true, bad.errors[0]);
});
