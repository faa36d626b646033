/**
 * The Hetzner Cloud API room: the generated types (`api_types.ts`, from `openapi.json` by `gen.ts`;
 * regenerate, never edit), the typed client over a small transport (rate-limit budget, retries,
 * bounded answers), the credentials, the action waiter, narrow shapes for the answers read most,
 * and the API's error. Used by the Hetzner provider and by the simulator; it knows nothing of
 * Kubernetes or of the provider contract.
 *
 * @module
 */
export type { components, operations, paths } from "./api_types.ts";
export {
  type FetchResult,
  HcloudClient,
  type HcloudClientOptions,
  MAX_PAGES,
  type Schemas,
  STREAMED,
} from "./client.ts";
export {
  createTransport,
  ENDPOINT_HEADER,
  type HcloudTransport,
  type InstrumentedTransport,
  type RateLimitState,
  type TransportOptions,
} from "./transport.ts";
export { MAX_RESPONSE_BYTES, MAX_STREAMED_BYTES } from "./bounded_answer.ts";
export {
  Credentials,
  type CredentialsOptions,
  tokenFormatProblem,
  type TokenVerifier,
} from "./credentials.ts";
export { type ActionLike, ActionWaiter } from "./action_waiter.ts";
/** The metrics registry the transport counts into, and its instruments (`lib/metrics.ts`). */
export type { Counter, Gauge, Histogram, Labels, Metric, Registry } from "../lib/metrics.ts";
/** The typed client's types (openapi-fetch), which `HcloudClient.api` and `call` expose. */
export type { Client } from "openapi-fetch";
export { type NetworkInfo, type ServerInfo, toNetworkInfo, toServerInfo } from "./shapes.ts";
export { CloudApiError } from "./errors.ts";
