import type { Amount } from "@agentnet/caps";
import type { ProxyContext } from "../context";
import { type Pricing, STREAM_OUTPUT_STEP_TOKENS, streamStepAmount } from "../domain/estimate";
import { capDenyReason } from "../http/caps";
import type { StreamGrowth } from "../upstream/forward";
import type { CappedRequest } from "./stages";

/**
 * A capped stream's growth: it holds one output step beyond what it streamed, asks for the next
 * step once half of the current one is used (so a refusal cuts the stream within its hold), and
 * stops growing at the request's own output cap.
 */
export class CappedStreamGrowth implements StreamGrowth {
  private readonly step: Amount;

  constructor(
    private readonly ctx: ProxyContext,
    private readonly accountId: string,
    private readonly capped: CappedRequest,
    pricing: Pricing,
    promptTokens: number,
  ) {
    this.step = streamStepAmount(pricing, promptTokens);
  }

  extendAt(): number {
    const { heldOutput, worstOutput } = this.capped;
    return heldOutput >= worstOutput ? Number.POSITIVE_INFINITY : heldOutput - STREAM_OUTPUT_STEP_TOKENS / 2;
  }

  async extend(): Promise<boolean> {
    const { capped, step } = this;
    const extended = await this.ctx.leases.extend(this.accountId, capped.hold, capped.plans, step);
    if (extended.kind === "held") {
      capped.heldOutput += STREAM_OUTPUT_STEP_TOKENS;
      return true;
    }
    capped.cutReason =
      extended.kind === "refused"
        ? capDenyReason(extended.plan, extended.used, step)
        : "consumption.unavailable";
    return false;
  }
}
