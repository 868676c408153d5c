import { describe, expect, it } from "vitest";
import {
  grantAllowsTool,
  isToolGranted,
  reachableMcpServers,
  toolGrant,
  toolPatternMatches,
} from "./mcp-grants";

const grant = (server_id: string, include_tools: string[] = [], exclude_tools: string[] = []) => ({
  server_id,
  include_tools,
  exclude_tools,
});
const policy = (
  id: string,
  source_groups: string[],
  mcp_servers: ReturnType<typeof grant>[],
  enabled = true,
  guardrail_ids: string[] = [],
) => ({ id, enabled, source_groups, mcp_servers, guardrail_ids });
const NO_GUARDRAILS = new Map();
/** A guardrail whose only check is a tool blocklist. */
const blocking = (id: string, patterns: string[], enabled = true) => ({
  id,
  checks: {
    model_allowlist: { enabled: false, models: [] },
    prompt_capture: { enabled: false, redact_pii: false },
    tool_blocklist: { enabled, patterns },
  },
});

describe("toolPatternMatches", () => {
  it("matches a pattern without a wildcard only to the same name", () => {
    expect(toolPatternMatches("echo", "echo")).toBe(true);
    expect(toolPatternMatches("echo", "echo2")).toBe(false);
    expect(toolPatternMatches("echo", "Echo")).toBe(false);
  });

  it("lets * stand for any run of characters, none included", () => {
    expect(toolPatternMatches("get_*", "get_issue")).toBe(true);
    expect(toolPatternMatches("get_*", "get_")).toBe(true);
    expect(toolPatternMatches("get_*", "list_issues")).toBe(false);
    expect(toolPatternMatches("*_issue", "get_issue")).toBe(true);
    expect(toolPatternMatches("*", "anything.at/all")).toBe(true);
    expect(toolPatternMatches("a*b*c", "a_b_b_c")).toBe(true);
    expect(toolPatternMatches("a*b*c", "acb")).toBe(false);
  });

  it("does not let a prefix and a suffix overlap in the name", () => {
    expect(toolPatternMatches("ab*ba", "aba")).toBe(false);
    expect(toolPatternMatches("ab*ba", "abba")).toBe(true);
  });

  it("treats the other characters of a pattern literally", () => {
    expect(toolPatternMatches("repo.get", "repo.get")).toBe(true);
    expect(toolPatternMatches("repo.get", "repoXget")).toBe(false);
  });
});

describe("grantAllowsTool", () => {
  it("grants every tool when the include list is empty", () => {
    expect(grantAllowsTool(grant("s"), "anything")).toBe(true);
  });

  it("grants only included tools when the include list names some", () => {
    expect(grantAllowsTool(grant("s", ["read_*"]), "read_file")).toBe(true);
    expect(grantAllowsTool(grant("s", ["read_*"]), "write_file")).toBe(false);
  });

  it("never grants an excluded tool, even one the include list names", () => {
    expect(grantAllowsTool(grant("s", ["*_file"], ["write_*"]), "write_file")).toBe(false);
    expect(grantAllowsTool(grant("s", [], ["delete_*"]), "delete_repo")).toBe(false);
  });
});

describe("reachableMcpServers", () => {
  const servers = [
    { id: "srv-docs", name: "docs", enabled: true },
    { id: "srv-db", name: "db", enabled: true },
    { id: "srv-off", name: "off", enabled: false },
  ];

  it("denies by default: a server no covering policy grants is not reached", () => {
    const policies = [policy("p1", ["grp-eng"], [grant("srv-docs")])];
    expect(reachableMcpServers(servers, policies, ["grp-eng"]).map((r) => r.server.id)).toEqual(["srv-docs"]);
    expect(reachableMcpServers(servers, policies, ["grp-ops"])).toEqual([]);
  });

  it("ignores disabled policies and disabled servers", () => {
    const policies = [
      policy("p1", ["grp-eng"], [grant("srv-db")], false),
      policy("p2", ["grp-eng"], [grant("srv-off")]),
    ];
    expect(reachableMcpServers(servers, policies, ["grp-eng"])).toEqual([]);
  });

  it("adds grants up across covering policies: a tool passes when any grant lets it through", () => {
    const policies = [
      policy("p1", ["grp-eng"], [grant("srv-db", ["read_*"])]),
      policy("p2", ["grp-oncall"], [grant("srv-db", ["restart"])]),
    ];
    const [both] = reachableMcpServers(servers, policies, ["grp-eng", "grp-oncall"]);
    expect(both?.grants.map((g) => g.policy.id)).toEqual(["p1", "p2"]);
    expect(both && isToolGranted(both, "restart", NO_GUARDRAILS)).toBe(true);
    expect(both && isToolGranted(both, "read_rows", NO_GUARDRAILS)).toBe(true);
    expect(both && isToolGranted(both, "drop_table", NO_GUARDRAILS)).toBe(false);
    const [engOnly] = reachableMcpServers(servers, policies, ["grp-eng"]);
    expect(engOnly && isToolGranted(engOnly, "restart", NO_GUARDRAILS)).toBe(false);
  });

  it("lists servers in the order of the first policy granting them", () => {
    const policies = [
      policy("p1", ["grp-eng"], [grant("srv-db"), grant("srv-docs")]),
      policy("p2", ["grp-eng"], [grant("srv-docs")]),
    ];
    expect(reachableMcpServers(servers, policies, ["grp-eng"]).map((r) => r.server.id)).toEqual([
      "srv-db",
      "srv-docs",
    ]);
  });

  it("blocks a tool an enabled blocklist of the granting policy's guardrails names as {server}__{tool}", () => {
    const guardrails = new Map([
      ["g-no-deletes", blocking("g-no-deletes", ["*delete*"])],
      ["g-off", blocking("g-off", ["*"], false)],
    ]);
    const blocked = [policy("p1", ["grp-eng"], [grant("srv-db")], true, ["g-no-deletes", "g-off"])];
    const [reach] = reachableMcpServers(servers, blocked, ["grp-eng"]);
    if (!reach) throw new Error("not reached");
    expect(toolGrant(reach, "delete_rows", guardrails)).toEqual({ refused: "guardrail.tool_blocked" });
    expect(toolGrant(reach, "read_rows", guardrails)).toEqual({ policy: blocked[0] });
    // Another policy granting the tool without the guardrail lets it through: grants add up.
    const open = [...blocked, policy("p2", ["grp-eng"], [grant("srv-db", ["delete_rows"])])];
    const [either] = reachableMcpServers(servers, open, ["grp-eng"]);
    if (!either) throw new Error("not reached");
    expect(toolGrant(either, "delete_rows", guardrails)).toEqual({ policy: open[1] });
    expect(toolGrant(either, "drop_table", guardrails)).toEqual({ policy: open[0] });
  });

  it("names the server in what a blocklist matches, so one pattern can block one server's tools", () => {
    const guardrails = new Map([["g", blocking("g", ["db__*"])]]);
    const policies = [policy("p1", ["grp-eng"], [grant("srv-db"), grant("srv-docs")], true, ["g"])];
    const [db, docs] = reachableMcpServers(servers, policies, ["grp-eng"]);
    if (!db || !docs) throw new Error("not reached");
    expect(isToolGranted(db, "search", guardrails)).toBe(false);
    expect(isToolGranted(docs, "search", guardrails)).toBe(true);
  });
});
