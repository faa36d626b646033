import { assertEquals } from "../testing/assert.ts";
import { parseGoBool } from "./go_bool.ts";

Deno.test("go bool: Go's spellings, nothing else", () => {
  assertEquals(["1", "t", "T", "TRUE", "true", "True"].map(parseGoBool), Array(6).fill(true));
  assertEquals(["0", "f", "F", "FALSE", "false", "False"].map(parseGoBool), Array(6).fill(false));
  assertEquals(["yes", "on", "tRUE", " true", ""].map(parseGoBool), Array(5).fill(undefined));
});
