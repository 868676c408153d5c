import { describe, expect, it } from "vitest";
import { makeEvent, makeScope } from "../test-support";
import { outcomeOfEvent } from "./settlement";

describe("outcomeOfEvent", () => {
  const event = (overrides: Parameters<typeof makeEvent>[2]) =>
    makeEvent(makeScope(), { counters: [] }, overrides);
  it("counts nothing for denied requests and failures without tokens, settles everything else", () => {
    expect(outcomeOfEvent(event({ decision: "deny" }))).toBe("released");
    expect(outcomeOfEvent(event({ status_code: 500, input_tokens: 0, output_tokens: 0 }))).toBe("released");
    expect(outcomeOfEvent(event({ status_code: 500 }))).toBe("settled");
    expect(outcomeOfEvent(event({}))).toBe("settled");
  });
});
