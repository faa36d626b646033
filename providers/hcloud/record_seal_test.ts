import { assertEquals } from "../../testing/assert.ts";
import { RecordSeal } from "./record_seal.ts";

Deno.test("record seal: verifies what it sealed, with any token this process used; nothing else", async () => {
  let secrets = ["token-a"];
  const seal = new RecordSeal(() => secrets);
  const s = await seal.seal("uid-1|38|443|false");
  assertEquals(await seal.verify("uid-1|38|443|false", s), true);
  assertEquals(await seal.verify("uid-2|38|443|false", s), false, "bound to the object it belongs to");
  assertEquals(await seal.verify("uid-1|38|443,80|false", s), false, "bound to the record");
  assertEquals(await seal.verify("uid-1|38|443|false", undefined), false);
  assertEquals(await seal.verify("uid-1|38|443|false", "forged"), false);
  // A rotation: the old seal still verifies in this process; new seals use the new token.
  secrets = ["token-b", "token-a"];
  assertEquals(await seal.verify("uid-1|38|443|false", s), true);
  const t = await seal.seal("uid-1|38|443|false");
  assertEquals(t === s, false);
  // Another CCM (another token) cannot make or check them.
  assertEquals(await new RecordSeal(() => ["token-c"]).verify("uid-1|38|443|false", s), false);
});
