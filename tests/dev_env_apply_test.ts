/**
 * The tutorial's dev environment applied for real: terraform v1.13.3 with the hetznercloud/hcloud
 * provider v1.68.0, both built from the Go module proxy (hack/terraform/build.sh), plans, applies and
 * destroys dev-env.tf's Hetzner resources against the simulator.
 *
 * Stubbed, in this test only: the other providers (hashicorp/tls, local, null: not in the module
 * proxy, their registry unreachable) and what they do — the SSH key pair is a fixed public key
 * instead of `tls_private_key`, and the k3sup/helm/kubectl steps (`null_resource`, which need the
 * servers' network) are left out. Every `hcloud_*` resource, variable and local of dev-env.tf is
 * taken as written.
 */
import { assert, assertEquals } from "../testing/assert.ts";
import { startTestSim } from "../testing/sim_harness.ts";
import { DEFAULT_SIM_TOKEN } from "../hcloud_sim/simulator.ts";

const REPO = new URL("..", import.meta.url).pathname;
const PROVIDER_VERSION = "1.68.0";
/** A well-formed ed25519 public key (the simulator checks the format; no one holds its private key). */
const PUBLIC_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ8oAg6IiyDtKbyrvtCoKT7EobwSEAAXA8A3ZQ6qC0hG dev";

/** dev-env.tf's top-level blocks that hold Hetzner resources, their variables and locals. */
function hcloudPart(source: string): string {
  const blocks: string[] = [];
  const lines = source.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^(resource|variable|locals|provider|output|terraform)\b/.test(lines[i])) continue;
    let end = i;
    if (!lines[i].trimEnd().endsWith("}")) { while (lines[end] !== "}") end++; }
    const block = lines.slice(i, end + 1).join("\n");
    i = end;
    if (/^(variable|locals) /.test(block) || /^provider "hcloud"/.test(block)) blocks.push(block);
    else if (/^resource "hcloud_/.test(block)) {
      blocks.push(block.replaceAll("tls_private_key.ssh.public_key_openssh", "var.ssh_public_key"));
    }
  }
  return [
    'terraform {\n  required_providers {\n    hcloud = { source = "hetznercloud/hcloud" }\n  }\n}',
    'variable "ssh_public_key" {\n  type = string\n}',
    ...blocks,
  ].join("\n\n") + "\n";
}

Deno.test({
  name:
    "dev-env.tf: terraform and the hcloud provider apply and destroy its Hetzner resources against the simulator",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const built = await new Deno.Command("bash", {
      args: [`${REPO}hack/terraform/build.sh`],
      stderr: "inherit",
    })
      .output();
    if (!built.success) {
      throw new Error(
        "hack/terraform/build.sh failed: terraform and its hcloud provider need Go and the Go module proxy",
      );
    }
    const [terraform, provider] = new TextDecoder().decode(built.stdout).trim().split("\n");
    const dir = await Deno.makeTempDir({ prefix: "dev-env-" });
    const s = await startTestSim();
    try {
      // The provider from a local mirror: `terraform init` needs no registry.
      const mirror =
        `${dir}/mirror/registry.terraform.io/hetznercloud/hcloud/${PROVIDER_VERSION}/linux_amd64`;
      await Deno.mkdir(mirror, { recursive: true });
      await Deno.symlink(provider, `${mirror}/terraform-provider-hcloud_v${PROVIDER_VERSION}`);
      await Deno.writeTextFile(
        `${dir}/cli.tfrc`,
        `provider_installation {\n  filesystem_mirror {\n    path = "${dir}/mirror"\n  }\n}\n`,
      );
      await Deno.mkdir(`${dir}/config`);
      await Deno.writeTextFile(
        `${dir}/config/main.tf`,
        hcloudPart(await Deno.readTextFile(`${REPO}dev-env.tf`)),
      );
      const tf = async (...args: string[]) => {
        const out = await new Deno.Command(terraform, {
          args,
          cwd: `${dir}/config`,
          env: {
            TF_CLI_CONFIG_FILE: `${dir}/cli.tfrc`,
            CHECKPOINT_DISABLE: "1",
            TF_IN_AUTOMATION: "1",
            TF_VAR_hcloud_token: DEFAULT_SIM_TOKEN,
            TF_VAR_hcloud_endpoint: s.sim.endpoint,
            TF_VAR_ssh_public_key: PUBLIC_KEY,
            HCLOUD_ENDPOINT: s.sim.endpoint,
            HETZNER_ENDPOINT: s.sim.robotEndpoint,
          },
          stdout: "piped",
          stderr: "piped",
        }).output();
        const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
        if (!out.success) throw new Error(`terraform ${args[0]} failed:\n${text}`);
        return text;
      };
      await tf("init", "-input=false", "-no-color");
      const plan = await tf("plan", "-input=false", "-no-color");
      assert(plan.includes("Plan: 6 to add, 0 to change, 0 to destroy."), plan.slice(-400));
      const apply = await tf("apply", "-auto-approve", "-input=false", "-no-color");
      assert(apply.includes("Apply complete! Resources: 6 added"), apply.slice(-400));
      const created = [...apply.matchAll(/^(\S+): Creation complete/gm)].map((m) => m[1]).sort();
      console.log(`terraform created: ${created.join(", ")}`);
      assertEquals(created, [
        "hcloud_network.cluster",
        "hcloud_network_subnet.nodes",
        "hcloud_server.control",
        "hcloud_server.worker[0]",
        "hcloud_server.worker[1]",
        "hcloud_ssh_key.dev",
      ]);

      const w = s.sim.world;
      const servers = [...w.servers.values()].sort((a, b) => a.name.localeCompare(b.name));
      assertEquals(servers.map((x) => x.name), [
        "deno-ccm-dev-control",
        "deno-ccm-dev-worker-1",
        "deno-ccm-dev-worker-2",
      ]);
      assertEquals(servers.map((x) => x.private_net[0]?.ip), ["10.0.0.2", "10.0.0.3", "10.0.0.4"]);
      assert(servers.every((x) => x.server_type.name === "cpx22" && x.datacenter.location.name === "fsn1"));
      const network = w.findNetwork("deno-ccm-dev")!;
      assertEquals([network.ip_range, network.subnets.map((x) => x.ip_range)], ["10.0.0.0/8", [
        "10.0.0.0/24",
      ]]);

      // Nothing changes on a second plan: what the simulator answers is what the provider wrote.
      const again = await tf("plan", "-input=false", "-no-color", "-detailed-exitcode").catch((e) =>
        String(e)
      );
      assert(again.includes("No changes."), again.slice(-600));

      const destroy = await tf("destroy", "-auto-approve", "-input=false", "-no-color");
      assert(destroy.includes("Destroy complete! Resources: 6 destroyed."), destroy.slice(-400));
      console.log(
        `terraform destroyed: ${[...destroy.matchAll(/^(\S+): Destruction complete/gm)].length} resources`,
      );
      assertEquals(w.servers.size, 0);
      assertEquals(w.findNetwork("deno-ccm-dev"), undefined);
    } finally {
      await s.finish();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
