/**
 * Runs the Hetzner Cloud API simulator standalone with a seeded demo state:
 *
 *   deno task sim --port 8080 [--seed file.json] [--action-duration 1s] [--latency 50ms]
 *
 * Point any Hetzner client at it with HCLOUD_ENDPOINT=http://127.0.0.1:8080/v1 and the token it
 * prints; Robot clients at http://127.0.0.1:8080/robot with the credentials it prints (seed
 * dedicated servers with `robot_servers` in the seed file).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { DEFAULT_SIM_TOKEN, Simulator } from "./simulator.ts";
import { applySeed, type SeedState } from "./control.ts";
import { parseDuration } from "../lib/duration.ts";

/** The demo project: a network and three servers attached to it. */
export const DEMO_SEED: SeedState = {
  networks: [{
    name: "k8s",
    ip_range: "10.0.0.0/8",
    subnets: [{ ip_range: "10.0.0.0/24", network_zone: "eu-central" }],
  }],
  servers: [
    { name: "control-plane", server_type: "cpx21", location: "fsn1", private_net: [{ network: "k8s" }] },
    { name: "worker-1", server_type: "cx22", location: "fsn1", private_net: [{ network: "k8s" }] },
    { name: "worker-2", server_type: "cx22", location: "nbg1", private_net: [{ network: "k8s" }] },
  ],
};

/** `deno task sim --help`. */
export const SIM_USAGE = `Usage: deno task sim [options]

A local Hetzner Cloud API (and Robot webservice) with a seeded demo project: a network "k8s" and three
servers. Point clients at HCLOUD_ENDPOINT=http://<hostname>:<port>/v1 with the token it prints (Robot:
<url>/robot with the printed credentials); test hooks (seeding, power, faults, audit) under /_sim/.

Options:
  --port number             port to listen on (default 8080)
  --hostname host           address to listen on (default 127.0.0.1)
  --seed file.json          the project to start with instead of the demo (servers, networks,
                            load_balancers, certificates, robot_servers, ...)
  --action-duration d       how long cloud actions run (default 1s)
  --latency d               added to every API request (default 0s)
  --token string            the accepted API token (default: the simulator's fixed token)
  -h, --help                this text`;

/** The command line, or the usage text (with an error) when it cannot be read. */
export function parseSimArgs(args: string[]): { values: Record<string, string | undefined> } | {
  usage: string;
  code: number;
} {
  try {
    const { values } = parseArgs({
      args,
      options: {
        port: { type: "string", default: "8080" },
        hostname: { type: "string", default: "127.0.0.1" },
        seed: { type: "string" },
        "action-duration": { type: "string", default: "1s" },
        latency: { type: "string", default: "0s" },
        token: { type: "string", default: DEFAULT_SIM_TOKEN },
        help: { type: "boolean", short: "h" },
      },
    });
    if (values.help) return { usage: SIM_USAGE, code: 0 };
    const { help: _, ...rest } = values;
    return { values: rest };
  } catch (err) {
    return { usage: `sim: ${(err as Error).message}\n\n${SIM_USAGE}`, code: 2 };
  }
}

if (import.meta.main) {
  const parsed = parseSimArgs(Deno.args);
  if ("usage" in parsed) {
    (parsed.code ? console.error : console.log)(parsed.usage);
    Deno.exit(parsed.code);
  }
  const { values } = parsed;
  const actionMs = parseDuration(values["action-duration"]!);
  const latencyMs = parseDuration(values.latency!);
  if (actionMs === undefined || latencyMs === undefined || !/^\d+$/.test(values.port!)) {
    console.error("sim: --port must be a number, --action-duration and --latency durations like 1s or 50ms");
    Deno.exit(2);
  }
  const sim = new Simulator({
    hostname: values.hostname,
    port: Number(values.port),
    tokens: [values.token!],
    actionDurationMs: actionMs,
    latencyMs,
  });
  applySeed(sim, values.seed ? JSON.parse(await Deno.readTextFile(values.seed)) : DEMO_SEED);
  sim.start();
  console.error(
    `token: ${
      values.token === DEFAULT_SIM_TOKEN ? "(default simulator token) " : ""
    }HCLOUD_TOKEN=${values.token}`,
  );
  const [user, password] = [...sim.robot.credentials][0].split(":");
  console.error(
    `Robot webservice: ROBOT_ENDPOINT=${sim.robotEndpoint} ROBOT_USER=${user} ROBOT_PASSWORD=${password}`,
  );
}
