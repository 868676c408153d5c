const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

export const formatTokens = (n: number): string => integer.format(n);

const percent = new Intl.NumberFormat("en-US", { style: "percent", maximumFractionDigits: 1 });

/** A share (0.143) as a percentage ("14.3%"). */
export const formatShare = (share: number): string => percent.format(share);

/** USD with enough digits to show sub-cent request costs. */
export function formatUsd(n: number): string {
  const digits = n !== 0 && Math.abs(n) < 0.01 ? 6 : 2;
  return `$${n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: digits })}`;
}

/** A timestamp in the reader's locale, with seconds (UTC offset is the browser's). */
export const formatDateTime = (iso: string): string => {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString("en-GB", { hour12: false });
};

export const formatDuration = (ms: number): string =>
  ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`;

/** "in 12 min", "in 3 h 5 min", "now" — how long until a window resets. */
export function formatIn(ms: number): string {
  if (ms <= 0) return "now";
  const minutes = Math.ceil(ms / 60_000);
  if (minutes < 60) return `in ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `in ${hours} h ${minutes % 60} min`;
  return `in ${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** Windows offered by name; any other length is entered in seconds. */
export const WINDOW_PRESETS: readonly { seconds: number; label: string; words: string }[] = [
  { seconds: 60, label: "1 minute", words: "minute" },
  { seconds: 3_600, label: "1 hour", words: "hour" },
  { seconds: 86_400, label: "1 day", words: "day" },
  { seconds: 604_800, label: "1 week", words: "week" },
  { seconds: 2_592_000, label: "30 days", words: "30 days" },
];

/** "hour", "30 days", or the length for windows without a name ("90 min"). */
export const windowInWords = (seconds: number): string =>
  WINDOW_PRESETS.find((preset) => preset.seconds === seconds)?.words ?? formatWindow(seconds);

export const formatWindow = (seconds: number): string => {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} d`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
};
