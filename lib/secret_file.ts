/**
 * Reading a credential from a file (`HCLOUD_TOKEN_FILE`, `ROBOT_USER_FILE`, …) with its physical
 * limits checked first (security probe P7): it must be a regular file (a Secret's mount, whose
 * symlinks are followed) of at most {@link MAX_SECRET_FILE_BYTES}. `/dev/zero` would otherwise fill
 * the memory in seconds and a FIFO nobody writes would hang the start, both without a word.
 *
 * @module
 */

/** A token or password is far shorter; anything bigger is not one. */
export const MAX_SECRET_FILE_BYTES = 4096;

/** The problem with `path` as a credential file, or undefined (one `stat`, which never blocks). */
function problem(info: Deno.FileInfo): string | undefined {
  if (!info.isFile) {
    return "is not a regular file (a device, FIFO, socket or directory); mount the Secret's key as a file";
  }
  if (info.size > MAX_SECRET_FILE_BYTES) {
    return `holds ${info.size} bytes, more than the ${MAX_SECRET_FILE_BYTES} a credential can take`;
  }
  return undefined;
}

/** Reads a credential file, after checking it is a small regular file; throws naming the problem. */
export function readSecretFileSync(path: string): string {
  const why = problem(Deno.statSync(path));
  if (why) throw new Error(`${path} ${why}`);
  return cut(Deno.readFileSync(path), path);
}

/** As {@link readSecretFileSync}, asynchronously. */
export async function readSecretFile(path: string): Promise<string> {
  const why = problem(await Deno.stat(path));
  if (why) throw new Error(`${path} ${why}`);
  return cut(await Deno.readFile(path), path);
}

/** The file grew between the stat and the read: still refused. */
function cut(bytes: Uint8Array, path: string): string {
  if (bytes.length > MAX_SECRET_FILE_BYTES) {
    throw new Error(`${path} holds more than the ${MAX_SECRET_FILE_BYTES} bytes a credential can take`);
  }
  return new TextDecoder().decode(bytes);
}
