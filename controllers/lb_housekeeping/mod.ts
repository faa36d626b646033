/**
 * The balancers' housekeeping room: orphans swept, missing balancers recreated (or held), balancers
 * changed outside the CCM repaired (keeper.ts). The Service controller runs it beside its own loops,
 * through the hooks it is given.
 *
 * @module
 */
export {
  CONFIRM_RECREATE,
  type HousekeepingFlags,
  type HousekeepingHooks,
  LoadBalancerHousekeeping,
} from "./keeper.ts";
