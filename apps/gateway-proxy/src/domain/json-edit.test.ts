import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { JsonObject } from "./json";
import { canonicalValues, editedJsonBytes } from "./json-edit";

/** Edits as the proxy makes them: top-level members replaced, removed or added on a shallow copy. */
function edit(text: string, change: (body: JsonObject) => void) {
  const body = JSON.parse(text) as JsonObject;
  const original = { ...body };
  change(body);
  const bytes = Buffer.from(text);
  const edited = editedJsonBytes(text, bytes, original, body);
  const result = edited.toString("utf8");
  // Unedited, the caller's bytes themselves go on.
  if (result === text) expect(edited).toBe(bytes);
  return { body, result };
}

describe("editedJsonBytes: the caller's bytes but for the members edited", () => {
  it("returns the text itself when nothing was edited", () => {
    const text = '{ "model" : "m",\n  "messages": [{"role":"user","content":"h\\u00e9"}] }';
    expect(edit(text, () => undefined).result).toBe(text);
    expect(edit(text, (body) => Object.assign(body, { model: "m" })).result).toBe(text);
  });

  it("keeps what JSON.stringify would change: key order, big integers, escapes", () => {
    const text =
      '{"tools":[{"input_schema":{"properties":{"b":{},"2":{}}}}],"seed":12345678901234567890,"s":"\\u00e9\\/","model":"a"}';
    const { result } = edit(text, (body) => {
      body.model = "b";
    });
    expect(result).toBe(
      '{"tools":[{"input_schema":{"properties":{"b":{},"2":{}}}}],"seed":12345678901234567890,"s":"\\u00e9\\/","model":"b"}',
    );
  });

  it("removes a member, writes a changed one where it was, appends a new one", () => {
    const text = '{"anthropic_version":"vertex-2023-10-16","model":"x","messages":[],"stream":true}';
    const { result } = edit(text, (body) => {
      delete body.anthropic_version;
      body.model = "claude";
      body.metadata = { user_id: "u1" };
    });
    expect(result).toBe('{"model":"claude","messages":[],"stream":true,"metadata":{"user_id":"u1"}}');
    expect(edit('{"a":1}', (body) => delete body.a).result).toBe("{}");
    expect(edit('{\n  "a": 1,\n  "b": 2\n}', (body) => delete body.a).result).toBe('{\n  "b": 2\n}');
    expect(edit('{\n  "a": 1,\n  "b": 2\n}', (body) => delete body.b).result).toBe('{\n  "a": 1\n}');
    expect(edit("{}", (body) => Object.assign(body, { a: 1 })).result).toBe('{"a":1}');
    expect(edit(" { } \n", (body) => Object.assign(body, { a: 1, b: [2] })).result).toBe(
      ' {"a":1,"b":[2] } \n',
    );
    expect(edit('{\n  "a": "}"\n}\n', (body) => Object.assign(body, { b: 2 })).result).toBe(
      '{\n  "a": "}","b":2\n}\n',
    );
  });

  it("cuts the bytes of a body with characters of several bytes where their text is", () => {
    const text = '{"system":"é€😀","model":"a","messages":[{"content":"naïve — ok"}],"n":1}';
    expect(edit(text, (body) => Object.assign(body, { model: "bé" })).result).toBe(
      '{"system":"é€😀","model":"bé","messages":[{"content":"naïve — ok"}],"n":1}',
    );
    expect(edit(text, (body) => delete body.messages).result).toBe('{"system":"é€😀","model":"a","n":1}');
  });

  it("writes a key the caller sent twice once, as JSON.parse reads it", () => {
    const { result } = edit('{"model":"a","x":1,"model":"b"}', (body) => {
      body.model = "c";
    });
    expect(result).toBe('{"model":"c","x":1}');
  });

  it("gives what the edited body is, and keeps every member it did not edit byte for byte", () => {
    const member = fc.tuple(fc.string({ maxLength: 6, unit: "binary" }), fc.jsonValue({ maxDepth: 3 }));
    fc.assert(
      fc.property(
        fc.uniqueArray(member, { selector: ([key]) => key, maxLength: 8 }),
        fc.nat(),
        fc.boolean(),
        fc.jsonValue({ maxDepth: 2 }),
        (members, pick, spaced, value) => {
          const source = Object.fromEntries(members);
          const text = spaced ? JSON.stringify(source, null, 2) : JSON.stringify(source);
          const keys = Object.keys(JSON.parse(text) as JsonObject).filter((key) => key !== "__proto__");
          const touched = keys.length === 0 ? undefined : keys[pick % keys.length];
          const { body, result } = edit(text, (edited) => {
            if (touched === undefined) return;
            if (pick % 3 === 0) delete edited[touched];
            else edited[touched] = value;
            if (pick % 2 === 0) edited["added key"] = value;
          });
          expect(JSON.parse(result)).toEqual(JSON.parse(JSON.stringify(body)));
          for (const key of keys) {
            if (key === touched) continue;
            const value = spaced
              ? JSON.stringify(source[key], null, 2).replaceAll("\n", "\n  ")
              : JSON.stringify(source[key]);
            expect(result).toContain(`${JSON.stringify(key)}:${spaced ? " " : ""}${value}`);
          }
        },
      ),
    );
  });
});

describe("canonicalValues: members measured where the text writes them as JSON.stringify would", () => {
  const keys = new Set(["messages", "system", "tools"]);

  it("measures a client's body in place, with the members its objects hold", () => {
    const messages = [{ role: "user", content: [{ type: "text", text: 'say "hi"\n\tté ✓ 42' }] }];
    const system = [{ type: "text", text: "be brief", cache_control: { type: "ephemeral" } }];
    const text = JSON.stringify({ model: "m", system, max_tokens: 32000, messages, stream: true });
    expect(canonicalValues(text, keys)).toEqual(
      new Map([
        ["system", { length: JSON.stringify(system).length, members: 4 }],
        ["messages", { length: JSON.stringify(messages).length, members: 4 }],
      ]),
    );
  });

  it("leaves out a member written otherwise: spaces, \\u or \\/ escapes, numbers JSON.stringify writes anew", () => {
    for (const messages of [
      '[ {"a":1}]',
      '[{"a":"\\u00e9"}]',
      '[{"a":"a\\/b"}]',
      "[1.5]",
      "[1e3]",
      "[-1]",
      "[1234567890123456]",
    ]) {
      const text = `{"system":[{"b":2}],"messages":${messages}}`;
      expect([...canonicalValues(text, keys).keys()], messages).toEqual(["system"]);
    }
    const literals = "[123456789012345,true,null,false]";
    expect(canonicalValues(`{"messages":${literals}}`, keys).get("messages")?.length).toBe(literals.length);
  });
});
