/**
 * Simulated `/firewalls`: create (with rules and `apply_to`), list, get, update, delete (refused
 * while applied: `resource_in_use`), and the actions `set_rules` (one `set_firewall_rules` action,
 * and an `apply_firewall` per server it applies to), `apply_to_resources` and
 * `remove_from_resources`, with the documented errors and limits (firewall_model.ts).
 *
 * @module
 */
import { BodyReader, faults, type Reply } from "./http_kit.ts";
import { parseLabelSelector, validLabels } from "../lib/label_selector.ts";
import { parseCidr } from "../lib/cidr.ts";
import { byId, listResponse, route, type SimRoute } from "./router.ts";
import { resourceActionRoutes } from "./routes_servers.ts";
import type { World } from "./world.ts";
import {
  appliedServers,
  effectiveRules,
  type Firewall,
  FIREWALL_LIMITS,
  type FirewallRule,
  firewallsOf,
  type FirewallTarget,
  hasPublicInterface,
  renderFirewall,
} from "./firewall_model.ts";

const labelsCheck = (v: Record<string, unknown>) =>
  validLabels(v) ? undefined : "contains an invalid label key or value";

/** Reads and checks a rule list (`field` names it in errors). */
function readRules(r: BodyReader, field: string): FirewallRule[] {
  const raw = (r.array(field) ?? []) as Record<string, unknown>[];
  const rules = raw.map((item, i) => {
    const rule = r.nested(item, `${field}[${i}].`);
    const direction = rule.string("direction", {
      required: true,
      check: (v) => ["in", "out"].includes(v) ? undefined : 'must be "in" or "out"',
    }) as FirewallRule["direction"];
    const protocol = rule.string("protocol", {
      required: true,
      check: (v) => ["tcp", "udp", "icmp", "esp", "gre"].includes(v) ? undefined : "is not a protocol",
    }) as FirewallRule["protocol"];
    const ported = protocol === "tcp" || protocol === "udp";
    const port = rule.string("port", {
      required: ported,
      check: (v) => {
        if (!ported) return "is only allowed for tcp and udp";
        const m = v.match(/^(\d{1,5})(?:-(\d{1,5}))?$/);
        if (v === "any") return undefined;
        if (!m || Number(m[1]) < 1 || Number(m[2] ?? m[1]) > 65535 || Number(m[2] ?? m[1]) < Number(m[1])) {
          return "must be a port (1-65535) or a range lo-hi";
        }
        return undefined;
      },
    });
    const cidrs = (name: string, wanted: boolean) => {
      const list = (rule.array(name) ?? []) as unknown[];
      if (!wanted && list.length) {
        rule.fail(name, `is only allowed with direction ${name === "source_ips" ? "in" : "out"}`);
      }
      if (list.length > 100) rule.fail(name, "holds at most 100 CIDR blocks");
      return list.map((c) => {
        const cidr = typeof c === "string" ? parseCidr(c) : undefined;
        if (!cidr) rule.fail(name, `"${String(c)}" is not a CIDR block`);
        return cidr?.text ?? String(c);
      });
    };
    const source_ips = cidrs("source_ips", direction === "in");
    const destination_ips = cidrs("destination_ips", direction === "out");
    if (direction === "in" && !source_ips.length) rule.fail("source_ips", "is required for direction in");
    if (direction === "out" && !destination_ips.length) {
      rule.fail("destination_ips", "is required for direction out");
    }
    const description = rule.string("description");
    r.absorb(rule);
    return {
      description: description ?? null,
      direction,
      protocol,
      port: port ?? null,
      source_ips,
      destination_ips,
    };
  });
  if (rules.length > FIREWALL_LIMITS.entries) {
    r.fail(field, `holds at most ${FIREWALL_LIMITS.entries} rules`);
  } else if (effectiveRules(rules) > FIREWALL_LIMITS.effectiveRules) {
    r.fail(
      field,
      `makes ${effectiveRules(rules)} effective rules, more than ${FIREWALL_LIMITS.effectiveRules}`,
    );
  }
  return rules;
}

