import { assertEquals } from "../testing/assert.ts";
import { MAX_SECRET_FILE_BYTES, readSecretFile, readSecretFileSync } from "./secret_file.ts";

Deno.test("secret files: a small regular file is read; a device, a FIFO, a folder or a big file is refused at once (probe P7)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/token`, "abc\n");
    assertEquals(readSecretFileSync(`${dir}/token`), "abc\n");
    assertEquals(await readSecretFile(`${dir}/token`), "abc\n");
    await Deno.symlink(`${dir}/token`, `${dir}/link`); // a Secret's mount is symlinks
    assertEquals(await readSecretFile(`${dir}/link`), "abc\n");
    await Deno.writeTextFile(`${dir}/big`, "x".repeat(MAX_SECRET_FILE_BYTES + 1));
    const fifo = new Deno.Command("mkfifo", { args: [`${dir}/fifo`] }).outputSync();
    assertEquals(fifo.success, true, "mkfifo");
    const refused = async (path: string) => {
      try {
        await readSecretFile(path);
        return "read";
      } catch (err) {
        return (err as Error).message;
      }
    };
    assertEquals(
      await refused("/dev/zero"),
      "/dev/zero is not a regular file (a device, FIFO, socket or directory); mount the Secret's key as a file",
    );
    assertEquals((await refused(`${dir}/fifo`)).includes("is not a regular file"), true);
    assertEquals((await refused(dir)).includes("is not a regular file"), true);
    assertEquals((await refused(`${dir}/big`)).includes(`more than the ${MAX_SECRET_FILE_BYTES}`), true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
