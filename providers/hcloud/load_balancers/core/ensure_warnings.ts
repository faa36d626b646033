/**
 * What ensure says besides its own outcome, as the official CCM says it: the type left unconfigured
 * (on every sync, whether or not it fails), and with a refused value the warnings HCCM gives before
 * it reaches that value (see `HccmStage`), plus what else about the Service needs fixing, so one
 * edit fixes all.
 *
 * @module
 */
import type { ProviderWarning } from "../../../provider.ts";
import { earliestStage, HccmStage, type LoadBalancerDefaults } from "../spec/mod.ts";
import type { ReadService } from "./request.ts";
import type { Service } from "kubernetes-types/core/v1.d.ts";
import { unsupportedPorts } from "./desired.ts";
import { checkServiceFields } from "./service_fields.ts";
import { LB_ANNOTATION_PREFIX } from "../../names.ts";

/**
 * `LoadBalancerTypeUnconfigured`, unless a type is set (by annotation or default), the balancer is
 * co-managed (its type is its maker's), or a value refused earlier than HCCM resolves the type.
 */
export function typeUnconfigured(read: ReadService, defaults: LoadBalancerDefaults): ProviderWarning[] {
  const stage = earliestStage(read.invalid) ?? HccmStage.Ingress;
  if (read.spec.typeAnnotated || defaults.type || read.spec.attachTo || stage < HccmStage.Create) return [];
  return [{
    reason: "LoadBalancerTypeUnconfigured",
    message: "Load Balancer Type unconfigured: this will be required in the future, set it with the " +
      `annotation "${LB_ANNOTATION_PREFIX}type" or cluster-wide with the environment variable ` +
      '"HCLOUD_LOAD_BALANCERS_TYPE"; using lb11',
  }];
}

/**
 * With a failed sync of a Service with refused values: the non-TCP ports HCCM reports when it gets
 * as far as building services, and the Service's other problems (a typo'd annotation, source ranges).
 */
export function refusalCompanions(service: Service, read: ReadService): ProviderWarning[] {
  if (!read.invalid.size) return [];
  const stage = earliestStage(read.invalid) ?? HccmStage.Ingress;
  const ports = stage >= HccmStage.Services ? unsupportedPorts(service) : [];
  const fields = checkServiceFields(service, read.spec, 1).warnings.filter((w) =>
    w.reason !== "NothingToServe"
  );
  return [...ports, ...fields];
}
