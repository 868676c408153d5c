import type { Limits } from "@agentnet/contracts";
import { useState } from "react";
import { formatUsd, WINDOW_PRESETS, windowInWords } from "../domain/format";
import { MIN_WINDOW_SECONDS, parseNumberField } from "../domain/limits";
import { Check, Field } from "./ui";

const shown = (n: number) => (Number.isNaN(n) ? "" : String(n));

/** A limits object's tool-call limit, or one switched off when it has none. */
const toolCallLimitOf = (limits: Limits): NonNullable<Limits["tool_call_limit"]> =>
  limits.tool_call_limit ?? { enabled: false, group_cap: 0, user_cap: 0, window_seconds: 3600 };

/**
 * Token, USD and MCP tool-call caps per window. `error(path)` gives the message for a path such as
 * "limits.token_limit.window_seconds", from the pre-submit check or the API; `problem` is one about
 * the caps as a whole (a budget rule that caps nothing). Controls are named by their path.
 */
export function LimitsEditor(props: {
  value: Limits;
  onChange: (limits: Limits) => void;
  error: (path: string) => string | undefined;
  problem?: string | undefined;
  disabled?: boolean;
}) {
  const { token_limit: t, budget_limit: b } = props.value;
  const c = toolCallLimitOf(props.value);
  const common = { error: props.error, disabled: props.disabled };
  return (
    <div className="limits grid-2">
      {props.problem ? <p className="field-error limits-problem">{props.problem}</p> : null}
      <CapFieldset
        {...common}
        legend="Token limit"
        enforce="Enforce a token cap"
        part="token_limit"
        limit={{ enabled: t.enabled, user: t.user_cap, group: t.group_cap, window_seconds: t.window_seconds }}
        caps={{ user: "user_cap", group: "group_cap" }}
        labels={{ user: "Tokens per user", group: "Tokens per group" }}
        userHint="0 means uncapped"
        onChange={(patch) => props.onChange({ ...props.value, token_limit: { ...t, ...patch } })}
      />
      <CapFieldset
        {...common}
        legend="Spending limit (USD)"
        enforce="Enforce a spending cap"
        part="budget_limit"
        limit={{
          enabled: b.enabled,
          user: b.user_cap_usd,
          group: b.group_cap_usd,
          window_seconds: b.window_seconds,
        }}
        caps={{ user: "user_cap_usd", group: "group_cap_usd" }}
        labels={{ user: "USD per user", group: "USD per group" }}
        userHint="0 means uncapped"
        groupHint="0 means uncapped"
        step="0.01"
        onChange={(patch) => props.onChange({ ...props.value, budget_limit: { ...b, ...patch } })}
      />
      <CapFieldset
        {...common}
        legend="MCP tool-call limit"
        enforce="Enforce a tool-call cap"
        part="tool_call_limit"
        limit={{ enabled: c.enabled, user: c.user_cap, group: c.group_cap, window_seconds: c.window_seconds }}
        caps={{ user: "user_cap", group: "group_cap" }}
        labels={{ user: "Tool calls per user", group: "Tool calls per group" }}
        userHint="calls the MCP servers answered; 0 means uncapped"
        onChange={(patch) => props.onChange({ ...props.value, tool_call_limit: { ...c, ...patch } })}
      />
    </div>
  );
}

/**
 * One part of a limits object (`part`): whether it is enforced, its per-user and per-group caps
 * (named `caps` in the part) and its window. Controls are named by their path.
 */
