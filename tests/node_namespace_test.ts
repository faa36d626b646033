/**
 * The machine's test namespaces are one run's at a time: a run killed with its namespaces up leaves
 * them behind (their host addresses then take the routes to the next run's Nodes: stop 55's CI failed
 * so), and a second run on the same machine would take the same addresses. The next run removes what a
 * dead run left; a live run's namespaces are waited for, not removed.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { claimNamespaces, LOCK_PATH, releaseNamespaces, sh } from "../testing/node_namespace.ts";

const ip = async (...args: string[]) =>
  new TextDecoder().decode((await new Deno.Command("ip", { args, stdout: "piped" }).output()).stdout);

/** A namespace named as a run of `pid` names it, with its veth and a host address on 10.209.<n>. */
async function leave(pid: number, n: number): Promise<{ ns: string; veth: string }> {
  const [ns, veth] = [`deno-ccm-z${n}-${pid}`, `dcz${n}p${pid % 10000}`];
  await sh(
    `ip netns add ${ns} && ip link add ${veth}h type veth peer name ${veth}n && ip link set ${veth}n netns ${ns} && ` +
      `ip addr add 10.209.${n}.1/24 dev ${veth}h && ip link set ${veth}h up`,
  );
  return { ns, veth: `${veth}h` };
}

Deno.test("test namespaces: a dead run's are removed, a live run's are waited for", async () => {
  if (Deno.uid() !== 0) throw new Error("root is needed for network namespaces: run the suite as root");
  // A run that is gone: a finished process's pid.
  const dead = await new Deno.Command("true").spawn();
  await dead.status;
  const left = await leave(dead.pid, 1);
  // A run that is alive and holds the lock.
  const holder = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `const f = await Deno.open(${JSON.stringify(LOCK_PATH)}, { create: true, write: true });` +
      `await f.lock(true); console.log("held"); for await (const _ of Deno.stdin.readable) {}`,
    ],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const holderOut = holder.stdout.getReader();
  assertEquals(new TextDecoder().decode((await holderOut.read()).value).trim(), "held");
  const live = await leave(holder.pid, 2);
  try {
    const said: string[] = [];
    let saidWaiting!: () => void;
    const waiting = new Promise<void>((r) => saidWaiting = r);
    const error = console.error;
    console.error = (...args: unknown[]) => {
      said.push(args.join(" "));
      saidWaiting();
    };
    let claimed = false;
    const claim = claimNamespaces().then(() => claimed = true);
    try {
      await waiting;
      assert(!claimed, "claimed while another live run held the lock");
      assert((await ip("netns", "list")).includes(live.ns), "a live run's namespace was removed");
      await holder.stdin.close();
      await holder.status;
      await claim;
    } finally {
      console.error = error;
    }
    assertEquals(said, [`waiting for another test run's network namespaces (${LOCK_PATH} is locked)`]);
    const [spaces, links] = [await ip("netns", "list"), await ip("-br", "link")];
    for (const gone of [left.ns, live.ns]) assert(!spaces.includes(gone), `${gone} is still there`);
    for (const gone of [left.veth, live.veth]) assert(!links.includes(gone), `${gone} is still there`);
    assert(!(await ip("-br", "addr")).includes("10.209."), "a leftover address is still on the host");
  } finally {
    await releaseNamespaces();
    try {
      holder.kill();
    } catch { /* exited */ }
    holderOut.releaseLock();
    await holder.stdout.cancel();
    for (const { ns, veth } of [left, live]) {
      await sh(`ip netns del ${ns}`, true);
      await sh(`ip link del ${veth}`, true);
    }
  }
});
