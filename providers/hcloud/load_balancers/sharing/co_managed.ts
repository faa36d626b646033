/**
 * Co-managed load balancers: a Service annotated `load-balancer.hetzner.cloud/attach-to: <name or
 * ID>` serves its ports on a balancer made outside Kubernetes (Terraform, the console). It owns only
 * what it added: its services (ports) and, together with the other Services attached from this
 * cluster, this cluster's label-selector target. Type, location, name, network, algorithm, labels
 * and every other port or target stay as their owner left them. A port another owner already serves
 * is a conflict: reported on every sync, never overwritten.
 *
 * What a Service owns is written on the Service itself (the annotation `CO_MANAGED_STATE`, with its
 * status), not on the balancer: a Terraform `labels` block would wipe labels we added, and the
 * record must outlive a restart so that a port removed from the Service is removed from the
 * balancer too, and deleting the Service takes exactly what it added.
 *
 * A tenant may write that annotation too, so the record is sealed (record_seal.ts: an HMAC over the
 * Service's UID and the record, keyed from the cloud token) and a record whose seal does not verify
 * counts as none. Besides the record, a port whose destination is this Service's own NodePort for it
 * is taken as the Service's when every target of the balancer is this cluster's label selector (then
 * the port can reach this cluster's Nodes only, where NodePorts are unique), so records from before
 * the seal, or sealed with a token this process never used, heal at the next sync. Beside any other
 * target a matching NodePort proves nothing: a tenant chooses its own (probe P2). A balancer the CCM
 * made for a Service is never touched on a record's word.
 *
 * @module
 */
import type { Node, Service } from "kubernetes-types/core/v1.d.ts";
import type { LoadBalancerResult, ProviderWarning } from "../../../provider.ts";
import { ProviderError, TerminalError } from "../../../errors.ts";
import { CloudApiError } from "../../../../hcloud_api/mod.ts";
import type { ActionWaiter, HcloudClient, Schemas } from "../../../../hcloud_api/mod.ts";
import { type LoadBalancerSpec, PREFIX } from "../spec/mod.ts";
import { type DesiredService, ingressOf, serviceDiffers } from "../core/desired.ts";
import type { ConfiguredNetwork, HcloudContext } from "../../context.ts";
import type { ServerLabeler } from "../../servers/mod.ts";
import { SERVICE_UID_LABEL } from "../core/labels.ts";
import type { LbAction } from "../core/plan.ts";
import { executeLbAction } from "../core/actions.ts";
import { RecordSeal } from "../../record_seal.ts";
import { ExternalObjectConsent } from "../core/consent.ts";
import { CO_MANAGED_STATE, SHARE_ANNOTATION, SHARE_LABEL } from "../../names.ts";
import { type CoManagedState, readCoManagedState, writeCoManagedState } from "./co_managed_record.ts";
import type { ClusterFacts } from "../core/cluster_facts.ts";
import { fetchBalancer } from "../core/fetch.ts";

type LB = Schemas["load_balancer"];

/** The seal's secret when no provider seal is given (tests): known to this process only. */
const PROCESS_SECRET = crypto.randomUUID();

export { CO_MANAGED_STATE };

/**
 * The changes that make `lb` serve `desired` for a Service that owned `owned` before: its ports
 * added, updated or removed; ports someone else serves left alone and reported; the selector target
 * added when missing. Pure: table-tested.
 */
export function planCoManaged(
  lb: LB,
  desired: DesiredService[],
  owned: CoManagedState | undefined,
  target: { selector: string; usePrivateIp: boolean; addedByCluster: boolean },
): { actions: LbAction[]; conflicts: number[]; state: CoManagedState } {
  // A port is this Service's only by its sealed record. A port sending to the Service's own NodePort
  // proves nothing, even where every target is this cluster's: a tenant chooses its NodePort, and
  // took someone else's port so, rewrote it and deleted it with the Service (review N1d; probe P2
  // beside another owner's targets). The cost: a port added just before a crash, its record not yet
  // written, is reported as someone else's (CoManagedPortConflict) until an operator removes it.
  const mine = new Set(owned?.id === lb.id ? owned.ports : []);
  const actions: LbAction[] = [];
  const conflicts: number[] = [];
  const ports: number[] = [];
  for (const port of mine) {
    if (!desired.some((d) => d.listen_port === port) && lb.services.some((s) => s.listen_port === port)) {
      actions.push({ kind: "delete_service", listenPort: port });
    }
  }
  for (const want of desired) {
    const actual = lb.services.find((s) => s.listen_port === want.listen_port);
    if (actual && !mine.has(want.listen_port)) {
      conflicts.push(want.listen_port);
      continue;
    }
    ports.push(want.listen_port);
    if (!actual) actions.push({ kind: "add_service", service: want });
    else if (serviceDiffers(want, actual)) actions.push({ kind: "update_service", service: want });
  }
  const present = lb.targets.some((t) =>
    t.type === "label_selector" && t.label_selector?.selector === target.selector
  );
  if (!present) {
    actions.push({
      kind: "add_target",
      target: {
        type: "label_selector",
        label_selector: { selector: target.selector },
        use_private_ip: target.usePrivateIp,
      },
    });
  }
  return { actions, conflicts, state: { id: lb.id, ports, target: !present || target.addedByCluster } };
}

