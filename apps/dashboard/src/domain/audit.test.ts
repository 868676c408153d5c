import { describe, expect, it } from "vitest";
import {
  AUDIT_PAGE_SIZE,
  actorLabel,
  auditExportQuery,
  auditListQuery,
  auditViewParams,
  changedFields,
  jsonLines,
  NO_AUDIT_FILTERS,
  parseAuditView,
  verificationText,
} from "./audit";

describe("the audit view in the URL", () => {
  it("round-trips every filter, the page and the open entry", () => {
    const view = {
      filters: {
        actor: "ada@example.com",
        action: "groups",
        target_type: "group",
        target_id: "g1",
        outcome: "refused",
        from: "2025-03-10T00:00:00.000Z",
        to: "2025-03-11T00:00:00.000Z",
      },
      before_seq: 120,
      seq: 118,
    };
    expect(parseAuditView(new URLSearchParams(auditViewParams(view).toString()))).toEqual(view);
  });

  it("leaves out what is unset, and values the API would refuse", () => {
    const view = { filters: NO_AUDIT_FILTERS, before_seq: undefined, seq: undefined };
    expect(auditViewParams(view).toString()).toBe("");
    expect(
      parseAuditView(
        new URLSearchParams(
          "outcome=maybe&target_type=planet&from=yesterday&before_seq=-3&seq=1.5&action=%20x%20",
        ),
      ),
    ).toEqual({ filters: { ...NO_AUDIT_FILTERS, action: "x" }, before_seq: undefined, seq: undefined });
  });

  it("asks the API for one page before the cursor, and exports the whole filtered trail", () => {
    const view = parseAuditView(new URLSearchParams("action=policies&before_seq=40&seq=39"));
    expect(auditListQuery(view)).toMatchObject({
      action: "policies",
      before_seq: 40,
      limit: AUDIT_PAGE_SIZE,
    });
    expect(auditExportQuery(view.filters, "csv")).toEqual({
      ...NO_AUDIT_FILTERS,
      format: "csv",
      action: "policies",
    });
  });
});

describe("an entry's actor and change", () => {
  it("names the actor by email, else by user id", () => {
    expect(actorLabel({ user_id: "u1", email: "ada@example.com" })).toBe("ada@example.com");
    expect(actorLabel({ user_id: "u1" })).toBe("u1");
    expect(actorLabel({})).toBe("—");
  });

  it("finds the top-level fields an update changed, added and removed ones too, whatever the key order", () => {
    const before = { id: "g1", name: "eng", limits: { a: 1, b: 2 }, old: true };
    const after = { id: "g1", limits: { b: 2, a: 1 }, name: "platform", new: "x" };
    expect(changedFields(before, after)).toEqual(["name", "old", "new"]);
  });

  it("highlights nothing for a create or a delete, where all of it changed", () => {
    expect(changedFields(undefined, { id: "g1" })).toEqual([]);
    expect(changedFields({ id: "g1" }, undefined)).toEqual([]);
  });

  it("cuts JSON at its top-level fields, flagging the changed ones, nested values indented", () => {
    expect(jsonLines({ id: "g1", name: "platform", tags: ["a"] }, ["name"])).toEqual([
      { text: "{", changed: false },
      { text: '  "id": "g1",', changed: false },
      { text: '  "name": "platform",', changed: true },
      { text: '  "tags": [\n    "a"\n  ]', changed: false },
      { text: "}", changed: false },
    ]);
    expect(jsonLines({}, [])).toEqual([{ text: "{}", changed: false }]);
    expect(jsonLines("(secret)", [])).toEqual([{ text: '"(secret)"', changed: false }]);
  });
});

describe("a verification in words", () => {
  it("says an intact chain with how many entries and which seqs", () => {
    expect(verificationText({ intact: true, checked: 6, first_seq: 1, last_seq: 6 })).toBe(
      "Intact: 6 entries checked (seq 1–6)",
    );
    expect(verificationText({ intact: true, checked: 1, first_seq: 3, last_seq: 3 })).toBe(
      "Intact: 1 entry checked (seq 3)",
    );
    expect(verificationText({ intact: true, checked: 0 })).toBe("Intact: 0 entries checked");
  });

  it("names the first broken link and why", () => {
    const broken = (reason: "hash_mismatch" | "prev_hash_mismatch" | "seq_gap") =>
      verificationText({ intact: false, checked: 3, first_seq: 1, broken: { seq: 4, id: "e4", reason } });
    expect(broken("hash_mismatch")).toBe(
      "Broken at seq 4 (entry e4): this entry was edited. 3 entries before it verified.",
    );
    expect(broken("prev_hash_mismatch")).toContain("an entry before it was replaced");
    expect(broken("seq_gap")).toContain("an entry before it was removed");
  });
});
