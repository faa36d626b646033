/**
 * The kubelet-serving CSR approver against a real apiserver and the simulator (Cloud and Robot):
 * real requests (openssl) created by each kubelet's own identity (a client certificate for
 * `system:node:<name>` in `system:nodes`), approved only for the requesting Node's machine as the
 * cloud records it, everything else denied with the reason, and a request from a Node not yet
 * initialized approved once it is.
 */
import type { CertificateSigningRequest } from "kubernetes-types/certificates/v1.d.ts";
import type { Node } from "kubernetes-types/core/v1.d.ts";
import { assert, assertEquals } from "../testing/assert.ts";
import { registerNode, startCcm, testEnvironment } from "../testing/ccm_harness.ts";
import { eventually } from "../testing/helpers.ts";
import { makeCertificateRequest, servingCsr } from "../testing/csr.ts";
import { CERTIFICATE_SIGNING_REQUESTS, NODES } from "../kube/resources.ts";
import { KubeClient } from "../kube/client.ts";
import { HttpTransport } from "../kube/transport.ts";
import { UNINITIALIZED_TAINT } from "../kube/well_known.ts";
import { applySeed } from "../hcloud_sim/control.ts";
import { chartRoleConnection } from "../testing/rbac.ts";

Deno.test({
  name: "csr approver: kubelet serving certificates approved against the cloud's record of each server",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { cluster, sim, client, close } = await testEnvironment();
    applySeed(sim, {
      networks: [{
        name: "k8s",
        ip_range: "10.0.0.0/8",
        subnets: [{ ip_range: "10.0.0.0/24", network_zone: "eu-central" }],
      }, {
        // A second network overlapping the cluster's (probe P5): web-1 has web-2's cluster address there.
        name: "db",
        ip_range: "10.0.0.0/16",
        subnets: [{ ip_range: "10.0.0.0/24", network_zone: "eu-central" }],
      }],
    });
    const netId = [...sim.world.networks.values()].find((n) => n.name === "k8s")!.id;
    const dbId = [...sim.world.networks.values()].find((n) => n.name === "db")!.id;
    const web1 = sim.addServer({
      name: "web-1",
      location: "fsn1",
      private_net: [{ network: netId, ip: "10.0.0.2" }, { network: dbId, ip: "10.0.0.3" }],
    });
    const web2 = sim.addServer({
      name: "web-2",
      location: "fsn1",
      private_net: [{ network: netId, ip: "10.0.0.3" }],
    });
    const bm1 = sim.robot.add({ server_name: "bm-1", product: "AX41-NVMe", dc: "FSN1-DC14" });
    for (const name of ["web-1", "web-2", "bm-1", "web-3"]) await registerNode(client, name);
    // Kubelets may create CSRs (the Node authorizer is not on here; the bootstrap role grants it).
    await cluster.kubectl([
      "create",
      "clusterrolebinding",
      "kubelets-make-csrs",
      "--clusterrole=system:node-bootstrapper",
      "--group=system:nodes",
    ]);
    const kubelets = new Map<string, KubeClient>();
    const kubelet = async (name: string) => {
      let c = kubelets.get(name);
      if (!c) {
        const conn = await cluster.userConnection(`system:node:${name}`, ["system:nodes"]);
        kubelets.set(name, c = new KubeClient(new HttpTransport(conn, { qps: 0 })));
      }
      return c;
    };
    const ask = async (
      name: string,
      as: string,
      request: Parameters<typeof makeCertificateRequest>[0],
      usages?: string[],
    ) => {
      const pem = await makeCertificateRequest(request);
      await (await kubelet(as)).create(CERTIFICATE_SIGNING_REQUESTS, servingCsr(name, pem, { usages }));
    };
    // The CCM runs with exactly the chart's ClusterRole (CSR approver on): least privilege, proven.
    const ccmIdentity = await chartRoleConnection(cluster, ["csrApprover.enabled=true"]);
    const ccm = await startCcm(cluster, sim, ["--controllers=cloud-node,kubelet-serving-csr-approver"], {
      ROBOT_ENABLED: "true",
      ROBOT_USER: "robot-user",
      ROBOT_PASSWORD: "robot-password",
      ROBOT_ENDPOINT: sim.robotEndpoint,
      HCLOUD_NETWORK: "k8s",
    }, ccmIdentity);
    const decision = async (name: string) => {
      const csr = await client.get(CERTIFICATE_SIGNING_REQUESTS, name) as CertificateSigningRequest;
      const c = (csr.status?.conditions ?? []).find((c) => c.type === "Approved" || c.type === "Denied");
      return c ? `${c.type} ${c.reason}` : "pending";
    };
    try {
      const initialized = async (name: string) =>
        !((await client.get(NODES, name)) as Node).spec?.taints?.some((t) => t.key === UNINITIALIZED_TAINT);
      await eventually(async () =>
        (await initialized("web-1")) && (await initialized("web-2")) && (await initialized("bm-1"))
      );

      // web-3's kubelet asks before its server exists (so before its Node is initialized): it waits.
      await ask("late", "web-3", { commonName: "system:node:web-3", dnsNames: ["web-3"] });
      const started = Date.now();
      await ask("own", "web-1", {
        commonName: "system:node:web-1",
        dnsNames: ["web-1"],
        ipAddresses: [web1.public_net.ipv4!.ip, "10.0.0.2", web1.public_net.ipv6!.ip.replace("/64", "1")],
      });
      await ask("robot", "bm-1", {
        commonName: "system:node:bm-1",
        dnsNames: ["bm-1"],
        ipAddresses: [bm1.server_ip!],
      });
      await ask("foreign-name", "web-1", {
        commonName: "system:node:web-1",
        dnsNames: ["web-1", "api.example.com"],
      });
      await ask("foreign-ip", "web-1", {
        commonName: "system:node:web-1",
        ipAddresses: [web2.public_net.ipv4!.ip],
      });
      await ask("overlapping-network", "web-1", {
        commonName: "system:node:web-1",
        ipAddresses: ["10.0.0.3"],
      });
      await ask("other-identity", "web-2", { commonName: "system:node:web-1", dnsNames: ["web-1"] });
      await ask("client-usages", "web-1", { commonName: "system:node:web-1", dnsNames: ["web-1"] }, [
        "digital signature",
        "client auth",
      ]);
      const pem = await makeCertificateRequest({ commonName: "system:node:web-1", dnsNames: ["web-1"] });
      await client.create(CERTIFICATE_SIGNING_REQUESTS, servingCsr("by-admin", pem));

      const expected: Record<string, string> = {
        own: "Approved AutoApproved",
        robot: "Approved AutoApproved",
        "foreign-name": "Denied ForeignName",
        "foreign-ip": "Denied ForeignAddress",
        "overlapping-network": "Denied ForeignAddress",
        "other-identity": "Denied SubjectMismatch",
        "client-usages": "Denied BadUsages",
        "by-admin": "Denied NotANode",
      };
      await eventually(async () => (await decision("own")) !== "pending");
      const tookMs = Date.now() - started;
      await eventually(async () => {
        for (const name of Object.keys(expected)) if ((await decision(name)) === "pending") return false;
        return true;
      });
      const got = Object.fromEntries(
        await Promise.all(Object.keys(expected).map(async (n) => [n, await decision(n)])),
      );
      assertEquals(got, expected);
      assertEquals(await decision("late"), "pending", "a Node not initialized yet: its request waits");
      const denied = await client.get(
        CERTIFICATE_SIGNING_REQUESTS,
        "foreign-ip",
      ) as CertificateSigningRequest;
      const message = denied.status!.conditions!.find((c) => c.type === "Denied")!.message!;
      assert(message.includes(web2.public_net.ipv4!.ip), message);

      // The server appears; the Node is initialized; its request is approved.
      sim.addServer({ name: "web-3", location: "fsn1", private_net: [{ network: netId, ip: "10.0.0.4" }] });
      await eventually(async () => (await decision("late")) === "Approved AutoApproved", 60_000);
      const decided = ccm.registry.counter("kubelet_serving_csr_decisions_total", "");
      assertEquals(decided.get({ decision: "approved", reason: "AutoApproved" }), 3);
      assertEquals(decided.get({ decision: "denied", reason: "ForeignName" }), 1);
      console.log(`csr approver: first approval ${tookMs} ms after the request`);
    } finally {
      for (const c of kubelets.values()) c.transport.close();
      await close(ccm);
    }
  },
});
