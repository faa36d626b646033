/**
 * Loopback ports for the processes a test starts (etcd, kube-apiserver, a CCM's status server),
 * reserved across every test process on the machine.
 *
 * @module
 */

/** Ports this process holds (clusters and CCMs started side by side, as the conformance suite does). */
const held = new Set<number>();
let nextPort = 0;

/** Where the reservations live: one file per port holding its owner's pid, and the lock they are made under. */
function reservationDir(): string {
  const dir = `${Deno.env.get("TMPDIR") || "/tmp"}/deno-ccm-ports`;
  Deno.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Whether the process that wrote a reservation still runs (a reservation of a dead process is free). */
function ownerAlive(text: string, file: string): boolean {
  const pid = Number(text.trim());
  // Empty: its writer died mid-write (writes happen under the lock); held only while fresh.
  if (!Number.isInteger(pid) || pid <= 0) return ageMs(file) < 60_000;
  try {
    Deno.statSync("/proc/self");
  } catch {
    return ageMs(file) < 12 * 3_600_000; // no /proc (not Linux): a reservation lasts half a day
  }
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - (Deno.statSync(file).mtime?.getTime() ?? 0);
  } catch {
    return Infinity;
  }
}

/**
 * `n` loopback TCP ports for processes a test starts, below the kernel's ephemeral range (a port
 * from `port: 0` is free only until closed: every simulator, CCM and client socket binds from that
 * range, and one took etcd's port between the check and etcd's bind).
 *
 * A port is free for this process only if no other test process holds it: two test processes run
 * at once (the oldest-minor test runs a suite and the conformance cases side by side), and a port
 * one of them had handed out but whose apiserver had not bound it yet looked free to the other (CI
 * saw kube-apiserver exit with "address already in use"). So every process reserves its ports in a
 * shared directory, under an exclusive lock, for as long as it runs; and checks that nothing
 * listens there now.
 */
export function freePorts(n: number): number[] {
  let range = "32768 60999";
  try {
    range = Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range");
  } catch { /* not Linux: the usual range */ }
  const top = Math.min(Number(range.trim().split(/\s+/)[0]) || 32768, 32768);
  return reservePorts(n, { dir: reservationDir(), bottom: 20_000, top });
}

/** Where {@link reservePorts} looks: ports in `[bottom, top)`, reservations in `dir`. */
export interface PortRange {
  dir: string;
  bottom: number;
  top: number;
}

/** {@link freePorts} over a given range and reservation directory (the tests' door to it). */
export function reservePorts(n: number, { dir, bottom, top }: PortRange): number[] {
  // A random start keeps processes' ports apart, so few reservations are read.
  if (nextPort < bottom || nextPort >= top) nextPort = bottom + Math.floor(Math.random() * (top - bottom));
  const lock = Deno.openSync(`${dir}/.lock`, { create: true, write: true });
  const ports: number[] = [];
  try {
    lock.lockSync(true); // released when closed, or when the process dies
    for (let tries = 0; ports.length < n && tries < top - bottom; tries++) {
      const port = nextPort;
      nextPort = nextPort + 1 >= top ? bottom : nextPort + 1;
      if (held.has(port)) continue;
      const file = `${dir}/${port}`;
      let owner: string | undefined;
      try {
        owner = Deno.readTextFileSync(file);
      } catch { /* not reserved */ }
      if (owner !== undefined && ownerAlive(owner, file)) continue;
      try {
        Deno.listen({ hostname: "127.0.0.1", port }).close();
      } catch {
        continue; // in use by something that did not reserve it
      }
      Deno.writeTextFileSync(file, `${Deno.pid}\n`);
      held.add(port);
      ports.push(port);
    }
  } finally {
    lock.close();
  }
  if (ports.length < n) throw new Error(`no ${n} free loopback ports between ${bottom} and ${top}`);
  return ports;
}

/** One loopback TCP port for a process a test starts (see {@link freePorts}). */
export function freePort(): number {
  return freePorts(1)[0];
}
