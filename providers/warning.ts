/**
 * A problem a provider reports without failing: its own file, so that the provider errors and the
 * contract, which both name it, do not import each other.
 *
 * @module
 */

/** A problem the controller reports as a Warning event on the Service, without failing. */
export interface ProviderWarning {
  /** The event's reason, CamelCase (e.g. `MaxTargetsReached`). */
  reason: string;
  /** The event's message: names the field and value concerned, never a secret. */
  message: string;
  /** The Node the warning is about (recorded on that Node, where the official CCM puts it). */
  node?: string;
}
