import type { ApiFlavor } from "@agentnet/contracts";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../domain/json";
import { editForVendor as edit, matchRoute, type Route } from "./index";
import { VERTEX_ANTHROPIC_VERSION } from "./vertex";

const route = (path: string): Route => {
  const matched = matchRoute(path);
  if (!matched) throw new Error(`no route ${path}`);
  return matched;
};

/** The body edit for one candidate, no betas sent unless said. */
const editForVendor = (
  body: JsonObject,
  flavor: ApiFlavor,
  route: Route,
  model: string,
  streams: boolean,
  betas: { betas?: string; acceptedBetas?: readonly string[] } = {},
) =>
  edit(body, flavor, {
    route,
    model,
    streams,
    betas: betas.betas,
    acceptedBetas: betas.acceptedBetas,
  });

describe("editForVendor: the caller's body as the vendor takes it", () => {
  it("asks for a streamed chat's usage, except on Mistral, which refuses the field", () => {
    const chat = route("/v1/chat/completions");
    const openai = { model: "gpt", stream: true };
    editForVendor(openai, "azure_openai", chat, "deployment", true);
    expect(openai).toEqual({ model: "deployment", stream: true, stream_options: { include_usage: true } });
    const mistral = { model: "mistral-small-latest", stream: true };
    editForVendor(mistral, "mistral", chat, "mistral-small-latest", true);
    expect(mistral).toEqual({ model: "mistral-small-latest", stream: true });
  });

  it("takes the model out of a Claude body for Vertex and names Vertex's version", () => {
    const body = { model: "claude-sonnet-4-5", max_tokens: 10, messages: [] };
    expect(editForVendor(body, "vertex", route("/v1/messages"), "claude-sonnet-4-5@20250929", false)).toEqual(
      {},
    );
    expect(body).toEqual({ max_tokens: 10, messages: [], anthropic_version: VERTEX_ANTHROPIC_VERSION });
    const counting = { messages: [] };
    editForVendor(counting, "vertex", route("/v1/messages/count_tokens"), "claude-x@1", false);
    expect(counting).toMatchObject({ model: "claude-x@1" });
  });

  it("turns a Vertex-style Claude body into the Messages API's for Anthropic", () => {
    const body = { anthropic_version: VERTEX_ANTHROPIC_VERSION, max_tokens: 10, messages: [] };
    expect(editForVendor(body, "anthropic", route("/v1/messages"), "claude-sonnet-4-5", true)).toEqual({
      "anthropic-version": "2023-06-01",
    });
    expect(body).toEqual({ model: "claude-sonnet-4-5", max_tokens: 10, messages: [] });
  });

  it("passes a Gemini body as it is", () => {
    const body = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
    editForVendor(
      body,
      "vertex",
      route("/v1beta/models/gemini-2.5-pro:generateContent"),
      "gemini-2.5-pro",
      true,
    );
    expect(body).toEqual({ contents: [{ role: "user", parts: [{ text: "hi" }] }] });
  });

  it("puts Claude's betas in a Bedrock body, where Bedrock takes them", () => {
    const betas = { betas: "context-1m-2025-08-07,interleaved-thinking-2025-05-14" };
    const messages = route("/v1/messages");
    const body: JsonObject = { model: "x", stream: true, messages: [] };
    expect(
      editForVendor(
        body,
        "bedrock",
        messages,
        "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
        true,
        betas,
      ),
    ).toEqual({});
    expect(body).toEqual({
      messages: [],
      anthropic_version: "bedrock-2023-05-31",
      anthropic_beta: ["context-1m-2025-08-07", "interleaved-thinking-2025-05-14"],
    });
  });

  it("leaves out of a Bedrock body the betas the provider does not accept, and takes them to Anthropic as its header", () => {
    const invoke = route("/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke");
    const acceptedBetas = ["interleaved-thinking-2025-05-14"];
    const sent = {
      anthropic_version: "bedrock-2023-05-31",
      anthropic_beta: ["interleaved-thinking-2025-05-14", "new-beta"],
      messages: [],
    };
    const toBedrock: JsonObject = { ...sent };
    editForVendor(toBedrock, "bedrock", invoke, "anthropic.claude-sonnet-4-5-20250929-v1:0", false, {
      acceptedBetas,
    });
    expect(toBedrock.anthropic_beta).toEqual(["interleaved-thinking-2025-05-14"]);
    const toAnthropic: JsonObject = { ...sent };
    expect(
      editForVendor(toAnthropic, "anthropic", invoke, "claude-sonnet-4-5", true, { acceptedBetas }),
    ).toEqual({
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "interleaved-thinking-2025-05-14",
    });
    expect(toAnthropic).toEqual({ messages: [], model: "claude-sonnet-4-5", stream: true });
  });

  it("leaves out of a Converse body's additionalModelRequestFields the betas the provider does not accept, in a new object", () => {
    const converse = route("/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse");
    const fields = { anthropic_beta: ["new-beta", "interleaved-thinking-2025-05-14"], top_k: 5 };
    const body: JsonObject = { messages: [], additionalModelRequestFields: fields };
    const options = { acceptedBetas: ["interleaved-thinking-2025-05-14"] };
    editForVendor(body, "bedrock", converse, "anthropic.claude-sonnet-4-5-20250929-v1:0", false, options);
    expect(body.additionalModelRequestFields).toEqual({
      top_k: 5,
      anthropic_beta: ["interleaved-thinking-2025-05-14"],
    });
    expect(fields.anthropic_beta).toHaveLength(2);
    const none: JsonObject = { messages: [], additionalModelRequestFields: { anthropic_beta: ["new-beta"] } };
    editForVendor(none, "bedrock", converse, "anthropic.claude-sonnet-4-5-20250929-v1:0", true, options);
    expect(none.additionalModelRequestFields).toEqual({});
  });
});
