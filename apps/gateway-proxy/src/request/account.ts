import { type Amount, amountOfUsage, NO_AMOUNT } from "@agentnet/caps";
import { computeCost } from "@agentnet/pricing";
import { captured } from "../domain/capture";
import { interruptedUsage } from "../domain/estimate";
import type { RequestRecord } from "../events/build";
import type { Accounted, Admitted, Answered, Candidate } from "./stages";

/**
 * What an answered request used and costs, and what of its texts is kept. An answer that did not
 * complete (the client left, or a cap cut it) is charged no less than its prompt estimate and what
 * it streamed.
 */
export function account(admitted: Admitted, answered: Answered, { pricing }: Candidate): Accounted {
  const usage =
    answered.outcome === "answered"
      ? answered.usage
      : interruptedUsage(answered.usage, admitted.tokens.input_tokens, answered.streamedOutputTokens());
  const { capture } = admitted;
  return {
    status: answered.status,
    stream: answered.stream || admitted.received.stream,
    denyReason: answered.outcome === "cut" ? (admitted.capped?.cutReason ?? "") : "",
    usage,
    cost: computeCost(usage, pricing.rates, pricing.shape),
    prompt: capture.capture ? captured(admitted.prompt, capture) : undefined,
    completion: capture.capture ? captured(answered.completion, capture) : undefined,
    responseModel: answered.responseModel,
  };
}

/** What a request is charged on its counters: its usage once answered, else nothing. */
export function chargeOf(record: RequestRecord): Amount {
  const { usage, cost } = record;
  if (!usage || !cost) return NO_AMOUNT;
  return amountOfUsage(usage, cost.cost_nanos);
}
