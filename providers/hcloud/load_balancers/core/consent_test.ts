import type { Service } from "kubernetes-types/core/v1.d.ts";
import { assertEquals, assertThrows } from "../../../../testing/assert.ts";
import { CONSENT_LABEL, ExternalObjectConsent } from "./consent.ts";
import { TerminalError } from "../../../errors.ts";

const svc = (namespace: string): Service => ({ metadata: { name: "s", namespace } });

Deno.test("external object consent: the operator's list, else the object's own label for that namespace", () => {
  const open = new ExternalObjectConsent("*");
  open.check(svc("anyone"), {}, "certificate x"); // the official CCM's behaviour
  const strict = new ExternalObjectConsent(["ingress"]);
  strict.check(svc("ingress"), {}, "certificate x");
  strict.check(svc("team-b"), { labels: { [CONSENT_LABEL]: "team-b" } }, "certificate x");
  const err = assertThrows(
    () => strict.check(svc("team-b"), { labels: { [CONSENT_LABEL]: "team-a" } }, 'certificate "a"'),
    TerminalError,
  );
  assertEquals(
    err.message.startsWith('certificate "a" was made outside this CCM and namespace team-b'),
    true,
  );
});
