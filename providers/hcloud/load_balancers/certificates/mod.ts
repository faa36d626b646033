/**
 * Certificates for HTTPS balancers: uploaded ones by name or ID, managed (Let's Encrypt) ones made
 * for a Service, and those uploaded from TLS Secrets, each with its owner and its clean-up.
 *
 * @module
 */
export { LbCertificates } from "./certificates.ts";
export type { OwnerContext } from "./certificate_owner.ts";
export { TlsCertificates } from "./tls_secrets.ts";
export { ServicePorts, type ServicePortsResult } from "./ports.ts";
