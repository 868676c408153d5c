import { type Amount, NO_AMOUNT } from "@agentnet/caps";
import { computeCost } from "@agentnet/pricing";
import { captured } from "../domain/capture";
import { interruptedUsage } from "../domain/estimate";
import type { RequestRecord } from "../events/build";
import type { Admitted, Answered, Candidate } from "./stages";

/**
 * What an answered request used and costs, and what of its texts is kept, written on its row. An
 * answer that did not complete (the client left, or a cap cut it) is charged no less than its
 * prompt estimate and what it streamed.
 */
export function account(admitted: Admitted, answered: Answered, { pricing }: Candidate): RequestRecord {
  const { record } = admitted.received;
  const usage =
    answered.outcome === "answered"
      ? answered.usage
      : interruptedUsage(answered.usage, admitted.tokens.input_tokens, answered.streamedOutputTokens());
  record.status = answered.status;
  record.stream = answered.stream || record.stream;
  record.denyReason = answered.outcome === "cut" ? (admitted.capped?.cutReason ?? "") : "";
  record.usage = usage;
  record.cost = computeCost(usage, pricing.rates, pricing.shape);
  if (admitted.capture.capture) {
    record.prompt = captured(admitted.prompt, admitted.capture);
    record.completion = captured(answered.completion, admitted.capture);
  }
  record.responseModel = answered.responseModel;
  return record;
}

/** What a request is charged on its counters: its usage once answered, else nothing. */
export function chargeOf(record: RequestRecord): Amount {
  const { usage, cost } = record;
  if (!usage || !cost) return NO_AMOUNT;
  return { tokens: usage.input_tokens + usage.output_tokens, costNanos: cost.cost_nanos };
}
