/**
 * The tls_secrets scenario: what certificates from TLS Secrets cost. Five Services serve the
 * certificates of five labelled Secrets; the cluster holds 10 000 other Secrets (2 kB each) that the
 * CCM must neither list nor keep. Peak RSS with and without those 10 000, and the cloud requests of
 * the first upload and of one renewal.
 *
 * @module
 */
import type { ScenarioResult } from "./report.ts";
import type { benchEnvironment } from "./environment.ts";
import { createNodes, waitFor } from "./bench_util.ts";
import { SECRETS, SERVICES } from "../kube/resources.ts";
import type { KubeClient } from "../kube/client.ts";
import { EXAMPLE_CERT, EXAMPLE_KEY, RENEWED_CERT, RENEWED_KEY } from "../tests/fixtures/example_com.ts";

const OTHERS = 10_000;
const SERVED = 5;
const LABEL = "deno-ccm.io/load-balancer-tls";

/** Creates the Secrets (`labelled` ones for the CCM, `others` not), 50 at a time. */
async function createSecrets(client: KubeClient, labelled: number, others: number): Promise<void> {
  const filler = "x".repeat(2048);
  const all = [
    ...Array.from({ length: labelled }, (_, i) => ({ name: `tls-${i}`, tls: true })),
    ...Array.from({ length: others }, (_, i) => ({ name: `other-${i}`, tls: false })),
  ];
  for (let i = 0; i < all.length; i += 50) {
    await Promise.all(
      all.slice(i, i + 50).map(({ name, tls }) =>
        client.create(SECRETS, {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name, namespace: "default", labels: tls ? { [LABEL]: "true" } : {} },
          type: tls ? "kubernetes.io/tls" : "Opaque",
          stringData: tls ? { "tls.crt": EXAMPLE_CERT, "tls.key": EXAMPLE_KEY } : { filler },
        }, { namespace: "default" })
      ),
    );
  }
}

/** Until `audit` has not grown for 3 s. */
async function settled(audit: unknown[]): Promise<void> {
  let last = -1;
  await waitFor(
    () => {
      const quiet = audit.length === last;
      last = audit.length;
      return Promise.resolve(quiet);
    },
    120_000,
    3_000,
  );
}

/** One run: the Services served from their Secrets; the peak RSS and the requests of upload and renewal. */
async function run(
  environment: (servers: number) => ReturnType<typeof benchEnvironment>,
  others: number,
) {
  const env = await environment(10);
  await createNodes(env.client, 10, 0);
  await createSecrets(env.client, SERVED, others);
  const before = env.sim.audit.length;
  for (let i = 0; i < SERVED; i++) {
    await env.client.create(SERVICES, {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: `web-${i}`,
        namespace: "default",
        annotations: {
          "service.deno-ccm.io/port-443-protocol": "https",
          "service.deno-ccm.io/port-443-tls-secret": `tls-${i}`,
        },
      },
      spec: { type: "LoadBalancer", selector: { app: `a${i}` }, ports: [{ name: "https", port: 443 }] },
    });
  }
  const uploaded = () =>
    [...env.sim.world.certificates.values()].filter((c) => c.labels["deno-ccm/tls-secret"]);
  const served = () =>
    [...env.sim.world.loadBalancers.values()].filter((lb) =>
      lb.services.some((s) => (s.http?.certificates ?? []).length)
    ).length;
  await waitFor(() => Promise.resolve(served() === SERVED), 300_000);
  // Creation settles (actions polled, first clean-ups) before the renewal is counted on its own.
  await settled(env.sim.audit);
  const firstUpload = env.sim.audit.length - before;
  const renewal = env.sim.audit.length;
  await env.client.patch(SECRETS, "tls-0", "merge", {
    stringData: { "tls.crt": RENEWED_CERT, "tls.key": RENEWED_KEY },
  }, { namespace: "default" });
  await waitFor(
    () =>
      Promise.resolve(
        uploaded().length === SERVED && uploaded().some((c) =>
          c.certificate?.includes(
            RENEWED_CERT.split("\n")[1],
          )
        ),
      ),
    120_000,
  );
  // The old certificate goes after the swap: until no request for 3 s.
  await settled(env.sim.audit);
  const renewalRequests = env.sim.audit.length - renewal;
  const routes: Record<string, number> = {};
  for (const e of env.sim.audit.slice(renewal)) routes[e.route] = (routes[e.route] ?? 0) + 1;
  const rss = env.peakRssMb();
  const rateLimited = await env.close();
  return { firstUpload, renewalRequests, routes, rss, rateLimited };
}

/** Runs it with and without the 10 000 other Secrets. */
export async function tlsSecretsScenario(
  environment: (servers: number, env?: Record<string, string>) => ReturnType<typeof benchEnvironment>,
): Promise<ScenarioResult> {
  console.log(`tls_secrets: ${SERVED} Services served from TLS Secrets, beside ${OTHERS} other Secrets ...`);
  const tls = (servers: number) => environment(servers, { HCLOUD_LOAD_BALANCERS_TLS_SECRETS: "true" });
  const crowded = await run(tls, OTHERS);
  const alone = await run(tls, 0);
  return {
    requests: crowded.firstUpload,
    rss_mb_peak: crowded.rss,
    rate_limited_responses: crowded.rateLimited + alone.rateLimited,
    other_secrets: OTHERS,
    services: SERVED,
    rss_mb_peak_without_other_secrets: alone.rss,
    requests_first_upload: crowded.firstUpload,
    requests_per_renewal: crowded.renewalRequests,
    renewal_requests_by_route: crowded.routes,
  };
}
