/**
 * The kubelet-serving CSR approver (ours, off unless named in `--controllers`): a
 * `kubernetes.io/kubelet-serving` CertificateSigningRequest is approved only when a Node's kubelet
 * asks for itself (`system:node:<name>` in `system:nodes`), with serving usages, a subject naming it,
 * and DNS names and IP addresses that belong to the Node's machine as the cloud records it
 * ({@link Instances.machineRecord}: found by provider ID, nothing the Node says of itself). Anything
 * else is denied with the reason (or, with `--kubelet-serving-csr-deny=false`, left pending for
 * another approver with a Warning event). It never approves for a Node it cannot match.
 *
 * A request from a Node not yet initialized (no provider ID) waits: the Node's initialization
 * brings it back. The cloud record comes from the provider's server list: no cloud call per request
 * in steady state.
 *
 * @module
 */
import { managedNode } from "../node_metadata.ts";
import { missingPermission } from "../../kube/errors.ts";
import type { CertificateSigningRequest } from "kubernetes-types/certificates/v1.d.ts";
import type { Node } from "kubernetes-types/core/v1.d.ts";
import type { Controller, ControllerContext } from "../manager.ts";
import type { Flags } from "../../config/flags.ts";
import type { Instances } from "../../providers/provider.ts";
import { CERTIFICATE_SIGNING_REQUESTS, NODES } from "../../kube/resources.ts";
import { Informer } from "../../kube/informer.ts";
import { runWorkers, WorkQueue } from "../../kube/work_queue.ts";
import { reconcilePolicy, RetryAfterError } from "../../kube/reconcile.ts";
import { KUBELET_SERVING_SIGNER, NODE_USER_PREFIX } from "../../kube/well_known.ts";
import { logger } from "../../lib/log.ts";
import { withPriority } from "../../lib/priority.ts";
import { checkNames, checkRequest, type Refusal, refused, undecidedServingRequest } from "./csr_checks.ts";

/** The flags this controller reads, and nothing else of the command line. */
export type CsrFlags = Pick<Flags, "kubeletServingCsrDeny">;

/** The controller's name (`--controllers`) and the component on its events. */
export const CSR_APPROVER = "kubelet-serving-csr-approver";

/** How long a request from a Node not yet initialized waits before it is looked at again. */
const UNINITIALIZED_RETRY_MS = 30_000;

/** Builds the controller, or says why it cannot run. */
export function csrApproverController(ctx: ControllerContext<CsrFlags>): Controller | { disabled: string } {
  const instances = ctx.provider.instances;
  if (!instances?.machineRecord) {
    return {
      disabled: `provider ${ctx.provider.name} keeps no record of machines to check requests against`,
    };
  }
  return new CsrApprover(ctx, instances);
}

class CsrApprover implements Controller {
  readonly name = CSR_APPROVER;
  readonly #ctx: ControllerContext<CsrFlags>;
  readonly #instances: Instances;
  readonly #recorder;
  readonly #log = logger("csr-approver");
  readonly #queue: WorkQueue;
  /** Only kubelet-serving requests are listed and held (a field selector): others cost nothing. */
  readonly #requests: Informer<CertificateSigningRequest>;
  readonly #decisions;

