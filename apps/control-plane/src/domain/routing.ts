import { AppError, type ErrorDetail, type PolicyBody } from "@agentnet/contracts";

/**
 * A weight names a provider the policy grants: one for any other provider would never be used
 * and most likely means the admin removed a provider and forgot its weight, so it is refused
 * rather than kept silently.
 */
export function assertWeightsNameDestinations(body: PolicyBody): void {
  const destinations = new Set(body.destination_provider_ids);
  const strays = Object.keys(body.routing?.weights ?? {}).filter((id) => !destinations.has(id));
  if (strays.length === 0) return;
  const details: ErrorDetail[] = strays.map((id) => ({
    path: `routing.weights.${id}`,
    message: `provider ${id} is not one of the policy's destination_provider_ids`,
  }));
  throw new AppError(
    400,
    "policy.routing_weight_not_destination",
    `routing.weights may only name the policy's destination providers; not: ${strays.join(", ")}`,
    details,
  );
}
