/**
 * The kubelet-serving CSR approver's room: requests approved only for what the cloud records of the
 * Node's machine (csr_approver.ts), with the checks of each request (csr_checks.ts).
 *
 * @module
 */
export { csrApproverController, type CsrFlags } from "./csr_approver.ts";
