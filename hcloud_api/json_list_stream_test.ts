import { assertEquals, assertRejects } from "../testing/assert.ts";
import { PageReadError, streamListPage } from "./json_list_stream.ts";

/** `text` as a stream of byte chunks of `size` (cutting characters of several bytes in two). */
function chunked(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

async function read(text: string, size: number, key = "items") {
  const items: unknown[] = [];
  const rest = await streamListPage(chunked(text, size), key, (item) => items.push(item));
  return { items, rest };
}

const page = {
  items: [
    { id: 1, name: 'a "quoted" } ] { [ name', tags: ["x", "y"], nested: { deep: [[1], [2, { z: null }]] } },
    "a string item, with a comma",
    42,
    -1.5e3,
    true,
    null,
    [],
    {},
    { unicode: "Grüße ✓ 😀", escapes: '\\"\n\t\u0001' },
  ],
  meta: { pagination: { page: 1, next_page: 2, last_page: 3 } },
  after: [1, 2],
  flag: false,
};

Deno.test("json list stream: every item and every other field, whatever the chunk boundaries", async () => {
  for (const text of [JSON.stringify(page), JSON.stringify(page, null, 2)]) {
    for (const size of [1, 2, 3, 7, 64, 100_000]) {
      const { items, rest } = await read(text, size);
      assertEquals(items, page.items, `chunks of ${size}`);
      assertEquals(rest, { meta: page.meta, after: page.after, flag: false }, `chunks of ${size}`);
    }
  }
  assertEquals(await read('{"items":[]}', 1), { items: [], rest: {} });
  assertEquals(await read(' { "meta" : 1 , "items" : [ 1 , 2 ] } ', 2), { items: [1, 2], rest: { meta: 1 } });
  // The same key nested deeper is an item's business, not the list.
  const nested = await read('{"meta":{"items":[9]},"items":[{"items":[8]}]}', 3);
  assertEquals(nested, { items: [{ items: [8] }], rest: { meta: { items: [9] } } });
});

Deno.test("json list stream: anything but one well-formed page is a SyntaxError naming what is wrong", async () => {
  const cases: [string, RegExp][] = [
    ["", /ends early/],
    ["[1,2]", /no object/],
    ['{"items":[1,2]', /ends early/],
    ['{"items":[1,2}', /',' or '\]' expected/],
    ['{"items":[1,,2]}', /value expected/],
    ['{"items":[1],}', /a key expected/],
    ['{"items":[1]} x', /text after the object/],
    ['{"meta":{}}', /no "items" list/],
    ['{"items":[1],"items":[2]}', /two "items" fields/],
    ['{"items":[{"a":tru}]}', /./],
    ['{"items":["unterminated]}', /ends early/],
  ];
  for (const [text, message] of cases) {
    const err = await assertRejects(() => read(text, 3), SyntaxError);
    assertEquals(message.test(err.message), true, `${text}: ${err.message}`);
  }
  // Bytes that are not UTF-8.
  const bytes = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new Uint8Array([123, 34, 105, 34, 58, 91, 34, 0xff, 34, 93, 125]));
      c.close();
    },
  });
  const err = await assertRejects(() => streamListPage(bytes, "i", () => {}), SyntaxError);
  assertEquals(err.message, "not a JSON list page: not UTF-8");
});

Deno.test("json list stream: what JSON.parse refuses (or reads otherwise), the scanner refuses (Q10)", async () => {
  const cases: [string, RegExp][] = [
    ['{"items":[1,]}', /trailing comma/],
    ['{"items":[{"id":1},]}', /trailing comma/],
    ['{"items":[1,2],"items":null}', /two "items" fields/],
    ['{"items":null,"items":[2]}', /"items" is not a list/],
    ['{"items":[1\u00a0]}', /./],
    ['{"items":[\u2028 1]}', /./],
    ['{"items":[1],"total":2\ufeff}', /./],
    ['{"items":[\v1]}', /./],
    ['{"items":[1\f]}', /./],
  ];
  for (const [text, message] of cases) {
    const err = await assertRejects(() => read(text, 3), SyntaxError);
    assertEquals(message.test(err.message), true, `${text}: ${err.message}`);
  }
});

