import { makeEvent } from "@agentnet/testkit";
import { describe, expect, it } from "vitest";
import { outcomeOfEvent } from "./settlement";

describe("outcomeOfEvent", () => {
  it("counts nothing for denied requests and failures without tokens, settles everything else", () => {
    expect(outcomeOfEvent(makeEvent({ decision: "deny" }))).toBe("released");
    expect(outcomeOfEvent(makeEvent({ status_code: 500, input_tokens: 0, output_tokens: 0 }))).toBe(
      "released",
    );
    expect(outcomeOfEvent(makeEvent({ status_code: 500 }))).toBe("settled");
    expect(outcomeOfEvent(makeEvent({}))).toBe("settled");
  });
});
