/**
 * The official CCM's provider IDs, parsed in one place: `hcloud://<server ID>` for Cloud servers,
 * `hrobot://<server number>` for Robot servers (and the legacy `hcloud://bm-<number>`, read first).
 *
 * @module
 */

/** What a provider ID says. */
export type ParsedProviderId =
  | { kind: "cloud"; id: number }
  | { kind: "robot"; raw: string; number: number }
  | { kind: "foreign"; raw: string; why: string }
  | { kind: "none" };

/** Parses `hcloud://<id>`; `hcloud://bm-<n>` (legacy, checked first) and `hrobot://<n>` are Robot servers. */
export function parseProviderId(providerID: string | undefined): ParsedProviderId {
  if (!providerID) return { kind: "none" };
  const robot = providerID.match(/^(?:hcloud:\/\/bm-|hrobot:\/\/)(\d{1,15})$/);
  if (robot) return { kind: "robot", raw: providerID, number: Number(robot[1]) };
  if (providerID.startsWith("hcloud://bm-") || providerID.startsWith("hrobot://")) {
    return { kind: "foreign", raw: providerID, why: "is not a Robot provider ID (hrobot://<server number>)" };
  }
  const m = providerID.match(/^hcloud:\/\/(\d+)$/);
  if (!m) {
    return {
      kind: "foreign",
      raw: providerID,
      why: "is not a Hetzner Cloud provider ID (hcloud://<server ID>)",
    };
  }
  // A JavaScript number holds IDs exactly up to 2^53 - 1: a larger one would name another server.
  const id = Number(m[1]);
  if (!Number.isSafeInteger(id) || String(id) !== m[1].replace(/^0+(?=\d)/, "")) {
    return {
      kind: "foreign",
      raw: providerID,
      why: `names server ID ${
        m[1]
      }, beyond the IDs this CCM can address exactly (up to ${Number.MAX_SAFE_INTEGER})`,
    };
  }
  return { kind: "cloud", id };
}

/** The provider ID of the Cloud server `id` (`hcloud://<id>`), the form {@link parseProviderId} reads back. */
export function cloudProviderId(id: number): string {
  return `hcloud://${id}`;
}
