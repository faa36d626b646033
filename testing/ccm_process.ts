/**
 * Runs `main.ts` as a child process (as an operator would), with its output collected and its
 * status server on a free loopback port.
 *
 * @module
 */

import { freePort } from "./helpers.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** The compile task's `--v8-flags` (memory settings), so processes run like the shipped binary. */
export function v8Flags(): string[] {
  const task: string =
    JSON.parse(Deno.readTextFileSync(new URL("../deno.json", import.meta.url))).tasks.compile;
  return task.split(/\s+/).filter((a) => a.startsWith("--v8-flags="));
}

/**
 * The environment the image sets (deploy/Containerfile's final stage, its `ENV NAME=value` lines), so
 * processes run like the shipped binary.
 */
export function imageEnv(): Record<string, string> {
  const file = Deno.readTextFileSync(new URL("../deploy/Containerfile", import.meta.url));
  const final = file.slice(file.lastIndexOf("FROM scratch"));
  return Object.fromEntries(
    [...final.matchAll(/^ENV (\w+)=(\S+)$/gm)].map((m) => [m[1], m[2]]),
  );
}

/** A `main.ts` child process with its stderr collected. */
export interface CcmProcess {
  child: Deno.ChildProcess;
  port: number;
  output(): string;
  status: Promise<Deno.CommandStatus>;
  get(path: string): Promise<{ status: number; text: string }>;
  /** The OS's peak RSS of the process so far (Linux `VmHWM`), in bytes; undefined once it exited. */
  peakRssBytes(): number | undefined;
}

/**
 * Spawns `main.ts` with `args` and `env` (plus PATH/HOME), serving status on a free port;
 * `denoArgs` go to `deno run` (e.g. `--inspect`); `entry` runs another module than `main.ts` (the
 * bundle the shipped binary is compiled from, say).
 */
export function spawnCcm(
  args: string[],
  env: Record<string, string>,
  options: { denoArgs?: string[]; entry?: string } = {},
): CcmProcess {
  // Not `port: 0`: a port the kernel hands out is free only until closed; in a parallel run another
  // socket can take it before the CCM binds it, and the CCM then exits 2 ("cannot listen").
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      ...v8Flags(),
      ...options.denoArgs ?? [],
      options.entry ?? MAIN,
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
      ...args,
    ],
    // The official CCM's metrics port (:8233 on every interface) would collide between test processes.
    env: {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: Deno.env.get("HOME") ?? "/tmp",
      HCLOUD_METRICS_ADDRESS: "127.0.0.1:0",
      ...imageEnv(),
      ...env,
    },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const { output, status } = collectOutput(child);
  return {
    child,
    port,
    output,
    status,
    peakRssBytes() {
      try {
        const kb = Deno.readTextFileSync(`/proc/${child.pid}/status`).match(/^VmHWM:\s+(\d+) kB/m)?.[1];
        return kb ? Number(kb) * 1024 : undefined;
      } catch {
        return undefined;
      }
    },
    async get(path) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: res.status, text: await res.text() };
    },
  };
}

/**
 * Collects a piped child's stdout and stderr as one text; `status` resolves once both are read.
 * Shared by every test that runs one of the repository's programs.
 */
export function collectOutput(child: Deno.ChildProcess): {
  output: () => string;
  status: Promise<Deno.CommandStatus>;
} {
  let text = "";
  const decoder = new TextDecoder();
  const collect = (stream: ReadableStream<Uint8Array>) =>
    stream.pipeTo(
      new WritableStream({ write: (chunk) => void (text += decoder.decode(chunk, { stream: true })) }),
    );
  const piped = Promise.all([collect(child.stdout), collect(child.stderr)]);
  return { output: () => text, status: child.status.then(async (s) => (await piped, s)) };
}

/** A kubeconfig file at `path` for `connection` (its server, CA and client certificate or token). */
export async function writeKubeconfig(
  path: string,
  connection: {
    server: string;
    caPem?: string;
    clientCertPem?: string;
    clientKeyPem?: string;
    token?: string;
  },
): Promise<void> {
  const b64 = (text: string) => btoa(text);
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{
        name: "c",
        cluster: {
          server: connection.server,
          ...(connection.caPem ? { "certificate-authority-data": b64(connection.caPem) } : {}),
        },
      }],
      users: [{
        name: "u",
        user: connection.token ? { token: connection.token } : {
          "client-certificate-data": b64(connection.clientCertPem ?? ""),
          "client-key-data": b64(connection.clientKeyPem ?? ""),
        },
      }],
      contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
      "current-context": "c",
    }),
  );
}
