/**
 * The image's file list per architecture (deploy/rootfs-<arch>.txt), read by the shipping tests.
 *
 * @module
 */

const REPO = new URL("..", import.meta.url).pathname;

/** The image's architecture name for this machine (Docker's TARGETARCH). */
export const HOST_ARCH = Deno.build.arch === "aarch64" ? "arm64" : "amd64";

/** The image's files besides the binary for `arch`, from deploy/rootfs-<arch>.txt. */
export async function imageFiles(arch = HOST_ARCH): Promise<string[]> {
  const text = await Deno.readTextFile(`${REPO}deploy/rootfs-${arch}.txt`);
  return text.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
}