/** Reads `apply_to`-shaped resources. */
function readTargets(r: BodyReader, field: string, selectorsAllowed: boolean): FirewallTarget[] {
  const raw = (r.array(field, { required: true }) ?? []) as Record<string, unknown>[];
  return raw.flatMap((item, i) => {
    const t = r.nested(item, `${field}[${i}].`);
    const type = t.string("type", {
      required: true,
      check: (v) =>
        v === "server" || (selectorsAllowed && v === "label_selector") ? undefined : "is not supported",
    });
    const out: FirewallTarget[] = [];
    if (type === "server") {
      const server = t.object("server", { required: true }) as { id?: unknown } | undefined;
      if (typeof server?.id !== "number") t.fail("server.id", "is required");
      else out.push({ type: "server", server: { id: server.id } });
    } else if (type === "label_selector") {
      const sel = t.object("label_selector", { required: true }) as { selector?: unknown } | undefined;
      try {
        parseLabelSelector(String(sel?.selector ?? ""));
        out.push({ type: "label_selector", label_selector: { selector: String(sel!.selector) } });
      } catch (err) {
        t.fail("label_selector.selector", (err as Error).message);
      }
    }
    r.absorb(t);
    return out;
  });
}

/** Applies `targets` to `fw` with the documented checks; returns the actions started. */
function apply(world: World, fw: Firewall, targets: FirewallTarget[]): unknown[] {
  const key = (t: FirewallTarget) =>
    t.type === "server" ? `s${t.server.id}` : `l${t.label_selector.selector}`;
  const applied = new Set(fw.applied_to.map(key));
  for (const t of targets) {
    if (applied.has(key(t))) {
      throw faults.code(422, "firewall_already_applied", "firewall is already applied");
    }
    if (t.type !== "server") continue;
    const server = world.servers.get(t.server.id);
    if (!server) throw faults.code(404, "firewall_resource_not_found", `server ${t.server.id} not found`);
    if (!hasPublicInterface(server)) {
      throw faults.code(422, "private_net_only_server", `server ${server.id} has no public interface`);
    }
  }
  const before = appliedServers(world, fw);
  const trial: Firewall = { ...fw, applied_to: [...fw.applied_to, ...targets] };
  const after = appliedServers(world, trial);
  for (const id of after.keys()) {
    if (before.has(id)) continue;
    if (firewallsOf(world, id).length >= FIREWALL_LIMITS.perServer) {
      throw faults.code(
        403,
        "resource_limit_exceeded",
        `server ${id} already has ${FIREWALL_LIMITS.perServer} firewalls, its limit`,
      );
    }
  }
  fw.applied_to = trial.applied_to;
  return [...after.keys()].filter((id) => !before.has(id)).map((id) =>
    world.startAction("apply_firewall", [{ id: fw.id, type: "firewall" }, { id, type: "server" }])
  );
}

