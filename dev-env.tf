# Development cluster on Hetzner Cloud for deno-ccm, after part 2 of "Building a Kubernetes
# cloud-controller-manager": k3s without its cloud controller, kubelets with the external cloud
# provider, Cilium with native routing over the private network (routes come from deno-ccm).
#
#   export TF_VAR_hcloud_token=...   # needs terraform, k3sup, helm and kubectl on your machine
#   terraform init && terraform apply
#   export KUBECONFIG=$(terraform output -raw kubeconfig)
#   skaffold dev                     # builds deploy/Containerfile and deploys deploy/
#
# One `terraform apply` does it all: what needs the cluster (Cilium, the CCM's Secret) is installed by a
# local-exec step after k3sup has written the kubeconfig, not by the helm/kubernetes providers, whose
# configuration would be read before that file exists. `hcloud_endpoint` points everything at another
# API (the simulator: `terraform plan -var hcloud_endpoint=http://127.0.0.1:8080/v1`).

terraform {
  required_providers {
    hcloud = { source = "hetznercloud/hcloud", version = "~> 1.54" }
    tls    = { source = "hashicorp/tls", version = "~> 4.0" }
    local  = { source = "hashicorp/local", version = "~> 2.5" }
    null   = { source = "hashicorp/null", version = "~> 3.2" }
  }
}

variable "hcloud_token" {
  type      = string
  sensitive = true
}

variable "hcloud_endpoint" {
  type        = string
  default     = null
  description = "Hetzner Cloud API endpoint; null means the public API"
}

variable "name" {
  type    = string
  default = "deno-ccm-dev"
}

variable "worker_count" {
  type    = number
  default = 2
}

variable "location" {
  type    = string
  default = "fsn1"
}

variable "server_type" {
  type    = string
  default = "cpx22" # cpx21 and cx22 are deprecated
}

variable "cilium_version" {
  type    = string
  default = "1.18.2"
}

variable "k3s_channel" {
  type    = string
  default = "stable"
}

locals {
  kubeconfig_path = "${abspath(path.module)}/.dev-env/kubeconfig"
  ssh_key_path    = "${abspath(path.module)}/.dev-env/ssh_key"
  control_ip      = "10.0.0.2"
  cluster_cidr    = "10.244.0.0/16"
  k3s_server_args = join(" ", [
    "--disable-cloud-controller",
    "--kubelet-arg cloud-provider=external",
    "--flannel-backend=none",
    "--disable-network-policy",
    "--disable=servicelb,traefik,local-storage",
    "--cluster-cidr ${local.cluster_cidr}",
    "--node-ip ${local.control_ip}",
  ])
}

provider "hcloud" {
  token    = var.hcloud_token
  endpoint = var.hcloud_endpoint
}

resource "tls_private_key" "ssh" {
  algorithm = "ED25519"
}

resource "local_sensitive_file" "ssh_key" {
  content         = tls_private_key.ssh.private_key_openssh
  filename        = local.ssh_key_path
  file_permission = "0600"
}

resource "hcloud_ssh_key" "dev" {
  name       = var.name
  public_key = tls_private_key.ssh.public_key_openssh
}

resource "hcloud_network" "cluster" {
  name     = var.name
  ip_range = "10.0.0.0/8"
}

resource "hcloud_network_subnet" "nodes" {
  network_id   = hcloud_network.cluster.id
  type         = "cloud"
  network_zone = "eu-central"
  ip_range     = "10.0.0.0/24"
}

resource "hcloud_server" "control" {
  name        = "${var.name}-control"
  server_type = var.server_type
  image       = "ubuntu-24.04"
  location    = var.location
  ssh_keys    = [hcloud_ssh_key.dev.id]
  network {
    network_id = hcloud_network.cluster.id
    ip         = local.control_ip
  }
  depends_on = [hcloud_network_subnet.nodes]
}

resource "hcloud_server" "worker" {
  count       = var.worker_count
  name        = "${var.name}-worker-${count.index + 1}"
  server_type = var.server_type
  image       = "ubuntu-24.04"
  location    = var.location
  ssh_keys    = [hcloud_ssh_key.dev.id]
  network {
    network_id = hcloud_network.cluster.id
    ip         = cidrhost("10.0.0.0/24", count.index + 3)
  }
  depends_on = [hcloud_network_subnet.nodes]
}

resource "null_resource" "k3s_control" {
  triggers = { server = hcloud_server.control.id }
  provisioner "local-exec" {
    command = "k3sup install --ip ${hcloud_server.control.ipv4_address} --ssh-key ${local.ssh_key_path} --local-path ${local.kubeconfig_path} --k3s-channel ${var.k3s_channel} --k3s-extra-args '${local.k3s_server_args}'"
  }
  depends_on = [local_sensitive_file.ssh_key]
}

resource "null_resource" "k3s_worker" {
  count    = var.worker_count
  triggers = { server = hcloud_server.worker[count.index].id }
  provisioner "local-exec" {
    command = "k3sup join --ip ${hcloud_server.worker[count.index].ipv4_address} --server-ip ${hcloud_server.control.ipv4_address} --ssh-key ${local.ssh_key_path} --k3s-channel ${var.k3s_channel} --k3s-extra-args '--kubelet-arg cloud-provider=external --node-ip ${cidrhost("10.0.0.0/24", count.index + 3)}'"
  }
  depends_on = [null_resource.k3s_control]
}

# Cilium (pinned) and the CCM's Secret, once the control plane answers. The token reaches kubectl
# through the environment, never the command line.
resource "null_resource" "cluster_addons" {
  triggers = { control = null_resource.k3s_control.id, cilium = var.cilium_version }
  provisioner "local-exec" {
    environment = {
      KUBECONFIG   = local.kubeconfig_path
      HCLOUD_TOKEN = var.hcloud_token
    }
    command = join(" && ", [
      "helm upgrade --install cilium cilium --repo https://helm.cilium.io --version ${var.cilium_version} --namespace kube-system --set ipam.mode=kubernetes --set routingMode=native --set ipv4NativeRoutingCIDR=${local.cluster_cidr} --set k8sServiceHost=${local.control_ip} --set k8sServicePort=6443",
      "kubectl -n kube-system create secret generic hcloud --from-literal=token=\"$HCLOUD_TOKEN\" --from-literal=network=${hcloud_network.cluster.id} --dry-run=client -o yaml | kubectl apply -f -",
    ])
  }
  depends_on = [null_resource.k3s_control]
}

output "kubeconfig" {
  value = local.kubeconfig_path
}
