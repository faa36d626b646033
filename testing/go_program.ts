/**
 * Builds one of the repo's Go check programs (`hack/<name>/`, pinned to a client library from the
 * Go module proxy, cached by `hack/go_program_build.sh`) and returns the binary's path; a missing
 * Go or proxy fails with a message saying what is needed.
 *
 * @module
 */

const REPO = new URL("..", import.meta.url).pathname;

/** The path of the built `hack/<name>` program. */
export async function buildGoProgram(name: string): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: [`${REPO}hack/go_program_build.sh`, name],
    stderr: "piped",
  })
    .output()
    .catch((err) => {
      throw new Error(`cannot run hack/go_program_build.sh ${name}: ${err.message}`);
    });
  if (!out.success) {
    throw new Error(
      `building hack/${name} failed (it needs Go and the Go module proxy; https://go.dev/dl):\n${
        new TextDecoder().decode(out.stderr)
      }`,
    );
  }
  return new TextDecoder().decode(out.stdout).trim();
}
