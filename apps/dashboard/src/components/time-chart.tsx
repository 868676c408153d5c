import { useEffect, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { formatDateTime, formatHourMinute, formatShortDate } from "../domain/format";

export interface ChartSeries {
  label: string;
  /** One value per time; null where the API has no bucket, drawn as a gap. */
  values: (number | null)[];
  /** The CSS variable of its colour (`--chart-input`), read when drawing so dark mode follows. */
  color: string;
  format: (value: number) => string;
}

const HEIGHT = 240;
const darkScheme = () => window.matchMedia("(prefers-color-scheme: dark)");

/** The colour scheme in force; the canvas is redrawn in the other scheme's colours when it changes. */
function useColorScheme(): boolean {
  const [dark, setDark] = useState(() => darkScheme().matches);
  useEffect(() => {
    const query = darkScheme();
    const update = () => setDark(query.matches);
    query.addEventListener("change", update);
    return () => query.removeEventListener("change", update);
  }, []);
  return dark;
}

/**
 * Bars per bucket on a true time axis (uPlot on a canvas, labelled in the reader's local time):
 * each bar spans its bucket from its start, and a bucket the API did not answer stays empty.
 * `stacked` piles the series on one another in their order; `lines` draws each series as a line
 * with a dot per bucket instead, for values that neither add up nor nest (rates, quantiles). The
 * canvas is an image with a summary; a visually hidden table holds every number for screen readers.
 */
export function TimeChart(props: {
  title: string;
  times: number[];
  /** The x axis from the first bucket's start to the last one's end (ms). */
  domain: [number, number];
  series: ChartSeries[];
  stacked?: boolean;
  lines?: boolean;
}) {
  const { times, domain, series, stacked, lines } = props;
  const mount = useRef<HTMLDivElement>(null);
  const dark = useColorScheme();
  const [hovered, setHovered] = useState<number | null>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `dark` is read through the CSS variables.
  useEffect(() => {
    const element = mount.current;
    if (!element) return;
    const css = getComputedStyle(element);
    const color = (variable: string) => css.getPropertyValue(variable).trim();
    // A stack is drawn as running totals, the tallest first, so each lower series paints over it.
    const drawn = stacked ? runningTotals(series).reverse() : series;
    const format = series[0]?.format ?? String;
    const axis = {
      stroke: color("--muted"),
      grid: { stroke: color("--line"), width: 1 },
      ticks: { stroke: color("--line"), width: 1 },
      font: "12px system-ui, sans-serif",
    };
    const options: uPlot.Options = {
      width: element.clientWidth,
      height: HEIGHT,
      legend: { show: false },
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      scales: {
        x: { time: true, range: () => [domain[0] / 1000, domain[1] / 1000] },
        y: { range: (_plot, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: [
        { ...axis, values: (_plot, ticks, _axis, _space, step) => timeTicks(ticks, step) },
        { ...axis, size: 80, values: (_plot, ticks) => ticks.map(format) },
      ],
      series: [
        {},
        ...drawn.map((s) =>
          lines
            ? {
                label: s.label,
                stroke: color(s.color),
                width: 2,
                // A lone bucket between gaps has no neighbour to draw a line to: its dot shows it.
                points: { show: true, size: 6, fill: color(s.color), stroke: color(s.color) },
              }
            : {
                label: s.label,
                fill: color(s.color),
                stroke: color(s.color),
                width: 0,
                points: { show: false },
                paths: uPlot.paths.bars?.({ size: [0.85, Number.POSITIVE_INFINITY], align: 1 }),
              },
        ),
      ],
      hooks: { setCursor: [(plot) => setHovered(plot.cursor.idx ?? null)] },
    };
    const data: uPlot.AlignedData = [times.map((t) => t / 1000), ...drawn.map((s) => s.values)];
    const plot = new uPlot(options, data, element);
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height: HEIGHT }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, domain, series, stacked, lines, dark]);

  const rows = times
    .map((time, index) => ({ time, values: series.map((s) => s.values[index] ?? null) }))
    .filter((row) => row.values.some((v) => v !== null));
  const highest = series.map((s) => `${s.label} ${s.format(Math.max(0, ...s.values.map((v) => v ?? 0)))}`);
  const summary = `${props.title}: ${rows.length} of ${times.length} buckets with usage; highest ${highest.join(", ")}.`;
  const hoveredTime = hovered === null ? undefined : times[hovered];

  return (
    <div className="time-chart">
      {series.length > 1 ? (
        <p className="legend">
          {series.map((s) => (
            <span key={s.label} className="legend-item">
              <span className="key" style={{ background: `var(${s.color})` }} /> {s.label}
            </span>
          ))}
        </p>
      ) : null}
      <div ref={mount} className="time-chart-plot" role="img" aria-label={summary} />
      <p className="chart-readout" aria-hidden="true">
        {hovered !== null && hoveredTime !== undefined
          ? `${formatDateTime(new Date(hoveredTime).toISOString())}: ${series
              .map((s) => `${s.label} ${formatOrNone(s, s.values[hovered] ?? null)}`)
              .join(", ")}`
          : `Point at a ${lines ? "dot" : "bar"} for its numbers.`}
      </p>
      <table className="sr-only">
        <caption>{`${props.title} (local time; buckets without usage left out)`}</caption>
        <thead>
          <tr>
            <th scope="col">Bucket start</th>
            {series.map((s) => (
              <th key={s.label} scope="col">
                {s.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.time}>
              <th scope="row">{formatDateTime(new Date(row.time).toISOString())}</th>
              {row.values.map((value, index) => (
                <td key={series[index]?.label}>{formatOrNone(series[index], value)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const DAY_SECONDS = 86_400;

/**
 * Tick labels in the reader's local time, 24-hour like the rest of the dashboard: the day under
 * the first tick and wherever it changes, or days alone once ticks are a day or more apart.
 */
function timeTicks(ticks: number[], stepSeconds: number): string[] {
  let shownDay = "";
  return ticks.map((seconds) => {
    const date = new Date(seconds * 1000);
    const day = formatShortDate(date);
    if (stepSeconds >= DAY_SECONDS) return day;
    const time = formatHourMinute(date);
    const label = day === shownDay ? time : `${time}\n${day}`;
    shownDay = day;
    return label;
  });
}

const formatOrNone = (series: ChartSeries | undefined, value: number | null): string =>
  value === null || !series ? "none" : series.format(value);

/** Each series' values plus those of the series before it (null stays null: no bucket there). */
function runningTotals(series: readonly ChartSeries[]): ChartSeries[] {
  let below: (number | null)[] = [];
  return series.map((s) => {
    const values = s.values.map((v, i) => (v === null ? null : v + (below[i] ?? 0)));
    below = values;
    return { ...s, values };
  });
}
