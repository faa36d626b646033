import { assert, assertEquals } from "../testing/assert.ts";
import { capMessage, EVENT_MESSAGE_MAX, EventRecorder } from "./events.ts";
import { KubeClient } from "./client.ts";
import { NODES } from "./resources.ts";
import type { KubeRequest, KubeTransport } from "./transport.ts";

Deno.test("events: messages are capped at 1 kB with a note of what was cut", () => {
  assertEquals(capMessage("short"), "short");
  const capped = capMessage("x".repeat(10_000));
  assert(capped.length <= EVENT_MESSAGE_MAX, `${capped.length}`);
  assert(capped.endsWith("more characters)"), capped.slice(-40));
});

/** Answers creates after a delay (echoing the object) and patches at once; keeps what was sent. */
class SlowCreates implements KubeTransport {
  readonly sent: { method: string; body: Record<string, unknown> }[] = [];
  async send(request: KubeRequest): Promise<Response> {
    const body = JSON.parse(request.body ?? "{}");
    this.sent.push({ method: request.method, body });
    if (request.method === "POST") await new Promise((r) => setTimeout(r, 20));
    return Response.json(body, { status: request.method === "POST" ? 201 : 200 });
  }
  close(): void {}
}

Deno.test("events: a repeat sent while the first is being created bumps its count, never a second Event", async () => {
  const transport = new SlowCreates();
  const recorder = new EventRecorder(new KubeClient(transport), "test");
  const node = { metadata: { name: "n1", uid: "u1" } };
  for (let i = 0; i < 3; i++) recorder.event(NODES, node, "Normal", "Same", "the same message");
  await recorder.flush();
  assertEquals(transport.sent.map((r) => r.method), ["POST", "PATCH", "PATCH"]);
  assertEquals(transport.sent.slice(1).map((r) => r.body.count), [2, 3]);
});
