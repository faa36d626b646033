import { assertEquals } from "../testing/assert.ts";
import { comparePhases } from "./compare.ts";
import type { Phase, PhaseState } from "./case_file.ts";

const lb = (targets: unknown[], servers: string[], hc = "tcp") => ({
  name: "<default-name:svc>",
  type: "lb11",
  services: [{ listen_port: 80, health_check: { protocol: hc } }],
  targets,
  target_servers: servers,
});
const state = (over: Partial<PhaseState> = {}): PhaseState => ({
  nodes: [{ name: "node-0", providerID: "hcloud://<server:node-0>", labels: {} }],
  services: [],
  load_balancers: [],
  certificates: [],
  routes: {},
  warning_events: [],
  ...over,
});
const expected = (s: PhaseState, messages: Record<string, string[]> = {}): Phase[] => [
  { phase: "initial", converged: true, state: s, info: { warning_messages: messages } },
];
const actual = (s: PhaseState, messages: Record<string, string[]> = {}) => [
  { phase: "initial", converged: true, state: s, warningMessages: messages },
];

Deno.test("compare: label-selector vs server targets are equal when they resolve to the same servers", () => {
  const servers = lb([
    { type: "server", server: "node-0", use_private_ip: false },
    { type: "server", server: "node-1", use_private_ip: false },
  ], ["node-0", "node-1"]);
  const selector = lb([{ type: "label_selector", selector: "x=y", use_private_ip: false }], [
    "node-0",
    "node-1",
  ]);
  assertEquals(
    comparePhases(
      expected(state({ load_balancers: [servers] })),
      actual(state({ load_balancers: [selector] })),
    ),
    [],
  );
  const fewer = lb([{ type: "label_selector", selector: "x=y", use_private_ip: true }], ["node-0"]);
  assertEquals(
    comparePhases(expected(state({ load_balancers: [servers] })), actual(state({ load_balancers: [fewer] })))
      .map((d) => d.path),
    [
      "load_balancers[<default-name:svc>].target_servers",
      "load_balancers[<default-name:svc>].private_ip_by_server[node-0]",
      "load_balancers[<default-name:svc>].private_ip_by_server[node-1]",
    ],
  );
});

Deno.test("compare: fields by path, services by listen port; timing-only warnings are optional on both sides", () => {
  const diffs = comparePhases(
    expected(state({ load_balancers: [lb([], [], "http")] })),
    actual(state({ load_balancers: [lb([], [], "tcp")] })),
  );
  assertEquals(diffs.map((d) => [d.path, d.expected, d.actual]), [
    ["load_balancers[<default-name:svc>].services[80].health_check.protocol", "http", "tcp"],
  ]);
  const route = { kind: "Node", name: "node-0", reason: "FailedToCreateRoute" };
  const timing = {
    "Node/node-0/FailedToCreateRoute": ["... IP 10.0.1.10 not part of routes target addresses"],
  };
  assertEquals(comparePhases(expected(state({ warning_events: [route] }), timing), actual(state())), []);
  const other = { "Node/node-0/FailedToCreateRoute": ["network is gone"] };
  assertEquals(
    comparePhases(expected(state({ warning_events: [route] }), other), actual(state())).map((d) => d.path),
    ["warning_events[Node/node-0/FailedToCreateRoute]"],
  );
  const unconverged = actual(state());
  unconverged[0].converged = false;
  assertEquals(comparePhases(expected(state()), unconverged).map((d) => d.path), ["converged"]);
});
