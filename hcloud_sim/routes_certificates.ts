/**
 * Simulated `/certificates`: uploaded ones described by their PEM (domain names, SHA-256
 * fingerprint and validity read from the certificate; a private key that does not match is
 * refused), managed ones issued by an action (failing for a domain under `.invalid`); in use while a
 * load balancer service names them.
 *
 * @module
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { BodyReader, faults } from "./http_kit.ts";
import { validLabels } from "../lib/label_selector.ts";
import { byId, listResponse, route, type SimRoute } from "./router.ts";
import { resourceActionRoutes } from "./routes_servers.ts";
import type { Certificate, World } from "./world.ts";

const labelsCheck = (v: Record<string, unknown>) =>
  validLabels(v) ? undefined : "contains an invalid label key or value";

/** What a PEM certificate says of itself, or a problem with it or its key. */
export function describePem(pem: string, privateKey?: string): {
  domains: string[];
  fingerprint: string;
  notBefore: string;
  notAfter: string;
} | { problem: string; field: "certificate" | "private_key" } {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem);
  } catch {
    return { problem: "is not a valid PEM certificate", field: "certificate" };
  }
  if (privateKey !== undefined) {
    try {
      if (!cert.checkPrivateKey(createPrivateKey(privateKey))) {
        return { problem: "does not belong to the certificate", field: "private_key" };
      }
    } catch {
      return { problem: "is not a valid PEM private key", field: "private_key" };
    }
  }
  const sans = (cert.subjectAltName ?? "").split(", ").filter((s) => s.startsWith("DNS:")).map((s) =>
    s.slice(4)
  );
  const cn = cert.subject.match(/(?:^|\n)CN=([^\n]+)/)?.[1];
  return {
    domains: sans.length ? sans : cn ? [cn] : [],
    fingerprint: cert.fingerprint256.toLowerCase(),
    notBefore: new Date(cert.validFrom).toISOString(),
    notAfter: new Date(cert.validTo).toISOString(),
  };
}

/** The routes of this file. */
export function certificateRoutes(): SimRoute[] {
  const get = (world: World, id: string) => byId(world.certificates, id, "certificate");
  return [
    route("GET", "/certificates", (req, _p, ctx) => {
      const types = req.query.getAll("type");
      return listResponse(
        [...ctx.world.certificates.values()].map((c) => usedBy(ctx.world, c)),
        req,
        ctx,
        "certificates",
        undefined,
        (c) => types.length === 0 || types.includes(c.type!),
      );
    }),
    route("POST", "/certificates", (req, _p, { world }) => {
      const r = new BodyReader(req.body);
      const name = r.string("name", { required: true });
      const type = r.string("type", {
        check: (v) => ["uploaded", "managed"].includes(v) ? undefined : "must be uploaded or managed",
      }) ?? "uploaded";
      const labels = r.object("labels", { check: labelsCheck });
      let domains: string[] = [];
      let pem: string | undefined;
      let described: Exclude<ReturnType<typeof describePem>, { problem: string }> | undefined;
      if (type === "uploaded") {
        pem = r.string("certificate", { required: true });
        const key = r.string("private_key", { required: true });
        if (pem && key) {
          const d = describePem(pem, key);
          if ("problem" in d) r.fail(d.field, d.problem);
          else described = d;
        }
        domains = described?.domains ?? [];
      } else {
        domains = (r.array("domain_names", {
          required: true,
          check: (v) =>
            v.length && v.every((d) => typeof d === "string")
              ? undefined
              : "must be a non-empty list of domains",
        }) ?? []) as string[];
      }
      if (
        name && [...world.certificates.values()].some((c) => c.name === name)
      ) throw faults.uniqueness("name");
      r.done();
      const now = world.now();
      const certificate: Certificate = {
        id: world.id(),
        name: name!,
        type: type as "uploaded",
        labels: (labels ?? {}) as Record<string, string>,
        certificate: pem ?? null,
        created: new Date(now).toISOString(),
        domain_names: domains,
        fingerprint: described?.fingerprint ?? null,
        not_valid_before: described?.notBefore ?? new Date(now).toISOString(),
        not_valid_after: described?.notAfter ?? new Date(now + 90 * 86_400_000).toISOString(),
        status: type === "managed" ? managedStatus(domains) : null,
        used_by: [],
      };
      world.certificates.set(certificate.id, certificate);
      const action = type === "managed"
        ? world.startAction("create_certificate", [{ id: certificate.id, type: "certificate" }])
        : null;
      return { status: 201, body: { certificate, action } };
    }),
    route(
      "GET",
      "/certificates/{id}",
      (_req, p, { world }) => ({ status: 200, body: { certificate: usedBy(world, get(world, p.id)) } }),
    ),
    route("PUT", "/certificates/{id}", (req, p, { world }) => {
      const certificate = get(world, p.id);
      const r = new BodyReader(req.body);
      const name = r.string("name");
      const labels = r.object("labels", { check: labelsCheck });
      r.done();
      if (name) certificate.name = name;
      if (labels) certificate.labels = labels as Record<string, string>;
      return { status: 200, body: { certificate: usedBy(world, certificate) } };
    }),
    route("DELETE", "/certificates/{id}", (_req, p, { world }) => {
      const certificate = get(world, p.id);
      if (usedBy(world, certificate).used_by.length) {
        throw faults.code(422, "certificate_in_use", "certificate is still used by a load balancer");
      }
      world.certificates.delete(certificate.id);
      return { status: 204 };
    }),
    ...resourceActionRoutes("certificates", "certificate", (w) => w.certificates),
  ];
}

/**
 * Issuance of a managed certificate: Let's Encrypt cannot validate a domain under `.invalid`
 * (RFC 2606), so such a certificate's issuance fails, as it does for a domain not pointed at
 * the load balancer.
 */
function managedStatus(domains: string[]): NonNullable<Certificate["status"]> {
  const bad = domains.find((d) => d === "invalid" || d.endsWith(".invalid"));
  return bad
    ? {
      issuance: "failed",
      renewal: "unavailable",
      error: { code: "dns_zone_not_found", message: `DNS zone not found: ${bad}` },
    }
    : { issuance: "completed", renewal: "unavailable", error: null };
}

function usedBy(world: World, certificate: Certificate): Certificate {
  const used = [...world.loadBalancers.values()]
    .filter((lb) => lb.services.some((s) => s.http?.certificates?.includes(certificate.id)))
    .map((lb) => ({ id: lb.id, type: "load_balancer" }));
  return { ...certificate, used_by: used };
}
