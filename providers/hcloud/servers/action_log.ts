/**
 * Reads an action log (`GET /servers/actions`, `GET /primary_ips/actions`) newest first, back to a
 * cursor: the resources every newer action names. Almost every change to what a Node shows of its
 * server (type, networks, alias IPs, power, deletion, public IPs) is recorded as an action, so a
 * few requests replace a full server list.
 *
 * The cursor only moves past finished actions: a running action is read again next time, so a
 * change that lands when it finishes is never missed.
 *
 * A firewall's actions (`apply_firewall`, `remove_firewall`, `set_firewall_rules`) name the servers
 * it applies to, but change nothing a Node shows of its server: only the firewall is reported for
 * them (one rule change on a firewall applied to every Node would otherwise read every server).
 *
 * @module
 */
import type { HcloudClient } from "../../../hcloud_api/mod.ts";
import { CloudApiError } from "../../../hcloud_api/mod.ts";

/** The logs read. */
export type ActionLogPath = "/servers/actions" | "/primary_ips/actions";

/** What a read found. */
export interface ActionLogRead {
  /** The cursor for the next read: every action up to it is finished and was seen. */
  cursor: number;
  /** Resources named by the actions newer than the old cursor. */
  resources: { id: number; type: string }[];
  /** Requests made. */
  requests: number;
}

/** The log cannot be followed from the cursor: the caller falls back to a full list. */
export class ActionLogGapError extends Error {
  constructor(message: string, readonly reason: "gap" | "too_many") {
    super(message);
    this.name = "ActionLogGapError";
  }
}

const PER_PAGE = 50;

/**
 * The cursor to start from before a full list: the newest action's ID (0 when the log is empty), or
 * just below the oldest action still running on the newest page, so that a change landing when it
 * finishes (after the list) is read next time.
 */
export async function newestActionId(client: HcloudClient, path: ActionLogPath): Promise<number> {
  const data = await client.call(
    "read action log",
    client.api.GET(path, { params: { query: { sort: ["id:desc"], per_page: PER_PAGE } } }),
  );
  const actions = checkedActions(data, path);
  const running = actions.filter((a) => a.status === "running").map((a) => a.id);
  return cursorOf(0, actions[0]?.id ?? 0, Math.min(Infinity, ...running));
}

/**
 * Every action newer than `after`, at most `maxPages` pages. Throws {@link ActionLogGapError} when
 * the log no longer reaches back to `after` or holds more than `maxPages` pages of news, and
 * `CloudApiError` (`invalid_response`) on an answer of the wrong shape.
 */
export async function readActionLog(
  client: HcloudClient,
  path: ActionLogPath,
  after: number,
  maxPages = 4,
): Promise<ActionLogRead> {
  const resources: ActionLogRead["resources"] = [];
  let newest = after;
  let oldestRunning = Infinity;
  for (let page = 1;; page++) {
    if (page > maxPages) {
      throw new ActionLogGapError(`more than ${maxPages * PER_PAGE} new actions in ${path}`, "too_many");
    }
    const data = await client.call(
      "read action log",
      client.api.GET(path, { params: { query: { sort: ["id:desc"], page, per_page: PER_PAGE } } }),
    );
    const actions = checkedActions(data, path);
    for (const action of actions) {
      if (action.id <= after) {
        return { cursor: cursorOf(after, newest, oldestRunning), resources, requests: page };
      }
      newest = Math.max(newest, action.id);
      if (action.status === "running") oldestRunning = Math.min(oldestRunning, action.id);
      resources.push(...resourcesOf(action));
    }
    const next = (data as { meta?: { pagination?: { next_page?: number | null } } }).meta?.pagination
      ?.next_page;
    if (!next || actions.length === 0) {
      // The whole log is newer than the cursor: fine only if there was nothing before it.
      if (after > 0) throw new ActionLogGapError(`${path} no longer reaches back to action ${after}`, "gap");
      return { cursor: cursorOf(after, newest, oldestRunning), resources, requests: page };
    }
  }
}

function cursorOf(after: number, newest: number, oldestRunning: number): number {
  return oldestRunning === Infinity ? newest : Math.max(after, oldestRunning - 1);
}

interface LoggedAction {
  id: number;
  command?: string;
  status: string;
  resources: { id: number; type: string }[];
}

/** Commands that change a firewall, not what the servers they name show of themselves. */
const FIREWALL_COMMANDS = new Set(["apply_firewall", "remove_firewall", "set_firewall_rules"]);

function resourcesOf(action: LoggedAction): LoggedAction["resources"] {
  return FIREWALL_COMMANDS.has(action.command ?? "")
    ? action.resources.filter((r) => r.type === "firewall")
    : action.resources;
}

/** The actions of one page, each checked; a wrong shape is `invalid_response`, never a guess. */
function checkedActions(data: unknown, path: string): LoggedAction[] {
  const bad = (what: string): never => {
    throw new CloudApiError(`unexpected answer from ${path}: ${what}`, {
      status: 200,
      code: "invalid_response",
    });
  };
  const list = (data as { actions?: unknown })?.actions;
  if (!Array.isArray(list)) bad('no "actions" list');
  return (list as unknown[]).map((raw) => {
    const a = raw as Partial<LoggedAction> | null;
    if (!a || !Number.isSafeInteger(a.id) || typeof a.status !== "string" || !Array.isArray(a.resources)) {
      return bad("an action without id, status or resources");
    }
    for (const r of a.resources) {
      if (!r || !Number.isSafeInteger(r.id) || typeof r.type !== "string") {
        bad(`action ${a.id} names a bad resource`);
      }
    }
    return a as LoggedAction;
  });
}
