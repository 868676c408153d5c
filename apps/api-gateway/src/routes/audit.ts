import { type NatsConnection, requestPaged } from "@agentnet/bus";
import {
  type AuditEntry,
  AuditQuery,
  AuditSeq,
  AuditSettings,
  badRequest,
  ControlPlane,
  type Endpoint,
  forbidden,
  MAX_AUDIT_PAGE,
} from "@agentnet/contracts";
import { Router } from "express";
import { callerOf, hasAccess } from "../http/auth";
import { mount, param, type RouteSpec } from "../http/route";

/**
 * The audit trail (docs/API.md "Audit trail"): its entries, newest first and filtered, the chain's
 * verification, and the whole filtered trail as JSON lines or CSV. Owner, admin and auditor.
 */
export function auditRoutes(nc: NatsConnection, timeoutMs: number): Router {
  const router = Router();
  const add = <E extends Endpoint>(spec: RouteSpec<E>) => mount(router, nc, timeoutMs, spec);

  add({
    method: "get",
    path: "/audit",
    summary: "List audit entries, newest first, filtered (beyond the spec)",
    access: "reader",
    endpoint: ControlPlane.auditList,
    toRequest: (req, caller) => ({ caller, query: AuditQuery.parse(req.query) }),
  });
  add({
    method: "get",
    path: "/audit/verify",
    summary: "Verify the account's audit chain and name its first broken link (beyond the spec)",
    access: "reader",
    endpoint: ControlPlane.auditVerify,
    toRequest: (_req, caller) => ({ caller }),
  });

  add({
    method: "get",
    path: "/audit/settings",
    summary: "Get the audit trail's retention (beyond the spec)",
    access: "reader",
    endpoint: ControlPlane.auditSettingsGet,
    toRequest: (_req, caller) => ({ caller }),
  });
  add({
    method: "put",
    path: "/audit/settings",
    summary: "Set the audit trail's retention, owner only (beyond the spec)",
    access: "owner",
    endpoint: ControlPlane.auditSettingsUpdate,
    toRequest: (req, caller) => ({ caller, body: AuditSettings.parse(req.body ?? {}) }),
  });

  // Streamed page by page: an export of years of changes never sits whole in memory.
  router.get("/audit/export", async (req, res, next) => {
    try {
      const caller = callerOf(req);
      if (!hasAccess("reader", caller))
        throw forbidden("reading the audit trail needs the owner, admin or auditor role");
      const { format, ...filters } = req.query;
      if (format !== "jsonl" && format !== "csv") throw badRequest("format must be jsonl or csv");
      const query = AuditQuery.parse({ ...filters, limit: MAX_AUDIT_PAGE });
      const stamp = new Date().toISOString().replace(/[:.]/g, "-");
      res.status(200);
      res.type(format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson");
      res.setHeader("content-disposition", `attachment; filename="audit-${stamp}.${format}"`);
      if (format === "csv") res.write(`${CSV_COLUMNS.join(",")}\r\n`);
      let beforeSeq = query.before_seq;
      for (;;) {
        const page = await requestPaged(
          nc,
          ControlPlane.auditList,
          { caller, query: { ...query, ...(beforeSeq === undefined ? {} : { before_seq: beforeSeq }) } },
          { timeoutMs },
        );
        for (const entry of page.entries) {
          res.write(format === "csv" ? `${csvRow(entry)}\r\n` : `${JSON.stringify(entry)}\n`);
        }
        if (page.next_before_seq === undefined) break;
        beforeSeq = page.next_before_seq;
      }
      res.end();
    } catch (error) {
      if (res.headersSent) res.destroy(error instanceof Error ? error : undefined);
      else next(error);
    }
  });
  // After the fixed paths above: `verify`, `settings` and `export` are not entries.
  add({
    method: "get",
    path: "/audit/:seq",
    summary: "Get the audit entry at a place of the account's chain (beyond the spec)",
    access: "reader",
    endpoint: ControlPlane.auditGet,
    toRequest: (req, caller) => ({ caller, seq: AuditSeq.parse(param(req, "seq")) }),
  });
  return router;
}

const CSV_COLUMNS = [
  "seq",
  "at",
  "actor_user_id",
  "actor_email",
  "actor_role",
  "actor_token_id",
  "actor_session_id",
  "actor_address",
  "actor_user_agent",
  "action",
  "target_type",
  "target_id",
  "outcome",
  "status",
  "error_code",
  "before",
  "after",
  "prev_hash",
  "hash",
  "id",
] as const;

const csvRow = (entry: AuditEntry): string =>
  [
    entry.seq,
    entry.at,
    entry.actor.user_id,
    entry.actor.email,
    entry.actor.role,
    entry.actor.token_id,
    entry.actor.session_id,
    entry.actor.address,
    entry.actor.user_agent,
    entry.action,
    entry.target.type,
    entry.target.id,
    entry.outcome,
    entry.status,
    entry.error_code,
    entry.before === undefined ? undefined : JSON.stringify(entry.before),
    entry.after === undefined ? undefined : JSON.stringify(entry.after),
    entry.prev_hash,
    entry.hash,
    entry.id,
  ]
    .map(csvCell)
    .join(",");

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break; text a spreadsheet
 * would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) is prefixed with `'`, since these
 * values come from anyone who can send a request (a user agent, a resource name).
 */
function csvCell(value: string | number | undefined): string {
  if (value === undefined) return "";
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
