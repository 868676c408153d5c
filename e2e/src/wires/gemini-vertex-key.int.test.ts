import { describe, expect, it } from "vitest";
import { expectPricedRow, type GeminiStack, MODEL, PROJECT, startGeminiStack } from "./gemini-stack";
import { useWireStack } from "./wire-stack";

let gemini: GeminiStack;
useWireStack(startGeminiStack, (started) => {
  gemini = started;
});

describe("a vertex_api provider keyed by a service-account key", () => {
  it("sends the vendor a token the proxy minted from the key, never the key or the agentnet token", async () => {
    const serviceAccount = gemini.tokens.serviceAccount({ projectId: PROJECT });
    const { account, provider, seenBefore } = await gemini.googleAccount("vertex_api", {
      apiKey: serviceAccount.json,
    });

    const answer = await gemini
      .genai(account.token)
      .models.generateContent({ model: MODEL, contents: "say hi" });

    expect(answer.text).toBe(gemini.google.reply);
    const seen = gemini.google.seen.slice(seenBefore);
    expect(seen).toHaveLength(1);
    const bearer = seen[0]?.headers.authorization?.replace(/^Bearer /, "") ?? "";
    expect(gemini.tokens.accepts(bearer)).toBe(true);
    expect(gemini.tokens.subjectOf(bearer)).toBe(serviceAccount.email);
    const sent = JSON.stringify([seen[0]?.headers, seen[0]?.query, seen[0]?.body]);
    expect(sent).not.toContain(account.token);
    expect(sent).not.toContain(serviceAccount.key.private_key.split("\n")[1]);
    const [row, ...more] = await gemini.rows(account, 1);
    expect(more).toEqual([]);
    expectPricedRow(row, provider, false);
  });

  it("refreshes a token that expires between requests without a failed request", async () => {
    const serviceAccount = gemini.tokens.serviceAccount({ projectId: PROJECT });
    const { account } = await gemini.googleAccount("vertex_api", { apiKey: serviceAccount.json });
    const refusedBefore = gemini.google.refused;
    gemini.tokens.lifetimeSeconds = 2;
    try {
      const ai = gemini.genai(account.token);
      for (let i = 0; i < 4; i++) {
        const answer = await ai.models.generateContent({ model: MODEL, contents: `turn ${i}` });
        expect(answer.text).toBe(gemini.google.reply);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    } finally {
      gemini.tokens.lifetimeSeconds = 3_600;
    }
    expect(
      gemini.tokens.mints.filter((email) => email === serviceAccount.email).length,
    ).toBeGreaterThanOrEqual(2);
    // No request reached the vendor with an expired token.
    expect(gemini.google.refused).toBe(refusedBefore);
    const found = await gemini.rows(account, 4);
    expect(found.map((row) => row.status_code)).toEqual([200, 200, 200, 200]);
  });
});
