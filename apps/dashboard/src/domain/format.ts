const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

export const formatTokens = (n: number): string => integer.format(n);

const percent = new Intl.NumberFormat("en-US", { style: "percent", maximumFractionDigits: 1 });

/** A share (0.143) as a percentage ("14.3%"). */
export const formatShare = (share: number): string => percent.format(share);

const SMALLEST_USD = 0.000_001;

/**
 * USD, one rule everywhere: $1 and more with cents ("$1,234.50"); below $1 two significant digits
 * and at least two decimals, so a sub-cent request cost stays readable ("$0.50", "$0.012",
 * "$0.0012"); a positive amount under a millionth of a dollar is "<$0.000001", never a "$0.00"
 * that would read as unpriced.
 */
export function formatUsd(n: number): string {
  if (n > 0 && n < SMALLEST_USD) return "<$0.000001";
  const size = Math.abs(n);
  const decimals = size >= 1 || size === 0 ? 2 : Math.min(6, Math.max(2, 1 - Math.floor(Math.log10(size))));
  return n.toLocaleString("en-US", {
    style: "currency",
    currency: "USD",
    minimumFractionDigits: 2,
    maximumFractionDigits: decimals,
    signDisplay: "negative",
  });
}

const dayMonthYear = { day: "numeric", month: "short", year: "numeric" } as const;
const dateTime = new Intl.DateTimeFormat("en-GB", {
  ...dayMonthYear,
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hourCycle: "h23",
});
const dateOnly = new Intl.DateTimeFormat("en-GB", dayMonthYear);

/**
 * Every timestamp the dashboard shows: "5 Mar 2025, 14:03:22", the month in words so no reader
 * mistakes day for month, 24-hour clock, in the browser's time zone. Text that is not a date is
 * shown as it came.
 */
export const formatDateTime = (iso: string): string => {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
};

/** A day in the same format without the time: "5 Mar 2025". */
export const formatDate = (iso: string): string => {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateOnly.format(date);
};

const dateTimeToMinute = new Intl.DateTimeFormat("en-GB", {
  ...dayMonthYear,
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23",
});

/** A stretch of time as `formatDateTime` writes it, to the minute: "5 Mar 2025, 14:03 to 6 Mar 2025, 09:30". */
export const formatRange = (start: Date, end: Date): string =>
  `${dateTimeToMinute.format(start)} to ${dateTimeToMinute.format(end)}`;

const dayMonth = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short" });

/** A day where the year goes without saying (a chart's axis): "5 Mar". */
export const formatShortDate = (date: Date): string => dayMonth.format(date);

const hourMinute = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });

/** A time of day to the minute, where the day is shown apart (a chart's axis): "14:03". */
export const formatHourMinute = (date: Date): string => hourMinute.format(date);

const timeOfDay = new Intl.DateTimeFormat("en-GB", {
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hourCycle: "h23",
});

/** The time part of `formatDateTime`, for something that happened today: "14:03:22". */
export const formatTimeOfDay = (date: Date): string => timeOfDay.format(date);

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

/** English plural of a resource noun: "policy" → "policies", "budget rule" → "budget rules". */
export const plural = (noun: string): string =>
  /[^aeiou]y$/.test(noun) ? `${noun.slice(0, -1)}ies` : `${noun}s`;
