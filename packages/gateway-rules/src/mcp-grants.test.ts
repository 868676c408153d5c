import { describe, expect, it } from "vitest";
import { grantAllowsTool, isToolGranted, reachableMcpServers, toolPatternMatches } from "./mcp-grants";

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
) => ({
  id,
  enabled,
  source_groups,
  mcp_servers,
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
    { id: "srv-docs", enabled: true },
    { id: "srv-db", enabled: true },
    { id: "srv-off", enabled: false },
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
    expect(both && isToolGranted(both, "restart")).toBe(true);
    expect(both && isToolGranted(both, "read_rows")).toBe(true);
    expect(both && isToolGranted(both, "drop_table")).toBe(false);
    const [engOnly] = reachableMcpServers(servers, policies, ["grp-eng"]);
    expect(engOnly && isToolGranted(engOnly, "restart")).toBe(false);
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
});
