/**
 * A Service read once: every entry point of the room (name, selection, TLS Secrets, ensure, update,
 * delete) asks here, and one version of a Service is parsed once however many of them a sync calls
 * (the controller's selection, its TLS Secrets, then ensure: 4–8 parses per sync before).
 *
 * @module
 */
import type { Service } from "kubernetes-types/core/v1.d.ts";
import type { LoadBalancerSync } from "../../../provider.ts";
import { TerminalError } from "../../../errors.ts";
import {
  type LoadBalancerDefaults,
  type LoadBalancerSpec,
  parseLoadBalancerSpec,
  PREFIX,
} from "../spec/mod.ts";

/** What the Service says, read: the spec, every problem in words, and the annotations refused. */
export interface ReadService {
  /** The spec (with defaults where a value was refused). */
  readonly spec: LoadBalancerSpec;
  /** Every problem, each naming its annotation and value. */
  readonly errors: readonly string[];
  /** The annotations (without prefix) whose value was refused. */
  readonly invalid: ReadonlySet<string>;
}

/** One sync, read: the contract's request with the Service's spec beside it. */
export interface ServiceRequest extends LoadBalancerSync, ReadService {}

/** Reads Services for one provider (its defaults and network), each version once. */
export class ServiceReader {
  readonly #defaults: LoadBalancerDefaults;
  readonly #hasNetwork: () => boolean;
  /**
   * By Service object, with a fingerprint of what the parse reads: the contract makes the objects
   * read-only, but an object edited in place anyway (a test, a careless caller) is read again rather
   * than served stale. The fingerprint costs a fraction of a parse.
   */
  readonly #read = new WeakMap<Service, { fingerprint: string; read: ReadService }>();
  /** How many parses ran (tests count them: one per version of a Service). */
  parses = 0;

  /**
   * `hasNetwork`: whether `HCLOUD_NETWORK` names a network (`use-private-ip` needs one); asked at
   * each read, as the network is resolved when the provider initializes.
   */
  constructor(defaults: LoadBalancerDefaults, hasNetwork: () => boolean) {
    this.#defaults = defaults;
    this.#hasNetwork = hasNetwork;
  }

  /** The Service, read (from memory when this version was read before). */
  read(service: Service): ReadService {
    const hasNetwork = this.#hasNetwork();
    const fingerprint = JSON.stringify([
      hasNetwork,
      service.metadata?.uid,
      service.metadata?.namespace,
      service.metadata?.name,
      service.metadata?.annotations,
      service.spec,
    ]);
    const known = this.#read.get(service);
    if (known?.fingerprint === fingerprint) return known.read;
    this.parses++;
    const { spec, errors, invalid } = parseLoadBalancerSpec(service, this.#defaults);
    if (spec.usePrivateIp && !hasNetwork) {
      invalid.add("use-private-ip");
      errors.push(`annotation ${PREFIX}use-private-ip needs a network (HCLOUD_NETWORK is not set)`);
    }
    const read: ReadService = { spec, errors, invalid };
    this.#read.set(service, { fingerprint, read });
    return read;
  }

  /** The sync with its Service read. */
  request(sync: LoadBalancerSync): ServiceRequest {
    return { ...sync, ...this.read(sync.service) };
  }
}

/** The spec of a Service that may be acted on; a refused value ends the sync (TerminalError). */
export function usableSpec(read: ReadService): LoadBalancerSpec {
  if (read.errors.length) throw new TerminalError(read.errors.join("; "));
  return read.spec;
}
