import { assertEquals } from "../../testing/assert.ts";
import { CarriedServices } from "./carried.ts";
import type { Service } from "kubernetes-types/core/v1.d.ts";

const svc = (uid: string): Service => ({ metadata: { name: "a", namespace: "t", uid } });

Deno.test("carried: the cloud is asked once per Service, again for a new one of the same name", async () => {
  const asked: string[] = [];
  const carried = new CarriedServices((s) => {
    asked.push(s.metadata!.uid!);
    return Promise.resolve(s.metadata!.uid === "served");
  });
  const signal = new AbortController().signal;
  assertEquals(carried.known("t/a", svc("served")), undefined, "not asked yet");
  assertEquals(await carried.resolve("t/a", svc("served"), signal), true);
  assertEquals(await carried.resolve("t/a", svc("served"), signal), true);
  assertEquals(await carried.resolve("t/a", svc("forged"), signal), false, "recreated under the name");
  assertEquals(carried.known("t/a", svc("forged")), false);
  carried.forget("t/a");
  assertEquals(carried.known("t/a", svc("forged")), undefined);
  assertEquals(asked, ["served", "forged"]);
});

Deno.test("carried: a provider that cannot look balancers up keeps the finalizer's word", async () => {
  assertEquals(await new CarriedServices().resolve("t/a", svc("x"), new AbortController().signal), true);
});