  constructor(ctx: ControllerContext<CsrFlags>, instances: Instances) {
    this.#ctx = ctx;
    this.#instances = instances;
    this.#recorder = ctx.recorder(CSR_APPROVER);
    this.#queue = new WorkQueue("csr-approver", {
      clock: ctx.clock,
      baseDelayMs: 1_000,
      maxDelayMs: 300_000,
      metrics: ctx.metrics,
    });
    this.#decisions = ctx.metrics.counter(
      "kubelet_serving_csr_decisions_total",
      "Kubelet serving CSRs decided by the approver, by decision (approved, denied, left) and reason.",
    );
    this.#requests = new Informer(ctx.client, CERTIFICATE_SIGNING_REQUESTS, {
      fieldSelector: `spec.signerName=${KUBELET_SERVING_SIGNER}`,
      transform: trimRequest,
    });
    const enqueue = (csr: CertificateSigningRequest) => {
      if (undecidedServingRequest(csr)) this.#queue.add(csr.metadata!.name!);
    };
    this.#requests.addHandlers({ onAdd: enqueue, onUpdate: (_old, csr) => enqueue(csr) });
    // Enabled without its RBAC: /readyz names the chart value, not only a 403 in the log (probe P10).
    this.#requests.onHealth((err) =>
      ctx.conditions?.set(
        "csr-approver",
        missingPermission(err, "list certificatesigningrequests", "csrApprover.enabled=true"),
      )
    );
    // A Node that gets its provider ID (or changes it) brings its waiting requests back.
    ctx.informers.for(NODES).addHandlers({
      onUpdate: (old, node) => {
        if (old.spec?.providerID !== node.spec?.providerID) this.#requeueFor(node);
      },
    });
  }

  async run(signal: AbortSignal): Promise<void> {
    const informer = this.#requests.run(signal);
    await this.#requests.waitForSync(signal).catch(() => {});
    signal.addEventListener("abort", () => this.#queue.shutDown(), { once: true });
    await runWorkers(
      this.#queue,
      (key, cancel) => withPriority("node", () => this.#decide(key, cancel)),
      { policy: reconcilePolicy, signal },
    );
    await informer;
  }

  #requeueFor(node: Node): void {
    const user = NODE_USER_PREFIX + (node.metadata?.name ?? "");
    for (const csr of this.#requests.list()) {
      if (csr.spec?.username === user && undecidedServingRequest(csr)) this.#queue.add(csr.metadata!.name!);
    }
  }

  async #decide(name: string, signal: AbortSignal): Promise<void> {
    const csr = this.#requests.get(name);
    if (!csr || !undecidedServingRequest(csr)) return;
    const checked = checkRequest(csr);
    if (refused(checked)) return await this.#refuse(csr, checked);
    const nodes = this.#ctx.informers.for(NODES);
    const node = nodes.get(checked.node);
    // Not the cloud's (labelled so): the cloud cannot vouch for it; left for another approver, quietly.
    if (node && !managedNode(node)) return;
    if (!node) {
      return await this.#refuse(csr, { reason: "NoNode", message: `no Node ${checked.node} exists` });
    }
    const providerID = node.spec?.providerID;
    if (!providerID) {
      // The kubelet may ask before the CCM has initialized its Node: wait for that.
      throw new RetryAfterError(`Node ${checked.node} is not initialized yet`, UNINITIALIZED_RETRY_MS);
    }
    const twins = nodes.list().filter((n) => n !== node && n.spec?.providerID === providerID);
    if (twins.length) {
      return await this.#refuse(csr, {
        reason: "DuplicateProviderID",
        message: `Node ${checked.node}'s provider ID ${providerID} is also Node ${twins[0].metadata?.name}'s`,
      });
    }
    const record = await this.#instances.machineRecord!(node, "refresh", signal);
    if (!record) {
      return await this.#refuse(csr, {
        reason: "NoMachine",
        message: `no machine has Node ${checked.node}'s provider ID ${providerID} under the Node's name`,
      });
    }
    const names = checkNames(checked.request, node, record, nodes.list());
    if (names) return await this.#refuse(csr, names);
    await this.#condition(csr, "Approved", "AutoApproved", `the names are Node ${checked.node}'s machine's`);
    this.#decisions.inc({ decision: "approved", reason: "AutoApproved" });
    this.#log.info("approved {csr} for Node {node}", { csr: name, node: checked.node });
  }

  async #refuse(csr: CertificateSigningRequest, why: Refusal): Promise<void> {
    const name = csr.metadata!.name!;
    if (!this.#ctx.flags.kubeletServingCsrDeny) {
      this.#recorder.event(
        CERTIFICATE_SIGNING_REQUESTS,
        csr,
        "Warning",
        why.reason,
        `Not approved, left for another approver: ${why.message}`,
      );
      this.#decisions.inc({ decision: "left", reason: why.reason });
      return;
    }
    await this.#condition(csr, "Denied", why.reason, why.message);
    this.#recorder.event(CERTIFICATE_SIGNING_REQUESTS, csr, "Warning", why.reason, `Denied: ${why.message}`);
    this.#decisions.inc({ decision: "denied", reason: why.reason });
    this.#log.warning("denied {csr}: {why}", { csr: name, why: why.message });
  }

  /** Adds the condition through the `approval` subresource (the only write this controller makes). */
  async #condition(
    csr: CertificateSigningRequest,
    type: "Approved" | "Denied",
    reason: string,
    message: string,
  ) {
    const now = new Date().toISOString();
    await this.#ctx.client.update(CERTIFICATE_SIGNING_REQUESTS, {
      ...csr,
      status: {
        ...csr.status,
        conditions: [
          ...(csr.status?.conditions ?? []),
          { type, status: "True", reason, message, lastUpdateTime: now, lastTransitionTime: now },
        ],
      },
    }, { subresource: "approval" });
  }
}

/** What the approver reads of a request; the issued certificate (when there is one) is dropped. */
function trimRequest(object: unknown): unknown {
  const csr = object as CertificateSigningRequest;
  if (!csr.status?.certificate) return csr;
  const { certificate: _, ...status } = csr.status;
  return { ...csr, status };
}