/**
 * What a Service leaving the balancer takes: its ports, and this cluster's target when the cluster
 * added it and no other attached Service of this cluster still serves there.
 */
export function planRelease(
  lb: LB,
  state: CoManagedState,
  target: { selector?: string; addedByCluster: boolean; stillServed: boolean },
): LbAction[] {
  const actions: LbAction[] = state.ports
    .filter((port) => lb.services.some((s) => s.listen_port === port))
    .map((listenPort) => ({ kind: "delete_service", listenPort }));
  const selector = target.selector;
  if (selector && target.addedByCluster && !target.stillServed) {
    if (lb.targets.some((t) => t.type === "label_selector" && t.label_selector?.selector === selector)) {
      actions.push({
        kind: "remove_target",
        target: { type: "label_selector", label_selector: { selector } },
      });
    }
  }
  return actions;
}

/** Finds the balancer `ref` names (an ID or a name); undefined when there is none. */
export async function findCoManaged(
  client: HcloudClient,
  ref: string,
): Promise<Schemas["load_balancer"] | undefined> {
  if (/^\d+$/.test(ref)) {
    try {
      return (await client.call(
        "get load balancer",
        client.api.GET("/load_balancers/{id}", { params: { path: { id: Number(ref) } } }),
      )).load_balancer;
    } catch (err) {
      if (err instanceof CloudApiError && err.status === 404) return undefined;
      throw err;
    }
  }
  const data = await client.call(
    "find load balancer",
    client.api.GET("/load_balancers", { params: { query: { name: ref } } }),
  );
  return data.load_balancers[0];
}

/** A balancer the CCM created for a Service is that Service's alone: it cannot be co-managed. */
export function refuseOwned(lb: LB, ref: string, via: "attach-to" | "id" = "attach-to"): void {
  const share = lb.labels?.[SHARE_LABEL];
  if (share !== undefined) {
    throw new TerminalError(
      `annotation ${PREFIX}${via}: "${ref}" is shared by Services under the key "${share}" ` +
        `(${SHARE_ANNOTATION}); co-management is for balancers made outside Kubernetes`,
    );
  }
  const owner = lb.labels?.[SERVICE_UID_LABEL];
  if (owner) {
    throw new TerminalError(
      `annotation ${PREFIX}${via}: "${ref}" is the load balancer of the Service with UID ${owner}; ` +
        "co-management is for balancers made outside Kubernetes",
    );
  }
}

/** Runs the plan, returning the warnings for the ports left alone. */
export async function applyCoManaged(
  client: HcloudClient,
  waiter: ActionWaiter,
  lb: LB,
  actions: LbAction[],
  conflicts: number[],
): Promise<ProviderWarning[]> {
  for (const action of actions) await executeLbAction(client, waiter, lb.id, action);
  return conflicts.map((port) => ({
    reason: "CoManagedPortConflict",
    message: `port ${port} of load balancer ${lb.name} is served by someone else; left as it is (not ` +
      "overwritten): choose another port or free it on the balancer",
  }));
}

/** Syncs and releases co-managed balancers for the hcloud load balancers (see the module doc). */
export class CoManagedBalancers {
  readonly #client: HcloudClient;
  readonly #waiter: ActionWaiter;
  readonly #network: ConfiguredNetwork;
  readonly #labeler: ServerLabeler;
  /** Service UID → balancer ID of the Services synced here (they have a balancer, though not ours). */
  readonly attached = new Map<string, number>();
  readonly #seal: RecordSeal;

  /** `facts`: the cluster (its identity for its target, its Services: who else is attached). */
  constructor(
    ctx: HcloudContext,
    labeler: ServerLabeler,
    private readonly facts: ClusterFacts,
    private readonly consent: ExternalObjectConsent = new ExternalObjectConsent(),
  ) {
    this.#client = ctx.client;
    this.#waiter = ctx.actions;
    this.#network = ctx.network;
    this.#labeler = labeler;
    // Without the provider's seal (tests), a secret of this process: records are never unsealed.
    this.#seal = ctx.seal ?? new RecordSeal(() => [PROCESS_SECRET]);
  }

