/**
 * A Kubernetes transport fenced by a leadership term: every request carries the term's signal, so
 * when leadership ends, a request still on its way (a hung connection behind a broken network) is
 * cancelled instead of landing after the next leader has taken over. A deposed leader's status
 * patch arriving late would overwrite the new leader's (explorer workload 4: a leader cut off from
 * the apiserver for 20 s wrote two Service statuses after its successor had the lease). Closing
 * it leaves the shared transport open.
 *
 * @module
 */
import type { KubeRequest, KubeTransport } from "./transport.ts";

/** `transport`, refusing and cancelling every request once `term` aborts. */
export function fencedTransport(transport: KubeTransport, term: AbortSignal): KubeTransport {
  return {
    send: (request: KubeRequest) => {
      if (term.aborted) return Promise.reject(term.reason);
      const signal = request.signal ? AbortSignal.any([request.signal, term]) : term;
      return transport.send({ ...request, signal });
    },
    close: () => {},
  };
}
