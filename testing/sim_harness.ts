/**
 * Starts the Hetzner API simulator for tests with every response validated against the OpenAPI
 * spec, and a small fetch helper.
 *
 * @module
 */
import { DEFAULT_SIM_TOKEN, Simulator, type SimulatorOptions } from "../hcloud_sim/simulator.ts";
import { OpenApiValidator } from "./openapi_validator.ts";

/** Response bodies are checked by the schema validator; tests read them loosely. */
// deno-lint-ignore no-explicit-any
type AnyBody = any;

let validator: Promise<OpenApiValidator> | undefined;

/** A running simulator whose responses are schema-checked; call `finish()` to stop and assert. */
export interface TestSim {
  sim: Simulator;
  validator: OpenApiValidator;
  /** Calls `/v1` with the default token; returns status, parsed body and headers. */
  api(
    method: string,
    path: string,
    body?: unknown,
    token?: string,
  ): Promise<{ status: number; body: AnyBody; headers: Headers }>;
  /** Stops the simulator and throws if any response violated the spec. */
  finish(): Promise<void>;
}

/** Starts a simulator (action duration default 0 ms for speed). */
export async function startTestSim(options: SimulatorOptions = {}): Promise<TestSim> {
  validator ??= OpenApiValidator.load();
  const v = await validator;
  const sim = new Simulator({
    quiet: true,
    actionDurationMs: 0,
    ...options,
    onResponse: (info) => {
      v.check(info.route, info.status, info.body);
      options.onResponse?.(info);
    },
  }).start();
  const before = v.violations.length;
  return {
    sim,
    validator: v,
    async api(method, path, body, token = DEFAULT_SIM_TOKEN) {
      const res = await fetch(`${sim.endpoint}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = undefined;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
      return { status: res.status, body: parsed as AnyBody, headers: res.headers };
    },
    async finish() {
      await sim.stop();
      const found = v.violations.slice(before);
      if (found.length) {
        throw new Error(`simulator responses violate the OpenAPI spec:\n  ${found.join("\n  ")}`);
      }
    },
  };
}

/** The seed of a Network `k8s` (10.0.0.0/8, one subnet in eu-central) most tests attach servers to. */
export const K8S_NETWORK = {
  networks: [{
    name: "k8s",
    ip_range: "10.0.0.0/8",
    subnets: [{ ip_range: "10.0.0.0/16", network_zone: "eu-central" }],
  }],
};
