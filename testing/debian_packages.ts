/**
 * Debian packages of any architecture, downloaded with apt into a private folder (the system's
 * sources, a private package index: nothing on the machine changes), and the files they hold.
 *
 * @module
 */

const text = new TextDecoder();

async function run(cmd: string, args: string[], cwd?: string): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")}: ${text.decode(out.stderr).trim()}`);
  return text.decode(out.stdout);
}

/**
 * The paths (as installed, without the leading ".") of the files and links in `packages` for
 * Debian architecture `arch` (`amd64`, `arm64`).
 */
export async function debianPackageFiles(arch: string, packages: string[]): Promise<Set<string>> {
  const dir = await Deno.makeTempDir({ prefix: `deb-${arch}-` });
  try {
    for (const sub of ["lists/partial", "cache/archives/partial"]) {
      await Deno.mkdir(`${dir}/${sub}`, { recursive: true });
    }
    const options = [
      "-q",
      "-o",
      `Dir::State::Lists=${dir}/lists`,
      "-o",
      `Dir::Cache=${dir}/cache`,
      "-o",
      `APT::Architecture=${arch}`,
      "-o",
      `APT::Architectures::=${arch}`,
      "-o",
      "APT::Sandbox::User=root",
    ];
    await run("apt-get", [...options, "update"]).catch((err) => {
      throw new Error(`cannot read Debian's package index for ${arch} (apt-get and Debian's mirror needed)`, {
        cause: err,
      });
    });
    await run("apt-get", [...options, "download", ...packages.map((p) => `${p}:${arch}`)], dir);
    const files = new Set<string>();
    for (const entry of Deno.readDirSync(dir)) {
      if (!entry.name.endsWith(".deb")) continue;
      for (const line of (await run("dpkg-deb", ["--contents", `${dir}/${entry.name}`])).split("\n")) {
        const path = line.match(/ \.(\/\S+)/)?.[1];
        if (path) files.add(path);
      }
    }
    return files;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
