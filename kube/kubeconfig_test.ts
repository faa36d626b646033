import { assert, assertEquals, assertRejects } from "../testing/assert.ts";
import { loadInClusterConfig, loadKubeConfig, resolveConnection } from "./kubeconfig.ts";
import { ConfigError } from "../lib/config_error.ts";

const b64 = (s: string) => btoa(s);

Deno.test("kubeconfig: several files merge first-wins; data and file credentials; relative paths", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/certs`);
    await Deno.writeTextFile(`${dir}/certs/ca.pem`, "CA-FROM-FILE");
    await Deno.writeTextFile(`${dir}/token`, "tok");
    await Deno.writeTextFile(
      `${dir}/a.yaml`,
      `
apiVersion: v1
kind: Config
current-context: first
contexts:
- name: first
  context: {cluster: c1, user: u1}
clusters:
- name: c1
  cluster: {server: "https://a:6443/", certificate-authority: certs/ca.pem}
users:
- name: u1
  user: {client-certificate-data: ${b64("CERT")}, client-key-data: ${b64("KEY")}}
`,
    );
    await Deno.writeTextFile(
      `${dir}/b.yaml`,
      `
current-context: ignored
contexts:
- name: second
  context: {cluster: c2, user: u2}
- name: first
  context: {cluster: nope, user: nope}
clusters:
- name: c2
  cluster: {server: "https://b", insecure-skip-tls-verify: true, certificate-authority-data: ${b64("CA2")}}
users:
- name: u2
  user: {tokenFile: token}
`,
    );
    const first = await loadKubeConfig([`${dir}/a.yaml`, `${dir}/b.yaml`]);
    assertEquals([first.server, first.caPem, first.clientCertPem, first.clientKeyPem], [
      "https://a:6443",
      "CA-FROM-FILE",
      "CERT",
      "KEY",
    ]);
    const second = await loadKubeConfig([`${dir}/a.yaml`, `${dir}/b.yaml`], "second");
    assertEquals([second.server, second.insecureSkipTlsVerify, second.tokenFile, second.caPem], [
      "https://b",
      true,
      `${dir}/token`,
      "CA2",
    ]);
    const viaEnv = await resolveConnection({
      env: { KUBECONFIG: `${dir}/b.yaml:${dir}/a.yaml` },
      context: "second",
    });
    assertEquals(viaEnv.server, "https://b");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kubeconfig: bad input names the file and the problem", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const write = (name: string, text: string) => Deno.writeTextFile(`${dir}/${name}`, text);
    await write("list.yaml", "- a\n- b\n");
    await write("noctx.yaml", "clusters: []\n");
    await write(
      "exec.yaml",
      `current-context: x
contexts: [{name: x, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "https://c"}}]
users: [{name: u, user: {exec: {command: aws}}}]
`,
    );
    await write(
      "badca.yaml",
      `current-context: x
contexts: [{name: x, context: {cluster: c}}]
clusters: [{name: c, cluster: {server: "https://c", certificate-authority: missing.pem}}]
`,
    );
    const message = async (files: string[], ctx?: string) =>
      (await assertRejects(() => loadKubeConfig(files, ctx), ConfigError)).message;
    assert((await message([`${dir}/none.yaml`])).includes(`${dir}/none.yaml: file not found`));
    assert((await message([`${dir}/list.yaml`])).includes("not a YAML mapping"));
    assert((await message([`${dir}/noctx.yaml`])).includes("no current-context"));
    assert((await message([`${dir}/exec.yaml`])).includes('user "u" uses exec/auth-provider'));
    assert((await message([`${dir}/badca.yaml`])).includes(`cannot read ${dir}/missing.pem`));
    assert((await message([`${dir}/exec.yaml`], "other")).includes('context "other" not found'));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("in-cluster config reads the service-account folder and keeps the token file for re-reads", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/token`, "t");
    await Deno.writeTextFile(`${dir}/ca.crt`, "CA");
    const conn = await loadInClusterConfig({
      KUBERNETES_SERVICE_HOST: "fd00::1",
      KUBERNETES_SERVICE_PORT: "443",
    }, dir);
    assertEquals([conn.server, conn.tokenFile, conn.caPem], ["https://[fd00::1]:443", `${dir}/token`, "CA"]);
    await assertRejects(
      () => loadInClusterConfig({ KUBERNETES_SERVICE_HOST: "h" }, `${dir}/missing`),
      ConfigError,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
