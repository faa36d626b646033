/**
 * Following the server and Primary IP action logs between full lists: where to start after a list,
 * and what changed since, as the servers the new actions name (a Primary IP's old and new holders
 * included), each read again. The server cache decides when to follow and when to list.
 *
 * @module
 */
import { CloudApiError, type HcloudClient, type ServerInfo } from "../../../hcloud_api/mod.ts";
import { ActionLogGapError, type ActionLogPath, newestActionId, readActionLog } from "./action_log.ts";
import { pagesOf, type ServerSnapshot } from "./snapshot.ts";

/** What one read of the action logs found: the resources the new actions name, or a gap (some lost). */
export type LoggedNews = { resources: { id: number; type: string }[] } | { gap: true };

/** Where each log was read up to. */
export interface LogCursors {
  servers: number;
  primaryIps: number;
}

/** The changes since the cursors, and where to read from next time. */
export interface FollowedChanges {
  /** Servers read again (undefined: gone). */
  changed: Map<number, ServerInfo | undefined>;
  cursors: LogCursors;
}

const CONCURRENT_READS = 5;

/**
 * The cursors to follow a full list from. With cursors from before (`old`), the news since them is
 * read on the same first page (no extra request) and returned; when it does not fit there, a gap.
 */
export async function cursorsBeforeList(
  client: HcloudClient,
  old: LogCursors | undefined,
): Promise<{ cursors: LogCursors; news?: LoggedNews }> {
  const cursor = async (path: ActionLogPath, after: number | undefined) => {
    if (after !== undefined) {
      try {
        const read = await readActionLog(client, path, after, 1);
        return { cursor: read.cursor, resources: read.resources };
      } catch (err) {
        if (!(err instanceof ActionLogGapError)) throw err;
      }
    }
    return { cursor: await newestActionId(client, path), resources: undefined };
  };
  const [servers, primaryIps] = await Promise.all([
    cursor("/servers/actions", old?.servers),
    cursor("/primary_ips/actions", old?.primaryIps),
  ]);
  const news: LoggedNews | undefined = !old
    ? undefined
    : servers.resources && primaryIps.resources
    ? { resources: [...servers.resources, ...primaryIps.resources] }
    : { gap: true };
  return { cursors: { servers: servers.cursor, primaryIps: primaryIps.cursor }, news };
}

/**
 * What the logs recorded since `cursors`, and (unless reading each named server costs as much as a
 * full list of `base`'s size: then undefined) those servers read again through `read`. Throws
 * {@link ActionLogGapError} when the logs cannot be followed from the cursors.
 */
export async function followLogs(
  client: HcloudClient,
  base: ServerSnapshot,
  cursors: LogCursors,
  read: (id: number) => Promise<ServerInfo | undefined>,
): Promise<{ news: LoggedNews; changes?: FollowedChanges }> {
  const [servers, primaryIps] = await Promise.all([
    readActionLog(client, "/servers/actions", cursors.servers),
    readActionLog(client, "/primary_ips/actions", cursors.primaryIps),
  ]);
  const news = { resources: [...servers.resources, ...primaryIps.resources] };
  const ids = new Set<number>();
  const touchedIps = new Set<number>();
  for (const r of news.resources) {
    if (r.type === "server") ids.add(r.id);
    if (r.type === "primary_ip") touchedIps.add(r.id);
  }
  // A Primary IP's old holder is in the snapshot; its new one is its assignee now.
  for (const server of base.all) {
    if (server.primaryIpIds.some((id) => touchedIps.has(id))) ids.add(server.id);
  }
  await inBatches([...touchedIps], async (id) => {
    const assignee = await assigneeOf(client, id);
    if (assignee !== undefined) ids.add(assignee);
  });
  if (ids.size >= pagesOf(base.all.length)) return { news };
  const changed = new Map<number, ServerInfo | undefined>();
  await inBatches([...ids], async (id) => changed.set(id, await read(id)));
  return { news, changes: { changed, cursors: { servers: servers.cursor, primaryIps: primaryIps.cursor } } };
}

/** Runs `work` on every item, a few at a time. */
export async function inBatches<T>(items: T[], work: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += CONCURRENT_READS) {
    await Promise.all(items.slice(i, i + CONCURRENT_READS).map(work));
  }
}

async function assigneeOf(client: HcloudClient, primaryIpId: number): Promise<number | undefined> {
  try {
    const data = await client.call(
      "get primary ip",
      client.api.GET("/primary_ips/{id}", { params: { path: { id: primaryIpId } } }),
    );
    const ip = data.primary_ip as { assignee_id?: number | null; assignee_type?: string };
    return ip.assignee_type === "server" && typeof ip.assignee_id === "number" ? ip.assignee_id : undefined;
  } catch (err) {
    if (err instanceof CloudApiError && err.status === 404) return undefined;
    throw err;
  }
}