Deno.test("json list stream: a large page is read item by item, each handed on before the rest is read", async () => {
  const big = {
    items: Array.from({ length: 200 }, (_, i) => ({ id: i, filler: "x".repeat(5_000) })),
    meta: {},
  };
  const bytes = new TextEncoder().encode(JSON.stringify(big));
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(pulled, pulled + 4096));
      pulled += 4096;
    },
  }, { highWaterMark: 0 });
  const seen: { id: number; pulled: number }[] = [];
  await streamListPage(stream, "items", (item) => seen.push({ id: (item as { id: number }).id, pulled }));
  assertEquals(seen.map((s) => s.id), big.items.map((i) => i.id));
  // The first item came when about its own size had been read, not the page's million bytes.
  assertEquals(seen[0].pulled < 3 * 5_100, true, `${seen[0].pulled} bytes read before the first item`);
});

Deno.test("json list stream: a body that breaks off is a PageReadError, not a bad answer", async () => {
  let pulls = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (pulls++ === 0) c.enqueue(new TextEncoder().encode('{"items":[1,'));
      else c.error(new TypeError("connection reset"));
    },
  }, { highWaterMark: 0 });
  const seen: unknown[] = [];
  const err = await assertRejects(() => streamListPage(stream, "items", (i) => seen.push(i)), PageReadError);
  assertEquals(err.message, "the answer broke off: connection reset");
  assertEquals(seen, [1], "what came before was handed on");
});

Deno.test("json list stream: an item past the bound is refused before it is held whole; check sees each item", async () => {
  const text = JSON.stringify({ items: [{ a: "x".repeat(100) }, { a: "y".repeat(5_000) }] });
  const seen: unknown[] = [];
  const err = await assertRejects(
    () => streamListPage(chunked(text, 64), "items", (i) => seen.push(i), { maxItemChars: 1_000 }),
    SyntaxError,
  );
  assertEquals(err.message, "not a JSON list page: an item or field longer than 1000 characters");
  assertEquals(seen.length, 1, "the item within the bound was handed on");
  const checked: string[] = [];
  await streamListPage(chunked('{"items":[1,{"b":2}],"meta":{}}', 3), "items", () => {}, {
    check: (t) => checked.push(t),
  });
  assertEquals(checked, ["1", '{"b":2}', "{}"]);
});

Deno.test("json list stream: memory a hostile page can take is bounded: nesting, the fields besides the list (Q9)", async () => {
  const deep = '{"items":[' + "[".repeat(100_000) + "]".repeat(100_000) + "]}";
  const nested = await assertRejects(() => read(deep, 4096), SyntaxError);
  assertEquals(/nested deeper than 64 levels/.test(nested.message), true, nested.message);
  // 64 levels still pass (a balancer nests 6).
  const ok = '{"items":[' + "[".repeat(64) + "]".repeat(64) + "]}";
  assertEquals((await read(ok, 7)).items.length, 1);
  // Sixteen 100 kB fields beside the list: over the 1 MB the other fields may hold together.
  const fields = Array.from({ length: 16 }, (_, i) => `"f${i}":"${"x".repeat(100_000)}"`).join(",");
  const wide = await assertRejects(() => read(`{${fields},"items":[]}`, 4096), SyntaxError);
  assertEquals(
    /fields besides "items" longer than 1048576 characters/.test(wide.message),
    true,
    wide.message,
  );
  // One field held across chunks is refused as it grows, before it ends.
  const one = `{"meta":"${"y".repeat(2_000_000)}","items":[]}`;
  const long = await assertRejects(() => read(one, 65536), SyntaxError);
  assertEquals(/fields besides "items"/.test(long.message), true, long.message);
});
