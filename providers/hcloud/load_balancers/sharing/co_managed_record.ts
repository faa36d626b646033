/**
 * What a Service owns on a co-managed balancer, recorded on the Service (the annotation
 * `CO_MANAGED_STATE`) and sealed: an HMAC over the Service's UID and the record, keyed from the cloud
 * token (record_seal.ts), so a record a tenant wrote or copied from another Service counts as none.
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { RecordSeal } from "../../record_seal.ts";
import { CO_MANAGED_STATE } from "../../names.ts";

/** What a Service owns on a co-managed balancer. */
export interface CoManagedState {
  /** The balancer's ID. */
  id: number;
  /** The listen ports of the services (ports) it added. */
  ports: number[];
  /** Whether this cluster added its label-selector target (it was not there before). */
  target: boolean;
}

/** What the seal covers: the Service it belongs to and the record. */
function sealed(service: Service, state: CoManagedState): string {
  return `${service.metadata?.uid ?? ""}|${state.id}|${[...state.ports].sort((a, b) => a - b).join(",")}|` +
    `${state.target}`;
}

/** The recorded state of `service`, if any: a malformed record, or one whose seal fails, counts as none. */
export async function readCoManagedState(
  service: Service,
  seal: RecordSeal,
): Promise<CoManagedState | undefined> {
  const text = service.metadata?.annotations?.[CO_MANAGED_STATE];
  if (!text) return undefined;
  let state: CoManagedState;
  let mac: unknown;
  try {
    const v = JSON.parse(text) as CoManagedState & { seal?: unknown };
    if (!Number.isSafeInteger(v.id) || !Array.isArray(v.ports)) return undefined;
    state = { id: v.id, ports: v.ports.filter(Number.isSafeInteger), target: v.target === true };
    mac = v.seal;
  } catch {
    return undefined;
  }
  return await seal.verify(sealed(service, state), mac) ? state : undefined;
}

/** The annotation value recording `state` for `service`, sealed. */
export async function writeCoManagedState(
  service: Service,
  state: CoManagedState,
  seal: RecordSeal,
): Promise<string> {
  return JSON.stringify({ ...state, seal: await seal.seal(sealed(service, state)) });
}
