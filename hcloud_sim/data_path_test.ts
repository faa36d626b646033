/**
 * The simulator's data path: listeners per balancer service, health checks as configured, traffic
 * only to healthy targets with the PROXY header when asked, health in the API, and open connections
 * cut when their target is removed.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { eventually } from "../testing/helpers.ts";

const PORT = 30181;
/** Where the test runs each server's endpoint: 127.88.x.y. */
const nodeAddress = (id: number) => `127.88.${(id >> 8) & 255}.${id & 255}`;

/** A Node-side TCP endpoint: answers every connection with what it first received, and remembers it. */
function endpoint(address: string) {
  const seen: string[] = [];
  const listener = Deno.listen({ hostname: address, port: PORT });
  (async () => {
    for await (const conn of listener) {
      (async () => {
        const buf = new Uint8Array(256);
        const n = await conn.read(buf).catch(() => null);
        if (n) {
          const text = new TextDecoder().decode(buf.subarray(0, n));
          seen.push(text);
          await conn.write(new TextEncoder().encode(`${address} got ${text}`)).catch(() => {});
        }
        // Holds the connection open (a long request) until the peer closes it.
        await conn.read(buf).catch(() => null);
        try {
          conn.close();
        } catch { /* closed */ }
      })();
    }
  })().catch(() => {});
  return { seen, close: () => listener.close() };
}

/** A TCP balancer listening on `listenPort`, sending to and checking PORT on `targets` (every 3 s, no retry). */
async function tcpBalancer(
  t: Awaited<ReturnType<typeof startTestSim>>,
  listenPort: number,
  targets: number[],
  proxyprotocol: boolean,
) {
  const created = await t.api("POST", "/load_balancers", {
    name: "lb",
    load_balancer_type: "lb11",
    location: "fsn1",
    services: [{
      protocol: "tcp",
      listen_port: listenPort,
      destination_port: PORT,
      proxyprotocol,
      health_check: { protocol: "tcp", port: PORT, interval: 3, timeout: 1, retries: 0 },
    }],
    targets: targets.map((id) => ({ type: "server", server: { id } })),
  });
  return created.body.load_balancer;
}

Deno.test({
  name: "sim data path: health-checked targets, PROXY header, health in the API, connections cut on removal",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const t = await startTestSim();
    const up = t.sim.addServer({ name: "up", location: "fsn1" });
    const down = t.sim.addServer({ name: "down", location: "fsn1" });
    const live = endpoint(nodeAddress(up.id));
    const dataPath = t.sim.enableDataPath({ serverAddress: nodeAddress, reconcileMs: 50 });
    try {
      const lb = await tcpBalancer(t, 18181, [up.id, down.id], true);
      const health = async () => {
        const got = (await t.api("GET", `/load_balancers/${lb.id}`)).body.load_balancer;
        return Object.fromEntries(
          got.targets.map((x: { server: { id: number }; health_status: { status: string }[] }) => [
            x.server.id,
            x.health_status[0].status,
          ]),
        );
      };
      // The one without an endpoint fails its first check (retries 0): unhealthy, as the API shows.
      await eventually(async () => {
        const h = await health();
        return h[up.id] === "healthy" && h[down.id] === "unhealthy";
      }, 10_000);
      const address = dataPath.address(lb.id, 18181)!;
      const ask = async (text: string) => {
        const conn = await Deno.connect(address);
        await conn.write(new TextEncoder().encode(text));
        const buf = new Uint8Array(512);
        const n = await conn.read(buf);
        return { conn, answer: new TextDecoder().decode(buf.subarray(0, n ?? 0)) };
      };
      // Every connection goes to the healthy target, with the PROXY header first.
      for (const i of [1, 2, 3, 4]) {
        const { conn, answer } = await ask(`hello ${i}`);
        assert(answer.startsWith(`${nodeAddress(up.id)} got PROXY TCP4 127.0.0.1 127.77.`), answer);
        conn.close();
      }
      assertEquals(live.seen.length >= 4, true);
      // A target removed loses its open connections at once.
      const open = await ask("long request");
      const removed = await t.api("POST", `/load_balancers/${lb.id}/actions/remove_target`, {
        type: "server",
        server: { id: up.id },
      });
      assertEquals(removed.status, 201);
      const n = await open.conn.read(new Uint8Array(16)).catch(() => null);
      assertEquals(n, null, "the connection was closed");
      // Nothing healthy left: a new connection is refused (closed without an answer).
      await eventually(async () => {
        const conn = await Deno.connect(address);
        const got = await conn.read(new Uint8Array(16)).catch(() => null);
        conn.close();
        return got === null;
      }, 5_000);
    } finally {
      live.close();
      await t.finish();
    }
  },
});

Deno.test({
  name:
    "sim data path: a firewall on the target lets through only what its rules allow: the balancer's checks and traffic, a client outside",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const t = await startTestSim();
    const node = t.sim.addServer({ name: "node", location: "fsn1", labels: { role: "node" } });
    const live = endpoint(nodeAddress(node.id));
    const dataPath = t.sim.enableDataPath({ serverAddress: nodeAddress, reconcileMs: 50 });
    try {
      const lb = await tcpBalancer(t, 18182, [node.id], false);
      const lbIp = lb.public_net.ipv4.ip as string;
      const status = async () =>
        (await t.api("GET", `/load_balancers/${lb.id}`)).body.load_balancer.targets[0].health_status[0]
          .status;
      const answered = async () => {
        const conn = await Deno.connect(dataPath.address(lb.id, 18182)!);
        await conn.write(new TextEncoder().encode("hi"));
        const n = await conn.read(new Uint8Array(64)).catch(() => null);
        conn.close();
        return n !== null;
      };
      const direct = (source: string) =>
        dataPath.connectFrom(source, node.id, PORT).then((c) => (c.close(), true), () => false);
      await eventually(() => dataPath.address(lb.id, 18182) !== undefined, 5_000);
      await eventually(async () => await status() === "healthy" && await answered(), 10_000);
      assertEquals(await direct("198.51.100.77"), true, "no firewall: the world reaches the port");

      // The first firewall, allowing SSH only: the balancer's checks fail, the world is dropped.
      const fw = (await t.api("POST", "/firewalls", {
        name: "nodes",
        rules: [{ direction: "in", protocol: "tcp", port: "22", source_ips: ["0.0.0.0/0"] }],
        apply_to: [{ type: "label_selector", label_selector: { selector: "role=node" } }],
      })).body.firewall;
      await eventually(async () => await status() === "unhealthy", 10_000);
      assertEquals(await direct("198.51.100.77"), false);
      assertEquals(await answered(), false, "no healthy target behind the firewall");

      // The balancer's address allowed on the port: healthy and served; the world still dropped.
      await t.api("POST", `/firewalls/${fw.id}/actions/set_rules`, {
        rules: [{ direction: "in", protocol: "tcp", port: String(PORT), source_ips: [`${lbIp}/32`] }],
      });
      await eventually(async () => await status() === "healthy", 10_000);
      assertEquals([await answered(), await direct("198.51.100.77"), await direct(lbIp)], [
        true,
        false,
        true,
      ]);
      assertEquals(dataPath.dropped, 0, "no connection dropped once allowed");
    } finally {
      live.close();
      await t.finish();
    }
  },
});
