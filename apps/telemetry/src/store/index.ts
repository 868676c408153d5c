// The named queries, for the benchmark (bench/) to time the same SQL the service runs.
export { accessLogCount, accessLogPage } from "./access-logs";
export { sessionCount, sessionEntries, sessionPage } from "./sessions";
export { usageOverview } from "./usage";