  /**
   * Balancer ID → the listen ports this cluster's Services own on it, from their sealed records (the
   * firewall opens those ports to the balancer; a forged record counts as none).
   */
  async owned(): Promise<Map<number, number[]>> {
    const owned = new Map<number, number[]>();
    for (const service of this.facts.services() ?? []) {
      if (service.metadata?.deletionTimestamp) continue;
      const state = await readCoManagedState(service, this.#seal);
      if (state) owned.set(state.id, [...owned.get(state.id) ?? [], ...state.ports]);
    }
    return owned;
  }

  /** Serves `desired` for `service` on the balancer its `attach-to` names. */
  async ensure(
    service: Service,
    spec: LoadBalancerSpec,
    desired: DesiredService[],
    nodes: Node[],
  ): Promise<LoadBalancerResult> {
    const clusterId = this.facts.clusterId();
    const ref = spec.attachTo!;
    if (!clusterId) {
      throw new Error(
        `annotation ${PREFIX}${
          spec.attachVia ?? "attach-to"
        }: the cluster identity (the kube-system namespace UID) is not known yet`,
      );
    }
    const selector = this.#labeler.selector(clusterId);
    this.#labeler.want(clusterId, nodes);
    const lb = await findCoManaged(this.#client, ref);
    if (!lb) {
      const err = new Error(
        `annotation ${PREFIX}${
          spec.attachVia ?? "attach-to"
        }: there is no load balancer "${ref}" in the project`,
      );
      throw new ProviderError(err, { leftNoBalancer: true }); // its old addresses are no longer its own
    }
    refuseOwned(lb, ref, spec.attachVia);
    this.consent.check(service, lb, `load balancer "${ref}" (ID ${lb.id})`);
    if (spec.usePrivateIp && !(lb.private_net ?? []).some((p) => p.network === this.#network.id)) {
      throw new TerminalError(
        `annotation ${PREFIX}use-private-ip: load balancer ${lb.name} is not attached to the cluster's network`,
      );
    }
    await this.#labeler.apply();
    const before = await readCoManagedState(service, this.#seal);
    if (before && before.id !== lb.id) await this.#release(service, before, selector);
    const plan = planCoManaged(lb, desired, before, {
      selector,
      usePrivateIp: spec.usePrivateIp,
      addedByCluster: await this.#addedByCluster(lb.id),
    });
    const warnings = await applyCoManaged(this.#client, this.#waiter, lb, plan.actions, plan.conflicts);
    this.attached.set(service.metadata!.uid!, lb.id);
    const current = plan.actions.length ? (await fetchBalancer(this.#client, lb.id)) ?? lb : lb;
    return {
      ingress: ingressOf(current, spec),
      warnings,
      annotations: { [CO_MANAGED_STATE]: await writeCoManagedState(service, plan.state, this.#seal) },
    };
  }

  /** Takes what `service` owns off its balancer; the record is cleared (returned as annotations). */
  async release(service: Service): Promise<{ annotations: Record<string, null> } | undefined> {
    const clusterId = this.facts.clusterId();
    this.attached.delete(service.metadata!.uid!);
    const state = await readCoManagedState(service, this.#seal);
    if (!state) return undefined;
    await this.#release(service, state, clusterId ? this.#labeler.selector(clusterId) : undefined);
    return { annotations: { [CO_MANAGED_STATE]: null } };
  }

  async #release(service: Service, state: CoManagedState, selector: string | undefined): Promise<void> {
    const lb = await fetchBalancer(this.#client, state.id);
    // A balancer the CCM made (for a Service, or shared) is never released into on a record's word.
    if (!lb || lb.labels?.[SERVICE_UID_LABEL] || lb.labels?.[SHARE_LABEL] !== undefined) return;
    let stillServed = false;
    for (const s of this.facts.services() ?? []) {
      if (s.metadata?.uid === service.metadata?.uid || s.metadata?.deletionTimestamp) continue;
      if ((await readCoManagedState(s, this.#seal))?.id === state.id) stillServed = true;
    }
    const actions = planRelease(lb, state, {
      selector,
      addedByCluster: await this.#addedByCluster(state.id),
      stillServed,
    });
    for (const action of actions) await executeLbAction(this.#client, this.#waiter, lb.id, action);
  }

  /** Whether one of this cluster's Services recorded adding the cluster's target to balancer `id`. */
  async #addedByCluster(id: number): Promise<boolean> {
    for (const s of this.facts.services() ?? []) {
      const state = await readCoManagedState(s, this.#seal);
      if (state?.id === id && state.target) return true;
    }
    return false;
  }
}
