import { assert, assertEquals } from "../testing/assert.ts";
import { capMessage, EVENT_MESSAGE_MAX } from "./events.ts";

Deno.test("events: messages are capped at 1 kB with a note of what was cut", () => {
  assertEquals(capMessage("short"), "short");
  const capped = capMessage("x".repeat(10_000));
  assert(capped.length <= EVENT_MESSAGE_MAX, `${capped.length}`);
  assert(capped.endsWith("more characters)"), capped.slice(-40));
});
