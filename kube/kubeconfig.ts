/**
 * Finding out how to reach the apiserver: kubeconfig files (merged like kubectl) and in-cluster config.
 *
 * @module
 */
import { parse as parseYaml } from "yaml";
import { ConfigError } from "../lib/config_error.ts";

/** Everything the transport needs to reach and authenticate to one apiserver. */
export interface ClusterConnection {
  /** Base URL, e.g. `https://127.0.0.1:6443`. */
  server: string;
  /** Extra trusted CA certificates (PEM). */
  caPem?: string;
  /** Client certificate and key (PEM) for mutual TLS. */
  clientCertPem?: string;
  clientKeyPem?: string;
  /** kubeconfig `insecure-skip-tls-verify`. */
  insecureSkipTlsVerify: boolean;
  /** A static bearer token. */
  token?: string;
  /** A file holding the bearer token, re-read when it rotates (service-account tokens do). */
  tokenFile?: string;
  /** Basic-auth credentials. */
  username?: string;
  password?: string;
  /** Where this came from, for messages: `kubeconfig /path (context x)` or `in-cluster`. */
  source: string;
}

/** Default mount point of the pod's service-account credentials. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

interface NamedEntry<T> {
  name: string;
  value: T;
  dir: string;
  file: string;
}
interface KubeConfigCluster {
  server?: string;
  "certificate-authority"?: string;
  "certificate-authority-data"?: string;
  "insecure-skip-tls-verify"?: boolean;
}
interface KubeConfigUser {
  "client-certificate"?: string;
  "client-certificate-data"?: string;
  "client-key"?: string;
  "client-key-data"?: string;
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  exec?: unknown;
  "auth-provider"?: unknown;
}
interface KubeConfigContext {
  cluster?: string;
  user?: string;
}

/** Options for {@link resolveConnection}. */
export interface ResolveOptions {
  /** `--kubeconfig`: one explicit file; wins over everything else. */
  kubeconfig?: string;
  /** `--context`: overrides `current-context`. */
  context?: string;
  /** Environment to read `KUBECONFIG`, `KUBERNETES_SERVICE_HOST/PORT` and `HOME` from (the caller reads it). */
  env: Record<string, string | undefined>;
  /** Service-account folder for in-cluster config (tests point it elsewhere). */
  serviceAccountDir?: string;
}

/**
 * Picks the connection the way operators expect: `--kubeconfig`, else `$KUBECONFIG` (several files
 * merged, first wins), else in-cluster when `KUBERNETES_SERVICE_HOST` is set, else `~/.kube/config`.
 */
export async function resolveConnection(options: ResolveOptions): Promise<ClusterConnection> {
  const env = options.env;
  if (options.kubeconfig) return await loadKubeConfig([options.kubeconfig], options.context);
  const fromEnv = (env.KUBECONFIG ?? "").split(":").filter((p) => p !== "");
  if (fromEnv.length > 0) return await loadKubeConfig(fromEnv, options.context);
  if (env.KUBERNETES_SERVICE_HOST) {
    return await loadInClusterConfig(env, options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR);
  }
  if (env.HOME) return await loadKubeConfig([`${env.HOME}/.kube/config`], options.context);
  throw new ConfigError(
    "no Kubernetes connection: pass --kubeconfig, set KUBECONFIG, or run in a pod (KUBERNETES_SERVICE_HOST)",
  );
}

