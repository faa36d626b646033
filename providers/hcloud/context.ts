/**
 * What the hcloud provider's parts share, built once when the provider is made and handed to
 * instances, load balancers and routes: one client, one server cache, one action waiter, the Robot
 * server list, and the network `HCLOUD_NETWORK` names. The context is frozen; the network is the one
 * fact only known after `initialize` (it is looked up by name), so it is a write-once value that the
 * parts read when they use it.
 *
 * @module
 */
import type { ActionWaiter, HcloudClient } from "../../hcloud_api/mod.ts";
import type { ServerCache } from "./servers/mod.ts";
import type { RobotServers } from "./robot/mod.ts";
import type { RecordSeal } from "./record_seal.ts";
import { type Clock, SYSTEM_CLOCK } from "../../lib/clock.ts";

/** The configured network, resolved once at initialize. */
export class ConfiguredNetwork {
  #id?: number;

  /** The network's ID: undefined without `HCLOUD_NETWORK`, or before `initialize` resolved it. */
  get id(): number | undefined {
    return this.#id;
  }

  /** Set once by `initialize`; a second, different resolution is a bug. */
  resolve(id: number): void {
    if (this.#id !== undefined && this.#id !== id) {
      throw new Error(`network resolved twice (${this.#id}, then ${id})`);
    }
    this.#id = id;
  }
}

/** See the module doc. */
export interface HcloudContext {
  /** The Cloud API client (one token, one request count). */
  readonly client: HcloudClient;
  /** The server list every part reads. */
  readonly cache: ServerCache;
  /** Waits for the actions writes start. */
  readonly actions: ActionWaiter;
  /** `HCLOUD_NETWORK`, resolved at initialization. */
  readonly network: ConfiguredNetwork;
  /** `ROBOT_ENABLED`: Robot Nodes are ours (without it they are left alone). */
  readonly robotEnabled: boolean;
  /** The Robot server list, when Robot is enabled with credentials. */
  readonly robot?: RobotServers;
  /** Seals the records the CCM keeps on objects tenants can write (absent in tests: records unsealed). */
  readonly seal?: RecordSeal;
  /** What ages (orphans, cached facts) are read on: the system clock, or a test's fake one. */
  readonly clock: Clock;
}

/** Builds the frozen context. */
export function hcloudContext(parts: {
  client: HcloudClient;
  cache: ServerCache;
  actions: ActionWaiter;
  network?: ConfiguredNetwork;
  robotEnabled?: boolean;
  robot?: RobotServers;
  seal?: RecordSeal;
  clock?: Clock;
}): HcloudContext {
  return Object.freeze({
    ...parts,
    network: parts.network ?? new ConfiguredNetwork(),
    robotEnabled: parts.robotEnabled ?? false,
    clock: parts.clock ?? SYSTEM_CLOCK,
  });
}
