/**
 * The Kubernetes client and controller runtime against a real kube-apiserver + etcd.
 */
import { assert, assertEquals, assertRejects } from "../testing/assert.ts";
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { TestCluster } from "../testing/kube_cluster.ts";
import { KubeClient } from "../kube/client.ts";
import { KubeApiError } from "../kube/errors.ts";
import { EventRecorder } from "../kube/events.ts";
import { Informer } from "../kube/informer.ts";
import { loadInClusterConfig, loadKubeConfig } from "../kube/kubeconfig.ts";
import { LeaderElector } from "../kube/leader_election.ts";
import { EVENTS, LEASES, NODES } from "../kube/resources.ts";
import { HttpTransport, type KubeRequest, type KubeTransport } from "../kube/transport.ts";
import { eventually, quietLogs } from "../testing/helpers.ts";
import { trimNodeStatus } from "../controllers/mod.ts";

/** Delegates to a real transport, but can cut the connection (watches only, or everything). */
class GatedTransport implements KubeTransport {
  mode: "open" | "no-watch" | "closed" = "open";
  #inflight = new Set<AbortController>();
  constructor(readonly inner: KubeTransport) {}
  send(request: KubeRequest): Promise<Response> {
    if (this.mode === "closed" || (this.mode === "no-watch" && request.watch)) {
      return Promise.reject(new KubeApiError(request.path, 0, "ConnectionFailed", "gated by test"));
    }
    const ctrl = new AbortController();
    this.#inflight.add(ctrl);
    const signal = request.signal ? AbortSignal.any([request.signal, ctrl.signal]) : ctrl.signal;
    return this.inner.send({ ...request, signal }).finally(() => {
      if (!request.watch) this.#inflight.delete(ctrl);
    });
  }
  cut(mode: "no-watch" | "closed"): void {
    this.mode = mode;
    for (const c of this.#inflight) c.abort(new Error("cut by test"));
    this.#inflight.clear();
  }
  close(): void {
    this.inner.close();
  }
}

function node(name: string, labels: Record<string, string> = {}): Node {
  return { apiVersion: "v1", kind: "Node", metadata: { name, labels } };
}

Deno.test({
  name: "kube client and runtime against a real apiserver",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    quietLogs();
    const cluster = await TestCluster.start();
    const transports: KubeTransport[] = [];
    const newClient = async (wrap?: (t: KubeTransport) => KubeTransport) => {
      let transport: KubeTransport = new HttpTransport(await loadKubeConfig([cluster.kubeconfigPath]), {
        qps: 0,
      });
      if (wrap) transport = wrap(transport);
      transports.push(transport);
      return new KubeClient(transport);
    };
    const stop = new AbortController();
    try {
      const client = await newClient();

      await t.step("CRUD, pagination and typed errors", async () => {
        for (let i = 0; i < 7; i++) await client.create(NODES, node(`page-${i}`, { set: "page" }));
        const page = await client.list(NODES, { labelSelector: "set=page", limit: 3 });
        assertEquals(page.items.length, 3);
        assert(page.metadata.continue, "first page has a continue token");
        const all = await client.listAll(NODES, { labelSelector: "set=page", limit: 3 });
        assertEquals(
          all.items.map((n) => n.metadata!.name).sort(),
          [0, 1, 2, 3, 4, 5, 6].map((i) => `page-${i}`),
        );

        const got = await client.get(NODES, "page-0");
        got.metadata!.labels!.updated = "yes";
        const updated = await client.update(NODES, got);
        assertEquals(updated.metadata!.labels!.updated, "yes");
        // A stale resourceVersion is a conflict.
        const conflict = await assertRejects(() => client.update(NODES, got), KubeApiError);
        assert(conflict.isConflict, `expected conflict, got ${conflict.status} ${conflict.reason}`);

        await client.patch(NODES, "page-0", "merge", { metadata: { labels: { merge: "1" } } });
        await client.patch(NODES, "page-0", "strategic", { metadata: { labels: { strategic: "1" } } });
        await client.patch(NODES, "page-0", "json", [{
          op: "add",
          path: "/metadata/labels/json",
          value: "1",
        }]);
        const applied = await client.patch(NODES, "page-0", "apply", {
          apiVersion: "v1",
          kind: "Node",
          metadata: { name: "page-0", labels: { apply: "1" } },
        }, { fieldManager: "test" });
        const labels = applied.metadata!.labels!;
        assertEquals([labels.merge, labels.strategic, labels.json, labels.apply], ["1", "1", "1", "1"]);

        const dup = await assertRejects(() => client.create(NODES, node("page-1")), KubeApiError);
        assert(dup.isAlreadyExists);
        for (let i = 0; i < 7; i++) await client.delete(NODES, `page-${i}`);
        const missing = await assertRejects(() => client.get(NODES, "page-0"), KubeApiError);
        assert(missing.isNotFound);
        assertEquals(missing.status, 404);
        assertEquals(missing.reason, "NotFound");
      });

      await t.step("strategic-merge patch of node status merges conditions by type", async () => {
        await client.create(NODES, node("status-node"));
        await client.patch(NODES, "status-node", "strategic", {
          status: { conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "ok" }] },
        }, { subresource: "status" });
        const patched = await client.patch(NODES, "status-node", "strategic", {
          status: {
            conditions: [{
              type: "NetworkUnavailable",
              status: "False",
              reason: "RouteCreated",
              message: "m",
            }],
            addresses: [{ type: "InternalIP", address: "10.0.0.2" }],
          },
        }, { subresource: "status" });
        const types = patched.status!.conditions!.map((c) => `${c.type}=${c.status}`).sort();
        assertEquals(types, ["NetworkUnavailable=False", "Ready=True"]);
        assertEquals(patched.status!.addresses, [{ type: "InternalIP", address: "10.0.0.2" }]);
        // The status subresource ignores spec changes.
        const ignored = await client.patch(NODES, "status-node", "merge", {
          spec: { podCIDR: "10.244.0.0/24" },
        }, {
          subresource: "status",
        });
        assertEquals(ignored.spec?.podCIDR, undefined);
      });

      await t.step("events: identical events aggregate into one with a count", async () => {
        const recorder = new EventRecorder(client, "test-controller");
        const target = await client.get(NODES, "status-node");
        for (let i = 0; i < 3; i++) {
          recorder.event(NODES, target, "Normal", "Synced", "Node synced successfully");
          await recorder.flush();
        }
        recorder.event(NODES, target, "Warning", "Other", "something else");
        await recorder.flush();
        const events = await client.list(EVENTS, {
          namespace: "default",
          fieldSelector: "involvedObject.name=status-node",
        });
        const byReason = Object.fromEntries(events.items.map((e) => [e.reason, e]));
        assertEquals(events.items.length, 2);
        assertEquals(byReason.Synced.count, 3);
        assertEquals(byReason.Synced.source?.component, "test-controller");
        assertEquals(byReason.Synced.involvedObject.kind, "Node");
        assertEquals(byReason.Synced.involvedObject.uid, target.metadata!.uid);
        assertEquals(byReason.Other.type, "Warning");
      });

      await t.step(
        "informer survives a forced 410 (compaction + apiserver restart) without missing a change",
        async () => {
          for (const n of ["keep", "change", "remove"]) {
            await client.create(NODES, node(`inf-${n}`, { set: "inf" }));
          }
          let gate!: GatedTransport;
          const watchClient = await newClient((inner) => gate = new GatedTransport(inner));
          const informer = new Informer(watchClient, NODES, {
            labelSelector: "set=inf",
            backoff: { baseMs: 100, maxMs: 500 },
          });
          const seen: string[] = [];
          informer.addHandlers({
            onAdd: (n) => seen.push(`add ${n.metadata!.name}`),
            onUpdate: (a, b) => a !== b && seen.push(`update ${b.metadata!.name}`),
            onDelete: (n) => seen.push(`delete ${n.metadata!.name}`),
          });
          const running = informer.run(stop.signal);
          await informer.waitForSync(stop.signal);
          assertEquals(informer.list().length, 3);
          const listsBefore = informer.listCount;

          gate.cut("no-watch");
          await client.create(NODES, node("inf-new", { set: "inf" }));
          await client.delete(NODES, "inf-remove");
          await client.patch(NODES, "inf-change", "merge", { metadata: { labels: { v: "2" } } });
          await cluster.compactEtcd();
          await cluster.restartApiserver();
          gate.mode = "open";

          await eventually(() =>
            informer.get("inf-new") !== undefined && informer.get("inf-remove") === undefined
          );
          await eventually(() => informer.get("inf-change")?.metadata?.labels?.v === "2");
          assert(informer.listCount > listsBefore, "the informer relisted after 410");
          for (const e of ["add inf-new", "delete inf-remove", "update inf-change"]) {
            assert(seen.includes(e), `handlers saw "${e}" (saw ${seen.join(", ")})`);
          }

          // After the restart the watch is live again: a new change arrives without another relist.
          const lists = informer.listCount;
          await client.create(NODES, node("inf-after", { set: "inf" }));
          await eventually(() => informer.get("inf-after") !== undefined);
          assertEquals(informer.listCount, lists);
          void running;
        },
      );

      await t.step(
        "the informer cache keeps no managedFields, Node images, node info, unread conditions or heartbeats",
        async () => {
          const informer = new Informer(await newClient(), NODES, {
            labelSelector: "set=trim",
            transform: trimNodeStatus,
          });
          void informer.run(stop.signal);
          await informer.waitForSync(stop.signal);
          await client.create(NODES, node("trim-1", { set: "trim" }));
          await client.patch(NODES, "trim-1", "merge", {
            status: {
              images: [{ names: ["registry.example/app@sha256:00"], sizeBytes: 1000 }],
              nodeInfo: { kubeletVersion: "v1.36.3" },
              addresses: [{ type: "InternalIP", address: "10.1.2.3" }],
              conditions: [
                { type: "MemoryPressure", status: "False", message: "kubelet has sufficient memory" },
                { type: "Ready", status: "True", lastHeartbeatTime: "2026-11-27T00:00:00Z" },
              ],
            },
          }, { subresource: "status" });
          const stored = await client.get(NODES, "trim-1");
          assert(
            stored.metadata?.managedFields?.length && stored.status?.images?.length && stored.status.nodeInfo,
            "the API has them",
          );
          await eventually(() => informer.get("trim-1")?.status?.addresses?.[0]?.address === "10.1.2.3");
          const cached = informer.get("trim-1")!;
          assertEquals(
            [cached.metadata?.managedFields, cached.status?.images, cached.status?.nodeInfo],
            [undefined, undefined, undefined],
          );
          assertEquals(cached.metadata?.labels?.set, "trim");
          assertEquals(
            cached.status?.conditions?.map((c) => [c.type, c.status, c.lastHeartbeatTime]),
            [["Ready", "True", undefined]],
            "only the conditions controllers read, without heartbeats",
          );
        },
      );

      await t.step("a watch resumes after the apiserver restarts", async () => {
        const informer = new Informer(await newClient(), NODES, {
          labelSelector: "set=resume",
          backoff: { baseMs: 100, maxMs: 500 },
        });
        void informer.run(stop.signal);
        await informer.waitForSync(stop.signal);
        await cluster.restartApiserver();
        await client.create(NODES, node("resume-1", { set: "resume" }));
        await eventually(() => informer.get("resume-1") !== undefined);
        await client.delete(NODES, "resume-1");
        await eventually(() => informer.get("resume-1") === undefined);
      });

      await t.step("leader election: one leads, the other takes over after release or a cut", async () => {
        const timing = {
          leaseDurationMs: 3_000,
          renewDeadlineMs: 2_000,
          retryPeriodMs: 300,
          name: "test-lease",
        };
        const a = new LeaderElector(await newClient(), {
          ...timing,
          identity: "a",
        });
        const b = new LeaderElector(await newClient(), { ...timing, identity: "b" });
        const stopA = new AbortController();
        const stopB = new AbortController();
        const leading: string[] = [];
        const runA = a.run(stopA.signal, { onStartedLeading: () => leading.push("a") });
        await eventually(() => a.isLeader());
        const runB = b.run(stopB.signal, { onStartedLeading: () => leading.push("b") });
        await new Promise((r) => setTimeout(r, 1_500));
        assert(!b.isLeader(), "b waits while a holds the lease");
        assertEquals(leading, ["a"]);

        // a stops: it releases the lease and b leads well within one lease duration.
        const released = Date.now();
        stopA.abort();
        assertEquals(await runA, "stopped");
        await eventually(() => b.isLeader(), 3_000);
        assert(
          Date.now() - released < timing.leaseDurationMs,
          "takeover after release within one lease duration",
        );
        const lease = await client.get(LEASES, "test-lease", { namespace: "kube-system" });
        assertEquals(lease.spec?.holderIdentity, "b");

        // A new candidate a2 waits; b is cut off from the apiserver (as if killed): b steps down
        // after its renew deadline and a2 takes over once the lease expires.
        const a2 = new LeaderElector(await newClient(), { ...timing, identity: "a2" });
        let gateB!: GatedTransport;
        const b2 = new LeaderElector(await newClient((i) => gateB = new GatedTransport(i)), {
          ...timing,
          identity: "b2",
        });
        stopB.abort();
        await runB;
        const stopB2 = new AbortController();
        const runB2 = b2.run(stopB2.signal, { onStartedLeading: () => leading.push("b2") });
        await eventually(() => b2.isLeader());
        const runA2 = a2.run(stop.signal, { onStartedLeading: () => leading.push("a2") });
        const killed = Date.now();
        gateB.cut("closed");
        assertEquals(await runB2, "lost");
        await eventually(() => a2.isLeader(), 10_000);
        const took = Date.now() - killed;
        assert(took < timing.leaseDurationMs + 2 * timing.retryPeriodMs + 1_000, `takeover took ${took} ms`);
        assertEquals(leading, ["a", "b", "b2", "a2"]);
        void runA2;
      });

      await t.step("in-cluster auth with a real service-account token, re-read when it rotates", async () => {
        const ns = "sa-test";
        await cluster.kubectl(["create", "namespace", ns]);
        await cluster.kubectl(["-n", ns, "create", "serviceaccount", "ccm"]);
        const token = (await cluster.kubectl(["-n", ns, "create", "token", "ccm"])).trim();
        const dir = await Deno.makeTempDir();
        await Deno.writeTextFile(`${dir}/ca.crt`, await Deno.readTextFile(`${cluster.dir}/ca.crt`));
        await Deno.writeTextFile(`${dir}/token`, "not-a-valid-token");
        const conn = await loadInClusterConfig({
          KUBERNETES_SERVICE_HOST: "127.0.0.1",
          KUBERNETES_SERVICE_PORT: String(cluster.apiserverPort),
        }, dir);
        const sa = new KubeClient(new HttpTransport(conn, { qps: 0, tokenFileRefreshMs: 60_000 }));
        transports.push(sa.transport);
        const unauth = await assertRejects(() => sa.list(NODES), KubeApiError);
        assertEquals(unauth.status, 401);
        // The token rotates on disk; the next 401 makes the transport re-read it.
        await Deno.writeTextFile(`${dir}/token`, token);
        const forbidden = await assertRejects(() => sa.list(NODES), KubeApiError);
        assertEquals(forbidden.status, 403);
        assert(forbidden.message.includes(`system:serviceaccount:${ns}:ccm`), forbidden.message);
        await cluster.kubectl(["create", "clusterrole", "node-reader", "--verb=list", "--resource=nodes"]);
        await cluster.kubectl([
          "create",
          "clusterrolebinding",
          "node-reader",
          "--clusterrole=node-reader",
          `--serviceaccount=${ns}:ccm`,
        ]);
        await eventually(async () => (await sa.list(NODES).then(() => true, () => false)));
        await Deno.remove(dir, { recursive: true });
      });
    } finally {
      stop.abort();
      for (const tr of transports) tr.close();
      await cluster.stop();
    }
  },
});
