import { describe, expect, it } from "vitest";
import { credentialBody, credentialDraft, credentialSummary } from "./mcp-credential";

const stored = { kind: "header", header_name: "Authorization" } as const;
/** A draft's OAuth fields, blank: what every draft of another kind carries. */
const NO_OAUTH = { token_url: "", client_id: "", scope: "" };

describe("the MCP server form's write-only credential", () => {
  it("starts empty, on the stored header's name or Authorization", () => {
    expect(credentialDraft(undefined)).toEqual({
      kind: "none",
      header_name: "Authorization",
      value: "",
      ...NO_OAUTH,
    });
    expect(credentialDraft({ kind: "header", header_name: "X-Api-Key" })).toEqual({
      kind: "header",
      header_name: "X-Api-Key",
      value: "",
      ...NO_OAUTH,
    });
  });

  it("sends nothing when the value is left empty on the stored header: the stored one is kept", () => {
    expect(credentialBody(credentialDraft(stored), stored)).toEqual({});
  });

  it("sends a per-user credential as its header's name alone: members set their own values", () => {
    const perUser = { kind: "per_user", header_name: "X-User-Token" } as const;
    expect(credentialDraft(perUser)).toEqual({ ...perUser, value: "", ...NO_OAUTH });
    expect(credentialBody({ ...perUser, value: "ignored", ...NO_OAUTH }, stored)).toEqual({
      credential: perUser,
    });
    expect(credentialSummary(perUser)).toBe("each member's own X-User-Token");
  });

  it("sends a new value whole, with its header name", () => {
    expect(
      credentialBody({ kind: "header", header_name: "X-Api-Key", value: "k2", ...NO_OAUTH }, stored),
    ).toEqual({
      credential: { kind: "header", header_name: "X-Api-Key", value: "k2" },
    });
  });

  it("sends none to drop a stored value, and on create", () => {
    expect(
      credentialBody({ kind: "none", header_name: "Authorization", value: "", ...NO_OAUTH }, stored),
    ).toEqual({
      credential: { kind: "none" },
    });
    expect(credentialBody(credentialDraft(undefined), undefined)).toEqual({ credential: { kind: "none" } });
  });

  it("asks for a value when there is none stored to keep, or it would move to another header", () => {
    expect(
      credentialBody({ kind: "header", header_name: "Authorization", value: "", ...NO_OAUTH }, undefined),
    ).toEqual({
      error: "enter the header's value",
    });
    expect(
      credentialBody(
        { kind: "header", header_name: "Authorization", value: "", ...NO_OAUTH },
        { kind: "none" },
      ),
    ).toEqual({ error: "enter the header's value" });
    expect(
      credentialBody({ kind: "header", header_name: "X-Api-Key", value: "", ...NO_OAUTH }, stored),
    ).toEqual({
      error: "enter the value again to send it as X-Api-Key",
    });
  });

  it("sends an OAuth client whole with a new secret, keeps it unchanged without one, and asks again to change it", () => {
    const client = {
      kind: "oauth_client_credentials",
      token_url: "https://auth.example.com/token",
      client_id: "agentnet",
      scope: "tools.read",
    } as const;
    const draft = credentialDraft(client);
    expect(draft).toEqual({ ...client, header_name: "Authorization", value: "" });
    expect(credentialBody(draft, client)).toEqual({});
    expect(credentialBody({ ...draft, value: "s3cret" }, client)).toEqual({
      credential: { ...client, client_secret: "s3cret" },
    });
    expect(credentialBody({ ...draft, scope: "" }, client)).toEqual({
      error: "enter the client secret again to change the OAuth client",
    });
    expect(credentialBody({ ...draft }, undefined)).toEqual({ error: "enter the client secret" });
    expect(credentialSummary(client)).toBe("OAuth client agentnet");
  });

  it("shows the kind and header name, never a value", () => {
    expect(credentialSummary(stored)).toBe("header Authorization");
    expect(credentialSummary({ kind: "none" })).toBe("none");
  });
});
