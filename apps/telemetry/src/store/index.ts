// The named queries and page readers, for the benchmark (bench/) to time what the service runs,
// and the reply budget the service sizes its pages with.
export { previewChars, replyBudget } from "../domain/reply-budget";
export { accessLogCount, accessLogPage, readAccessLogPage } from "./access-logs";
export { readUsageBreakdown, readUsageSeries } from "./analytics";
export { insertEvents } from "./events";
export { refreshRolledHours, rollHours } from "./rollup";
export { readSessionPage } from "./session-page";
export { keyedSessions, sessionCount, sessionPage } from "./sessions";
export { readUsageOverview } from "./usage";
