# Development cluster on Hetzner Cloud for deno-ccm, after part 2 of "Building a Kubernetes
# cloud-controller-manager": k3s without its cloud controller, kubelets with the external cloud
# provider, Cilium with native routing over the private network (routes come from deno-ccm).
#
#   export TF_VAR_hcloud_token=...   # needs terraform, k3sup and helm on your machine
#   terraform init && terraform apply
#   export KUBECONFIG=$(terraform output -raw kubeconfig)
#   skaffold dev                     # builds deploy/Containerfile and deploys deploy/

terraform {
  required_providers {
    hcloud     = { source = "hetznercloud/hcloud", version = "~> 1.54" }
    tls        = { source = "hashicorp/tls", version = "~> 4.0" }
    local      = { source = "hashicorp/local", version = "~> 2.5" }
    null       = { source = "hashicorp/null", version = "~> 3.2" }
    helm       = { source = "hashicorp/helm", version = "~> 2.17" }
    kubernetes = { source = "hashicorp/kubernetes", version = "~> 2.36" }
  }
}

variable "hcloud_token" {
  type      = string
  sensitive = true
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
  default = "cpx21"
}

variable "k3s_channel" {
  type    = string
  default = "stable"
}

locals {
  kubeconfig_path = "${path.module}/.dev-env/kubeconfig"
  ssh_key_path    = "${path.module}/.dev-env/ssh_key"
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
  token = var.hcloud_token
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

provider "helm" {
  kubernetes {
    config_path = local.kubeconfig_path
  }
}

provider "kubernetes" {
  config_path = local.kubeconfig_path
}

resource "helm_release" "cilium" {
  name       = "cilium"
  repository = "https://helm.cilium.io"
  chart      = "cilium"
  namespace  = "kube-system"
  values = [yamlencode({
    ipam                  = { mode = "kubernetes" }
    routingMode           = "native"
    ipv4NativeRoutingCIDR = local.cluster_cidr
    k8sServiceHost        = local.control_ip
    k8sServicePort        = 6443
  })]
  depends_on = [null_resource.k3s_control]
}

resource "kubernetes_secret_v1" "hcloud" {
  metadata {
    name      = "hcloud"
    namespace = "kube-system"
  }
  data = {
    token   = var.hcloud_token
    network = hcloud_network.cluster.id
  }
  depends_on = [null_resource.k3s_control]
}

output "kubeconfig" {
  value = local.kubeconfig_path
}
