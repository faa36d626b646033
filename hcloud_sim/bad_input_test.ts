/**
 * Bad input against every write endpoint of the simulator that the spec lists: malformed JSON is
 * `json_error`, wrongly typed fields are a 4xx naming them, never a 5xx, and a refused request
 * changes nothing.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { DEFAULT_SIM_TOKEN } from "./simulator.ts";
import { applySeed } from "./control.ts";

const SPEC = JSON.parse(
  await Deno.readTextFile(new URL("../hcloud_api/openapi.json", import.meta.url)),
) as { paths: Record<string, Record<string, unknown>> };

Deno.test("simulator: malformed and wrongly typed bodies on every write endpoint are 4xx and change nothing", async () => {
  const t = await startTestSim();
  try {
    applySeed(t.sim, {
      networks: [{
        name: "n",
        ip_range: "10.0.0.0/8",
        subnets: [{ ip_range: "10.0.0.0/24", network_zone: "eu-central" }],
      }],
      servers: [{ name: "s", private_net: [{ network: "n" }] }],
    });
    const server = [...t.sim.world.servers.values()][0];
    const ids: Record<string, number> = {
      servers: server.id,
      networks: [...t.sim.world.networks.keys()][0],
      primary_ips: server.public_net.ipv4!.id!,
      load_balancers:
        (await t.api("POST", "/load_balancers", { name: "lb", load_balancer_type: "lb11", location: "fsn1" }))
          .body.load_balancer.id,
      certificates: (await t.api("POST", "/certificates", {
        name: "c",
        type: "managed",
        domain_names: ["a.example.com"],
      }))
        .body.certificate.id,
      ssh_keys: (await t.api("POST", "/ssh_keys", {
        name: "k",
        public_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHJlYWxseSBub3QgYSByZWFsIGtleSBhdCBhbGwhIQ==",
      })).body.ssh_key.id,
      volumes: (await t.api("POST", "/volumes", { name: "v", size: 10, location: "fsn1" })).body.volume.id,
    };
    await new Promise((r) => setTimeout(r, 5)); // let the setup's actions finish
    const state = async () => {
      const res = await fetch(`${t.sim.endpoint.replace(/\/v1$/, "")}/_sim/state`);
      return JSON.stringify(await res.json());
    };
    const before = await state();
    const wrongTypes = {
      name: 5,
      type: 7,
      labels: "x",
      server_type: [],
      image: {},
      location: true,
      network: "x",
      ip_range: 1,
      ip: 2,
      destination: 3,
      gateway: 4,
      load_balancer_type: [],
      protocol: 9,
      listen_port: "80",
      delete: "yes",
      assignee_id: "x",
      size: "big",
      public_key: 1,
      domain_names: "a",
      alias_ips: "x",
    };
    let tried = 0;
    for (const [path, methods] of Object.entries(SPEC.paths)) {
      for (const method of ["post", "put"].filter((m) => m in methods)) {
        const resource = path.split("/")[1];
        if (path.includes("{id}") && !(resource in ids)) continue;
        // Endpoints without a request body (power actions, say) ignore what is sent, as the API does.
        if (!(methods[method] as { requestBody?: unknown }).requestBody) continue;
        const url = path.replace("{id}", String(ids[resource]));
        for (const body of ["{not json", JSON.stringify(wrongTypes)]) {
          const res = await fetch(`${t.sim.endpoint}${url}`, {
            method: method.toUpperCase(),
            headers: { authorization: `Bearer ${DEFAULT_SIM_TOKEN}`, "content-type": "application/json" },
            body,
          });
          const reply = await res.json();
          if (res.status === 404 && reply.error?.message === "endpoint not found") break; // not simulated
          tried++;
          assert(
            res.status < 500,
            `${method} ${url} ${body.slice(0, 10)}: ${res.status} ${JSON.stringify(reply)}`,
          );
          if (body.startsWith("{not")) {
            assertEquals([res.status, reply.error.code], [400, "json_error"], `${method} ${url}`);
          }
          if (res.status >= 400) assertEquals(await state(), before, `${method} ${url} changed state`);
          else {assert(
              false,
              `${method} ${url} accepted wrongly typed fields: ${JSON.stringify(reply).slice(0, 200)}`,
            );}
        }
      }
    }
    assert(tried > 60, `tried ${tried} requests`);
  } finally {
    await t.finish();
  }
});