/** The routes of this file. */
export function firewallRoutes(): SimRoute[] {
  const get = (world: World, id: string) => byId(world.firewalls, id, "firewall") as Firewall;
  const show = (world: World, fw: Firewall) => renderFirewall(world, fw);
  return [
    route("GET", "/firewalls", (req, _p, ctx) =>
      listResponse(
        ([...ctx.world.firewalls.values()] as Firewall[]).map((fw) => show(ctx.world, fw)),
        req,
        ctx,
        "firewalls",
        ["id", "name", "created"],
      )),
    route("GET", "/firewalls/{id}", (_req, p, { world }) => ({
      status: 200,
      body: { firewall: show(world, get(world, p.id)) },
    })),
    route("POST", "/firewalls", (req, _p, { world }): Reply => {
      const r = new BodyReader(req.body);
      const name = r.string("name", {
        required: true,
        check: (v) => v.length <= 128 ? undefined : "is longer than 128 characters",
      });
      const labels = r.object("labels", { check: labelsCheck }) as Record<string, string> | undefined;
      const rules = readRules(r, "rules");
      const targets = r.has("apply_to") ? readTargets(r, "apply_to", true) : [];
      if ([...world.firewalls.values()].some((x) => x.name === name)) r.fail("name", "is already used");
      r.done();
      const fw: Firewall = {
        id: world.id(),
        name: name!,
        labels: labels ?? {},
        created: new Date(world.now()).toISOString(),
        rules,
        applied_to: [],
      };
      world.firewalls.set(fw.id, fw);
      let actions: unknown[];
      try {
        actions = apply(world, fw, targets);
      } catch (err) {
        world.firewalls.delete(fw.id);
        throw err;
      }
      if (rules.length) {
        actions.unshift(world.startAction("set_firewall_rules", [{ id: fw.id, type: "firewall" }]));
      }
      return { status: 201, body: { firewall: show(world, fw), actions } };
    }),
    route("PUT", "/firewalls/{id}", (req, p, { world }) => {
      const fw = get(world, p.id);
      const r = new BodyReader(req.body);
      const name = r.string("name");
      const labels = r.object("labels", { check: labelsCheck }) as Record<string, string> | undefined;
      r.done();
      if (name && name !== fw.name && [...world.firewalls.values()].some((x) => x.name === name)) {
        throw faults.uniqueness("name");
      }
      if (name) fw.name = name;
      if (labels) fw.labels = labels;
      return { status: 200, body: { firewall: show(world, fw) } };
    }),
    route("DELETE", "/firewalls/{id}", (_req, p, { world }) => {
      const fw = get(world, p.id);
      if (appliedServers(world, fw).size || fw.applied_to.some((t) => t.type === "label_selector")) {
        throw faults.code(422, "resource_in_use", "firewall is still applied to a resource");
      }
      world.firewalls.delete(fw.id);
      return { status: 204 };
    }),
    route("POST", "/firewalls/{id}/actions/set_rules", (req, p, { world }) => {
      const fw = get(world, p.id);
      const r = new BodyReader(req.body);
      const rules = readRules(r, "rules");
      r.done();
      fw.rules = rules;
      const actions = [
        world.startAction("set_firewall_rules", [{ id: fw.id, type: "firewall" }]),
        ...[...appliedServers(world, fw).keys()].map((id) =>
          world.startAction("apply_firewall", [{ id: fw.id, type: "firewall" }, { id, type: "server" }])
        ),
      ];
      return { status: 201, body: { actions } };
    }),
    route("POST", "/firewalls/{id}/actions/apply_to_resources", (req, p, { world }) => {
      const fw = get(world, p.id);
      const r = new BodyReader(req.body);
      const targets = readTargets(r, "apply_to", true);
      r.done();
      return { status: 201, body: { actions: apply(world, fw, targets) } };
    }),
    route("POST", "/firewalls/{id}/actions/remove_from_resources", (req, p, { world }) => {
      const fw = get(world, p.id);
      const r = new BodyReader(req.body);
      const targets = readTargets(r, "remove_from", true);
      r.done();
      const before = appliedServers(world, fw);
      for (const t of targets) {
        const index = fw.applied_to.findIndex((a) =>
          a.type === t.type &&
          (t.type === "server"
            ? (a as typeof t).server.id === t.server.id
            : (a as typeof t).label_selector.selector === t.label_selector.selector)
        );
        if (index < 0) {
          if (t.type === "server" && before.get(t.server.id) === "label_selector") {
            throw faults.code(
              422,
              "firewall_managed_by_label_selector",
              "firewall is applied via a label selector and cannot be removed manually",
            );
          }
          throw faults.code(
            404,
            "firewall_resource_not_found",
            "the firewall is not applied to that resource",
          );
        }
        fw.applied_to.splice(index, 1);
      }
      const after = appliedServers(world, fw);
      const actions = [...before.keys()].filter((id) => !after.has(id)).map((id) =>
        world.startAction("remove_firewall", [{ id: fw.id, type: "firewall" }, { id, type: "server" }])
      );
      return { status: 201, body: { actions } };
    }),
    ...resourceActionRoutes("firewalls", "firewall", (w) => w.firewalls),
  ];
}
