/** The parser ships no types: what it returns for counters, gauges and untyped samples (values as written). */
declare module "parse-prometheus-text-format" {
  interface ParsedFamily {
    name: string;
    help: string;
    type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
    metrics: { labels?: Record<string, string>; value?: string }[];
  }
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}