function CapFieldset(props: {
  legend: string;
  enforce: string;
  part: "token_limit" | "budget_limit" | "tool_call_limit";
  limit: { enabled: boolean; user: number; group: number; window_seconds: number };
  caps: { user: string; group: string };
  labels: { user: string; group: string };
  userHint: string;
  groupHint?: string;
  step?: string;
  onChange: (patch: Record<string, number | boolean>) => void;
  error: (path: string) => string | undefined;
  disabled?: boolean | undefined;
}) {
  const { part, limit } = props;
  const num = (label: string, cap: string, value: number, hint: string) => {
    const path = `limits.${part}.${cap}`;
    return (
      <Field label={label} hint={hint} name={path} error={props.error(path)}>
        {(c) => (
          <input
            {...c}
            type="number"
            min={0}
            step={props.step ?? "1"}
            value={shown(value)}
            disabled={props.disabled}
            onChange={(e) => props.onChange({ [cap]: parseNumberField(e.target.value) })}
          />
        )}
      </Field>
    );
  };
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      <Check
        label={props.enforce}
        name={`limits.${part}.enabled`}
        checked={limit.enabled}
        disabled={props.disabled}
        onChange={(enabled) => props.onChange({ enabled })}
      />
      {num(props.labels.user, props.caps.user, limit.user, props.userHint)}
      {num(
        props.labels.group,
        props.caps.group,
        limit.group,
        props.groupHint ?? "each source group gets its own bucket; 0 means uncapped",
      )}
      <WindowField
        name={`limits.${part}.window_seconds`}
        seconds={limit.window_seconds}
        onChange={(window_seconds) => props.onChange({ window_seconds })}
        error={props.error(`limits.${part}.window_seconds`)}
        disabled={props.disabled}
      />
    </fieldset>
  );
}

const CUSTOM = "custom";

/** A cap's window: a named length (minute to 30 days), or any number of seconds. */
function WindowField(props: {
  name: string;
  seconds: number;
  onChange: (seconds: number) => void;
  error: string | undefined;
  disabled?: boolean;
}) {
  const named = WINDOW_PRESETS.some((preset) => preset.seconds === props.seconds);
  const [custom, setCustom] = useState(!named);
  return (
    <>
      <Field label="Window" name={props.name} error={custom ? undefined : props.error}>
        {(c) => (
          <select
            {...c}
            value={custom ? CUSTOM : String(props.seconds)}
            disabled={props.disabled}
            onChange={(e) => {
              const isCustom = e.target.value === CUSTOM;
              setCustom(isCustom);
              if (!isCustom) props.onChange(Number(e.target.value));
            }}
          >
            {WINDOW_PRESETS.map((preset) => (
              <option key={preset.seconds} value={preset.seconds}>
                {preset.label}
              </option>
            ))}
            <option value={CUSTOM}>Custom…</option>
          </select>
        )}
      </Field>
      {custom ? (
        <Field
          label="Window (seconds)"
          hint={`at least ${MIN_WINDOW_SECONDS} when enforced`}
          name={props.name}
          error={props.error}
        >
          {(c) => (
            <input
              {...c}
              type="number"
              min={0}
              step="1"
              value={shown(props.seconds)}
              disabled={props.disabled}
              onChange={(e) => props.onChange(parseNumberField(e.target.value))}
            />
          )}
        </Field>
      ) : null}
    </>
  );
}

const usdCap = (cap: number) => (cap ? formatUsd(cap) : "$∞");

/** One line about a limits object for lists. */
export function limitsSummary(limits: Limits | undefined): string {
  if (!limits) return "no caps";
  const parts: string[] = [];
  const t = limits.token_limit;
  if (t.enabled)
    parts.push(
      `tokens ${t.user_cap || "∞"}/user, ${t.group_cap || "∞"}/group per ${windowInWords(t.window_seconds)}`,
    );
  const b = limits.budget_limit;
  if (b.enabled)
    parts.push(
      `${usdCap(b.user_cap_usd)}/user, ${usdCap(b.group_cap_usd)}/group per ${windowInWords(b.window_seconds)}`,
    );
  const c = limits.tool_call_limit;
  if (c?.enabled)
    parts.push(
      `tool calls ${c.user_cap || "∞"}/user, ${c.group_cap || "∞"}/group per ${windowInWords(c.window_seconds)}`,
    );
  return parts.length ? parts.join("; ") : "caps off";
}