/** Loads and merges kubeconfig files (first definition of a name wins) and resolves one context. */
export async function loadKubeConfig(paths: string[], contextOverride?: string): Promise<ClusterConnection> {
  const clusters = new Map<string, NamedEntry<KubeConfigCluster>>();
  const users = new Map<string, NamedEntry<KubeConfigUser>>();
  const contexts = new Map<string, NamedEntry<KubeConfigContext>>();
  let currentContext: string | undefined;
  for (const file of paths) {
    let doc: Record<string, unknown>;
    try {
      const text = await Deno.readTextFile(file);
      const parsed = parseYaml(text);
      if (parsed === null || parsed === undefined) continue;
      if (typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not a YAML mapping");
      doc = parsed as Record<string, unknown>;
    } catch (err) {
      const problem = err instanceof Deno.errors.NotFound
        ? "file not found"
        : err instanceof Deno.errors.PermissionDenied || err instanceof Deno.errors.NotCapable
        ? `not readable (${(err as Error).message.split(",")[0]})`
        : `cannot parse: ${(err as Error).message.split("\n")[0]}`;
      throw new ConfigError(`kubeconfig ${file}: ${problem}`, { cause: err });
    }
    const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) || "/" : ".";
    collect(doc, "clusters", "cluster", clusters, file, dir);
    collect(doc, "users", "user", users, file, dir);
    collect(doc, "contexts", "context", contexts, file, dir);
    if (!currentContext && typeof doc["current-context"] === "string" && doc["current-context"]) {
      currentContext = doc["current-context"];
    }
  }
  const files = paths.join(":");
  const contextName = contextOverride || currentContext;
  if (!contextName) throw new ConfigError(`kubeconfig ${files}: no current-context and no --context given`);
  const context = contexts.get(contextName);
  if (!context) throw new ConfigError(`kubeconfig ${files}: context "${contextName}" not found`);
  const clusterName = context.value.cluster ?? "";
  const cluster = clusters.get(clusterName);
  if (!cluster) {
    throw new ConfigError(
      `kubeconfig ${context.file}: context "${contextName}" names unknown cluster "${clusterName}"`,
    );
  }
  const server = cluster.value.server;
  if (!server || !/^https?:\/\//.test(server)) {
    throw new ConfigError(
      `kubeconfig ${cluster.file}: cluster "${clusterName}" has no valid server URL (got "${server ?? ""}")`,
    );
  }
  const user = context.value.user ? users.get(context.value.user) : undefined;
  if (context.value.user && !user) {
    throw new ConfigError(
      `kubeconfig ${context.file}: context "${contextName}" names unknown user "${context.value.user}"`,
    );
  }
  const u = user?.value ?? {};
  if (u.exec || u["auth-provider"]) {
    throw new ConfigError(
      `kubeconfig ${user!.file}: user "${
        user!.name
      }" uses exec/auth-provider credentials, which deno-ccm does not run; ` +
        "use a client certificate, token or tokenFile",
    );
  }
  const where = (entry: NamedEntry<unknown>, field: string) => `kubeconfig ${entry.file}: ${field}`;
  return {
    server: server.replace(/\/+$/, ""),
    caPem: await dataOrFile(cluster, "certificate-authority", where),
    insecureSkipTlsVerify: cluster.value["insecure-skip-tls-verify"] === true,
    clientCertPem: user ? await dataOrFile(user, "client-certificate", where) : undefined,
    clientKeyPem: user ? await dataOrFile(user, "client-key", where) : undefined,
    token: u.token || undefined,
    tokenFile: u.tokenFile ? absolute(u.tokenFile, user!.dir) : undefined,
    username: u.username,
    password: u.password,
    source: `kubeconfig ${files} (context ${contextName})`,
  };
}

/** In-cluster config: the service-account token (re-read on rotation), its CA, and the service env. */
export async function loadInClusterConfig(
  env: Record<string, string | undefined>,
  dir = SERVICE_ACCOUNT_DIR,
): Promise<ClusterConnection> {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT || "443";
  if (!host) throw new ConfigError("in-cluster config: KUBERNETES_SERVICE_HOST is not set");
  const tokenFile = `${dir}/token`;
  let caPem: string;
  try {
    await Deno.stat(tokenFile);
    caPem = await Deno.readTextFile(`${dir}/ca.crt`);
  } catch (err) {
    throw new ConfigError(
      `in-cluster config: cannot read ${dir}/token and ca.crt: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  const hostPart = host.includes(":") ? `[${host}]` : host;
  return {
    server: `https://${hostPart}:${port}`,
    caPem,
    insecureSkipTlsVerify: false,
    tokenFile,
    source: "in-cluster",
  };
}

function collect<T>(
  doc: Record<string, unknown>,
  listKey: string,
  itemKey: string,
  into: Map<string, NamedEntry<T>>,
  file: string,
  dir: string,
): void {
  const list = doc[listKey];
  if (list === undefined || list === null) return;
  if (!Array.isArray(list)) throw new ConfigError(`kubeconfig ${file}: "${listKey}" must be a list`);
  for (const item of list) {
    const name = item?.name;
    if (typeof name !== "string" || !name) {
      throw new ConfigError(`kubeconfig ${file}: an entry of "${listKey}" has no name`);
    }
    if (!into.has(name)) into.set(name, { name, value: (item[itemKey] ?? {}) as T, dir, file });
  }
}

async function dataOrFile(
  entry: NamedEntry<KubeConfigCluster | KubeConfigUser>,
  field: "certificate-authority" | "client-certificate" | "client-key",
  where: (entry: NamedEntry<unknown>, field: string) => string,
): Promise<string | undefined> {
  const value = entry.value as Record<string, unknown>;
  const data = value[`${field}-data`];
  if (typeof data === "string" && data) {
    try {
      return new TextDecoder().decode(
        Uint8Array.from(atob(data.replace(/\s+/g, "")), (c) => c.charCodeAt(0)),
      );
    } catch (err) {
      throw new ConfigError(`${where(entry, `${field}-data`)} of "${entry.name}" is not valid base64`, {
        cause: err,
      });
    }
  }
  const path = value[field];
  if (typeof path !== "string" || !path) return undefined;
  const full = absolute(path, entry.dir);
  try {
    return await Deno.readTextFile(full);
  } catch (err) {
    throw new ConfigError(
      `${where(entry, field)} of "${entry.name}": cannot read ${full}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}

function absolute(path: string, dir: string): string {
  return path.startsWith("/") ? path : `${dir}/${path}`;
}
