import { describe, expect, it } from "vitest";
import { grantDraft, grantSummary, grantsBody, parsePatterns, patternsText, pickServers } from "./mcp-grants";

describe("the policy form's MCP grants", () => {
  it("reads patterns split by commas or lines, each once; empty is none", () => {
    expect(parsePatterns(" get_*, search\nlist_issues\r\nsearch ,")).toEqual({
      patterns: ["get_*", "search", "list_issues"],
    });
    expect(parsePatterns(" \n ")).toEqual({ patterns: [] });
    expect(patternsText(["get_*", "search"])).toBe("get_*, search");
  });

  it("names a pattern the API would refuse; a space is not a separator", () => {
    expect(parsePatterns("get_*, get issue")).toEqual({
      error: "get issue: must be letters, digits, _ . - / and the wildcard *",
    });
  });

  it("keeps a server's filters while it stays picked, and starts a new one with every tool", () => {
    const drafts = [
      { server_id: "a", include: "", exclude: "delete_*" },
      { server_id: "b", include: "get_*", exclude: "" },
    ];
    expect(pickServers(drafts, ["b", "c"])).toEqual([
      { server_id: "b", include: "get_*", exclude: "" },
      { server_id: "c", include: "", exclude: "" },
    ]);
  });

  it("builds the body's grants, or errors at the paths the API uses", () => {
    const drafts = [
      grantDraft({ server_id: "a", include_tools: [], exclude_tools: ["delete_*"] }),
      { server_id: "b", include: "get issue", exclude: "" },
    ];
    expect(grantsBody(drafts.slice(0, 1))).toEqual({
      grants: [{ server_id: "a", include_tools: [], exclude_tools: ["delete_*"] }],
      errors: {},
    });
    expect(grantsBody(drafts).errors).toEqual({
      "mcp_servers.1.include_tools": "get issue: must be letters, digits, _ . - / and the wildcard *",
    });
  });

  it("sums a grant up for the policies list", () => {
    expect(grantSummary({ server_id: "a", include_tools: [], exclude_tools: [] }, "issues")).toBe("issues");
    expect(
      grantSummary(
        { server_id: "a", include_tools: ["get_*", "search"], exclude_tools: ["get_secret"] },
        "issues",
      ),
    ).toBe("issues (only get_*, search; not get_secret)");
  });
});
