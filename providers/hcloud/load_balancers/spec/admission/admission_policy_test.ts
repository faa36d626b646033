import { assert, assertEquals } from "../../../../../testing/assert.ts";
import { annotationSamples, ccmVerdict } from "../../../../../testing/annotation_samples.ts";
import { parseLabelSelector } from "../../../../../lib/label_selector.ts";
import { LB_LABELS_ANNOTATION } from "../../../names.ts";
import { POLICY_EXCEPTIONS } from "./admission_policy.ts";
import { policyTemplate } from "./admission_template.ts";
import {
  BOOLS,
  CHOICES,
  DURATIONS,
  HOSTNAMES,
  INTEGERS,
  OTHERS,
  OUR_BOOLS,
  PATTERNS,
} from "../annotation_rules.ts";
import { KNOWN_ANNOTATIONS } from "../registry.ts";
import { selectorPattern } from "../selector_pattern.ts";

const TABLES: Record<string, readonly string[]> = {
  BOOLS,
  CHOICES: Object.keys(CHOICES),
  DURATIONS: Object.keys(DURATIONS),
  INTEGERS: Object.keys(INTEGERS),
  PATTERNS: Object.keys(PATTERNS),
  HOSTNAMES: Object.keys(HOSTNAMES),
  OTHERS: Object.keys(OTHERS),
};

Deno.test("annotation rules: every annotation the CCM reads is in exactly one table", () => {
  for (const name of KNOWN_ANNOTATIONS) {
    const homes = Object.entries(TABLES).filter(([, names]) => names.includes(name)).map(([t]) => t);
    assertEquals(homes.length, 1, `${name} is in ${homes.join(", ") || "no table"}`);
  }
  assertEquals(
    Object.values(TABLES).flat().length,
    KNOWN_ANNOTATIONS.length,
    "a table names an unknown annotation",
  );
});

Deno.test("admission policy: the chart's template is the one the table makes (`deno task manifests`)", async () => {
  const file = new URL("../../../../../chart/templates/admissionpolicy.yaml", import.meta.url);
  assertEquals(await Deno.readTextFile(file), policyTemplate(), "run `deno task manifests`");
});

Deno.test("annotation samples: every annotation has values the CCM accepts and refuses", () => {
  const verdicts = new Map<string, Set<boolean>>();
  for (const sample of annotationSamples()) {
    const names = Object.keys(sample.annotations);
    if (names.length !== 1) continue;
    const { invalid } = ccmVerdict(sample);
    const seen = verdicts.get(names[0]) ?? new Set();
    verdicts.set(names[0], seen.add(invalid.length === 0));
    if (sample.lenient) {
      assert(sample.lenient in POLICY_EXCEPTIONS, `${sample.lenient} is not a listed exception`);
    }
  }
  const free = Object.entries(OTHERS).filter(([, why]) => why.startsWith("free")).map(([n]) => n);
  for (const name of [...KNOWN_ANNOTATIONS, LB_LABELS_ANNOTATION, ...OUR_BOOLS]) {
    const seen = verdicts.get(name);
    assert(seen?.has(true), `no sample of ${name} that the CCM accepts`);
    if (!free.includes(name)) assert(seen?.has(false), `no sample of ${name} that the CCM refuses`);
  }
});

Deno.test("selector pattern: the policy's regular expression reads node selectors as the parser does", () => {
  const pattern = new RegExp(selectorPattern());
  const selectors = annotationSamples().map((s) => s.annotations["node-selector"]).filter((s) =>
    s !== undefined
  );
  assert(selectors.length > 20);
  for (const text of selectors) {
    let parsed = true;
    try {
      parseLabelSelector(text);
    } catch {
      parsed = false;
    }
    assertEquals(pattern.test(text), parsed, JSON.stringify(text.slice(0, 80)));
  }
});
