// costtracker dashboard: reads the job-cost API from this page's own origin and draws
// tables and inline SVG charts. Hand-written, no framework, no build step, no network
// beyond this origin. Money arrives as decimal strings and is rounded to cents here with
// integer arithmetic (half-even, as the API's own `cents`), never through floats; rates
// ($/h, $/1M tokens, $/1,000 steps, prices) keep their real precision (perUnit, exactUsd).
"use strict";

const MAIN = document.getElementById("main");
const SVGNS = "http://www.w3.org/2000/svg";
const GROUPING_KEYS = ["team", "project", "owner", "cost-center", "environment", "experiment"];
let renderToken = 0;

// ---------------------------------------------------------------- DOM helpers

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "on") for (const [ev, fn] of Object.entries(value)) node.addEventListener(ev, fn);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined) continue;
    if (key === "text") node.textContent = value;
    else node.setAttribute(key, String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

// ---------------------------------------------------------------- money and numbers

const NANO = 1000000000n;

function nanoOf(value) {
  // "1234.567890123" -> 1234567890123n (nano-dollars); null stays null
  if (value === null || value === undefined || value === "") return null;
  let text = String(value).trim();
  const negative = text.startsWith("-");
  if (negative || text.startsWith("+")) text = text.slice(1);
  const [whole, frac = ""] = text.split(".");
  const nano = BigInt(whole || "0") * NANO + BigInt((frac + "000000000").slice(0, 9));
  return negative ? -nano : nano;
}

function roundHalfEven(nano, unit) {
  const negative = nano < 0n;
  const abs = negative ? -nano : nano;
  let q = abs / unit;
  const r = abs % unit;
  if (r * 2n > unit || (r * 2n === unit && q % 2n === 1n)) q += 1n;
  return negative ? -q : q;
}

function groupThousands(digits) {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function usdNano(nano) {
  if (nano === null) return "–";
  const cents = roundHalfEven(nano, 10000000n);
  const negative = cents < 0n;
  const abs = negative ? -cents : cents;
  const text = `$${groupThousands((abs / 100n).toString())}.${(abs % 100n).toString().padStart(2, "0")}`;
  return negative ? `-${text}` : text;
}

function usd(value) {
  return usdNano(nanoOf(value));
}

// A derived figure ($/1M tokens, $/1,000 steps, $/h burn) to `digits` significant digits,
// at least cents, half-even on the exact decimal: the CLI's render.per_unit. A cheap
// model's $0.0412 per 1M tokens must not read $0.04.
function perUnitNano(nano, digits = 4) {
  if (nano === null) return "–";
  if (nano === 0n) return "$0.00";
  const negative = nano < 0n;
  const abs = negative ? -nano : nano;
  const adjusted = abs.toString().length - 10; // exponent of the leading digit
  const places = Math.min(9, Math.max(2, digits - 1 - adjusted));
  const q = roundHalfEven(abs, 10n ** BigInt(9 - places)).toString().padStart(places + 1, "0");
  const text = `$${groupThousands(q.slice(0, q.length - places))}.${q.slice(q.length - places)}`;
  return negative ? `-${text}` : text;
}

function perUnit(value, digits = 4) {
  return perUnitNano(nanoOf(value), digits);
}

function signedPerUnit(value) {
  const nano = nanoOf(value);
  if (nano === null) return "–";
  return nano > 0n ? `+${perUnitNano(nano)}` : perUnitNano(nano);
}

// A price as it is ($0.096 stays $0.096, 21.50 is $21.50): trailing zeros dropped, at
// least cents: the CLI's render.rate.
function exactUsd(value) {
  const nano = nanoOf(value);
  if (nano === null) return "–";
  const negative = nano < 0n;
  const digits = (negative ? -nano : nano).toString().padStart(10, "0");
  const frac = digits.slice(-9).replace(/0+$/, "").padEnd(2, "0");
  const text = `$${groupThousands(digits.slice(0, -9))}.${frac}`;
  return negative ? `-${text}` : text;
}

function signedUsd(value) {
  const nano = nanoOf(value);
  if (nano === null) return "–";
  return nano > 0n ? `+${usdNano(nano)}` : usdNano(nano);
}

function sumNano(values) {
  return values.reduce((acc, v) => acc + (nanoOf(v) || 0n), 0n);
}

function num(value) {
  // for drawing only
  return value === null || value === undefined ? 0 : Number(value);
}

function fixed(value, digits) {
  if (value === null || value === undefined) return "–";
  return Number(value).toLocaleString("en-US", {
    minimumFractionDigits: digits, maximumFractionDigits: digits,
  });
}

function pct(share) {
  return share === null || share === undefined ? "–" : `${(Number(share) * 100).toFixed(1)} %`;
}

// ---------------------------------------------------------------- time

function parseTime(iso) {
  return iso ? new Date(iso) : null;
}

function utc(iso, withDate = true) {
  if (!iso) return "–";
  const text = String(iso).replace("T", " ").replace(/:\d\dZ$/, "").replace(/Z$/, "");
  return withDate ? `${text} UTC` : text.slice(11);
}

function duration(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  const s = Math.round(Number(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d} d ${h} h`;
  if (h) return `${h} h ${m} min`;
  return `${m} min`;
}

function isoDate(date) {
  return date.toISOString().slice(0, 10);
}

function addDays(day, n) {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + n);
  return isoDate(date);
}

// ---------------------------------------------------------------- API

class ApiFailure extends Error {
  constructor(status, body) {
    // The API's one error shape: {statusCode, field, message, errors}; the message names
    // the field already. API Gateway's own errors carry a message too.
    const message = typeof body === "string" ? body : body && body.message;
    super(`HTTP ${status}: ${message || "no message"}`);
    this.status = status;
  }
}

async function api(path, params) {
  const entries = Object.entries(params || {}).filter(
    ([, v]) => v !== null && v !== undefined && v !== "");
  const query = entries.length ? `?${new URLSearchParams(entries)}` : "";
  const response = await fetch(path + query, { headers: { Accept: "application/json" } });
  const text = await response.text();
  let body;
  try { body = JSON.parse(text); } catch (e) { body = text; }
  if (!response.ok) throw new ApiFailure(response.status, body);
  return body;
}

async function today() {
  // The API's own date (its clock: the replay's in the demo, the real one when deployed).
  const body = await api("/jobs", { limit: 1 });
  return body.to;
}

// ---------------------------------------------------------------- shared pieces

function card(label, value, sub, fig) {
  return el("div", { class: "card" },
    el("div", { class: "label", text: label }),
    el("div", { class: "value", "data-fig": fig, text: value }),
    sub ? el("div", { class: "sub", text: sub }) : null);
}

// The words people read: the API's status `complete` (every instance terminated) is
// "finished", as in the CLI (costtracker.render.text.STATUS_WORDS); JSON keeps the contract's.
const STATUS_WORDS = { running: "running", stopped: "stopped", interrupted: "interrupted",
  complete: "finished" };

function statusWord(status) {
  return STATUS_WORDS[status] || String(status);
}

function statusBadge(job) {
  // The job's status (is it running?), apart from whether its cost is complete.
  return el("span", { class: `badge status-${job.status}`, "data-role": "status",
    title: `status: ${job.status}`, text: statusWord(job.status) });
}

// "kind:type:region" -> "ec2 price of trn2.48xlarge in us-east-1"
function missingPrice(key) {
  const [kind, type, region] = String(key).split(":");
  return `${kind} price of ${type || "?"}${region ? ` in ${region}` : ""}`;
}

// A job's total as far as it is known: "at least $X" while some time is unpriced.
function jobTotal(job) {
  return job.complete ? usd(job.cost_usd.total) : `at least ${usd(job.cost_usd.total)}`;
}

function missingText(job) {
  const keys = job.unpriced || [];
  return keys.length ? `no ${keys.map(missingPrice).join(", ")} yet` : "some time is unpriced";
}

function completeness(job) {
  return job.complete ? el("span", { class: "badge priced", text: "fully priced" })
    : el("span", { class: "badge warn", "data-role": "incomplete", title: missingText(job),
      text: `incomplete: ${missingText(job)}` });
}

function stateBadge(job) {
  // Every live figure is an estimate; "confirmed" would come from the bill (reconcile).
  const confirmed = job && job.estimated === false;
  return el("span", { class: `badge ${confirmed ? "confirmed" : "estimated"}`,
    title: confirmed ? "matched to the bill" : "from live events, not yet the bill",
    text: confirmed ? "confirmed" : "estimated" });
}

function sourceText(source) {
  const [kind, day] = String(source).split(":");
  const names = { override: "override", snapshot: "bundled snapshot", price_api: "Price List API",
    spot_history: "spot price history" };
  return `${names[kind] || kind} (checked ${day})`;
}

function shortSource(source) {
  const [kind, day] = String(source).split(":");
  return `${kind.replace("_", " ")} ${day}`;
}

// A price checked this many days before the data it prices is worth a warning.
const STALE_PRICE_DAYS = 90;

function staleSources(asOf, list) {
  if (!asOf) return [];
  const at = parseTime(asOf);
  return list.filter((source) => {
    const day = String(source).split(":")[1];
    const checked = day ? parseTime(`${day}T00:00:00Z`) : null;
    return checked && (at - checked) / 86400000 > STALE_PRICE_DAYS;
  });
}

// Every view that shows money says where its prices come from and when they were checked,
// and warns when they were checked long before the data they price.
function provenance(asOf, sources, extra) {
  const list = [...new Set(sources || [])].sort();
  const stale = staleSources(asOf, list);
  const days = (source) => Math.floor((parseTime(asOf)
    - parseTime(`${String(source).split(":")[1]}T00:00:00Z`)) / 86400000);
  return el("div", { class: "provenance" },
    el("p", { class: "muted small", "data-role": "provenance" },
      stateBadge(null), ` as of ${utc(asOf)}`,
      ` · prices: ${list.length ? list.map(sourceText).join(", ") : "none priced in view"}`,
      extra ? ` · ${extra}` : ""),
    stale.length ? el("p", { class: "stale", role: "note", "data-role": "stale-prices" },
      `Prices checked long before this data: ${stale.map((s) => `${sourceText(s)}, ${days(s)} days before`)
        .join("; ")}. They may have changed since; set price overrides or enable the Price ` +
      "List API for current ones.") : null);
}

// Price sources of the jobs active from `first` to `last` (the first 100: said so).
async function sourcesBetween(first, last) {
  try {
    const body = await api("/jobs", { from: first, to: last, limit: 100 });
    return { sources: body.jobs.flatMap((j) => j.price_sources),
      note: body.next_token ? "prices of the first 100 jobs" : null };
  } catch (error) {
    return { sources: [], note: "price sources not readable" };
  }
}

// Tables fit their container on a laptop (text cells wrap, figures do not); on a phone
// each row is a card of "label value" lines (app.css), so the money stays on screen.
function table(headers, rows, opts) {
  const labels = headers.map((h) => (Array.isArray(h) ? h[0] : h));
  const head = el("tr", {}, headers.map((h) => {
    const [label, cls] = Array.isArray(h) ? h : [h, ""];
    return el("th", { class: cls || null, text: label });
  }));
  const body = rows.map((row) => el("tr", { "data-row": row.key || null },
    row.cells.map((cell, i) => {
      const label = labels[i] || null;
      if (cell instanceof Node) return el("td", { "data-label": label }, cell);
      if (cell && typeof cell === "object" && "v" in cell) {
        return el("td", { class: cell.cls || null, "data-fig": cell.fig || null, "data-label": label },
          cell.v instanceof Node ? cell.v : String(cell.v));
      }
      return el("td", { "data-label": label, text: cell === null || cell === undefined ? "–" : String(cell) });
    })));
  const t = el("table", { "data-table": (opts && opts.name) || null },
    el("thead", {}, head), el("tbody", {}, body));
  return el("div", { class: "scroll" }, t);
}

function money(value, fig) {
  return { v: usd(value), cls: "num", fig };
}

function showError(error) {
  return el("div", { class: "error", role: "alert", text: String(error.message || error) });
}

function legend(items) {
  return el("div", { class: "legend" }, items.map(([cls, label]) => el("span", { class: cls, text: label })));
}

const PALETTE = ["#2f6fb3", "#e39b2d", "#4f9d69", "#6a4c93", "#c8423b", "#3a9fb0", "#8c6d46"];
const NONE_COLOUR = "#b9c0c8";

// ---------------------------------------------------------------- charts (inline SVG)

function niceMax(value) {
  if (!(value > 0)) return 1;
  const exp = Math.pow(10, Math.floor(Math.log10(value)));
  for (const m of [1, 1.2, 1.6, 2, 2.4, 3.2, 4, 6, 8, 10]) if (m * exp >= value) return m * exp;
  return 10 * exp;
}

function shortUsd(value) {
  const v = Math.abs(value);
  const sign = value < 0 ? "-" : "";
  if (v >= 1e6) return `${sign}$${(v / 1e6).toFixed(1)}M`;
  if (v >= 1e4) return `${sign}$${(v / 1e3).toFixed(0)}k`;
  if (v >= 1e3) return `${sign}$${(v / 1e3).toFixed(1)}k`;
  return `${sign}$${v.toFixed(v < 10 && v > 0 ? 2 : 0)}`;
}

// Charts are drawn for the width they get (one SVG unit is one CSS pixel), so their
// 11 px text stays 11 px on a phone instead of being scaled down; the page redraws them
// when the window's width changes.
function chartWidth() {
  const style = getComputedStyle(MAIN);
  const inner = MAIN.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return Math.round(Math.max(300, Math.min(1240, inner || 900)));
}

// How many of `count` labels of about `labelPx` pixels fit in `span` pixels: every n-th.
function labelStep(count, span, labelPx) {
  return Math.max(1, Math.ceil((count * labelPx) / Math.max(span, 1)));
}

function clip(text, chars) {
  const value = String(text);
  return value.length <= chars ? value : `${value.slice(0, Math.max(1, chars - 1))}…`;
}

function frame(width, height, title) {
  return svg("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": title, preserveAspectRatio: "xMidYMid meet" }, svg("title", { text: title }));
}

function yAxis(root, x0, x1, yOf, max, label) {
  for (let i = 0; i <= 4; i += 1) {
    const value = (max * i) / 4;
    const y = yOf(value);
    root.append(svg("line", { x1: x0, x2: x1, y1: y, y2: y, class: "axis" }));
    root.append(svg("text", { x: x0 - 6, y: y + 4, "text-anchor": "end", text: shortUsd(value) }));
  }
  if (label) root.append(svg("text", { x: 4, y: 12, text: label }));
}

function timeAxis(root, t0, t1, xOf, y) {
  const span = t1 - t0;
  const ticks = Math.max(2, Math.min(6, Math.floor((xOf(t1) - xOf(t0)) / 90)));
  for (let i = 0; i <= ticks; i += 1) {
    const t = new Date(t0.getTime() + (span * i) / ticks);
    const x = xOf(t);
    const text = span > 3 * 86400000 ? t.toISOString().slice(5, 10)
      : t.toISOString().slice(5, 16).replace("T", " ");
    // the end labels sit inside the chart, not half outside it
    const anchor = i === 0 ? "start" : i === ticks ? "end" : "middle";
    root.append(svg("text", { x, y: y + 14, "text-anchor": anchor, text }));
  }
  root.append(svg("text", { x: xOf(t1), y: y + 28, "text-anchor": "end", text: "time (UTC)" }));
}

function stackedAreaChart({ points, keys, colours, markers, title }) {
  const W = chartWidth(), H = W < 600 ? 260 : 320, L = 56, R = 14, T = 18, B = 44;
  const root = frame(W, H, title);
  if (points.length < 2) return root;
  const times = points.map((p) => parseTime(p.at));
  const t0 = times[0], t1 = times[times.length - 1];
  const max = niceMax(Math.max(...points.map((p) => num(p.total_usd))));
  const xOf = (t) => L + ((t - t0) / Math.max(1, t1 - t0)) * (W - L - R);
  const yOf = (v) => T + (1 - v / max) * (H - T - B);
  yAxis(root, L, W - R, yOf, max, "USD, cumulative");
  for (const band of markers.idle || []) {
    const a = Math.max(xOf(parseTime(band.start)), L);
    const b = Math.min(xOf(parseTime(band.end || points[points.length - 1].at)), W - R);
    if (b > a) root.append(svg("rect", { x: a, y: T, width: Math.max(b - a, 1.5), height: H - T - B,
      fill: "#f4d35e", "fill-opacity": 0.45, "data-mark": "idle" },
      svg("title", { text: `idle ${utc(band.start)} to ${utc(band.end)} (${band.instance_id})` })));
  }
  let lower = points.map(() => 0);
  keys.forEach((key, k) => {
    const upper = points.map((p, i) => lower[i] + num(p[key]));
    const top = points.map((p, i) => `${xOf(times[i]).toFixed(1)},${yOf(upper[i]).toFixed(1)}`);
    const bottom = points.map((p, i) => `${xOf(times[i]).toFixed(1)},${yOf(lower[i]).toFixed(1)}`).reverse();
    root.append(svg("polygon", { points: [...top, ...bottom].join(" "), fill: colours[k],
      "fill-opacity": 0.85, "data-series": key }));
    lower = upper;
  });
  for (const mark of markers.interruptions || []) {
    const x = xOf(parseTime(mark.at));
    root.append(svg("line", { x1: x, x2: x, y1: T, y2: H - B, stroke: "#c8423b", "stroke-width": 2,
      "stroke-dasharray": "5 3", "data-mark": "interruption" },
      svg("title", { text: `spot interruption ${utc(mark.at)} (${mark.instance_id})` })));
    root.append(svg("text", { x: x + 3, y: T + 10, fill: "#c8423b", text: "interrupted" }));
  }
  for (const mark of markers.checkpoints || []) {
    const x = xOf(parseTime(mark.at));
    root.append(svg("line", { x1: x, x2: x, y1: H - B, y2: H - B - 9, stroke: "#1b1f24",
      "stroke-width": 1.5, "data-mark": "checkpoint" },
      svg("title", { text: `checkpoint step ${mark.step ?? "?"} at ${utc(mark.at)}` })));
  }
  root.append(svg("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: "#5b6470" }));
  timeAxis(root, t0, t1, xOf, H - B);
  return root;
}

function hbarChart({ rows, title, unit }) {
  // rows: [{label, parts: [{value, colour, name}]}]
  const W = chartWidth(), rowH = 30, L = Math.min(230, Math.round(W * 0.34)), R = 80, T = 8;
  const H = T + rows.length * rowH + 10;
  const chars = Math.floor((L - 10) / 6.5);
  const root = frame(W, H, title);
  const max = niceMax(Math.max(...rows.map((r) => r.parts.reduce((a, p) => a + p.value, 0)), 0));
  const xOf = (v) => L + (v / max) * (W - L - R);
  rows.forEach((row, i) => {
    const y = T + i * rowH;
    root.append(svg("text", { x: L - 8, y: y + 18, "text-anchor": "end", text: clip(row.label, chars) },
      svg("title", { text: row.label })));
    let at = 0;
    for (const part of row.parts) {
      const w = Math.max(0, xOf(at + part.value) - xOf(at));
      root.append(svg("rect", { x: xOf(at), y: y + 5, width: w, height: rowH - 10, fill: part.colour },
        svg("title", { text: `${part.name}: ${part.text || part.value}` })));
      at += part.value;
    }
    root.append(svg("text", { x: xOf(at) + 6, y: y + 18, text: row.total || "" }));
  });
  if (unit) root.append(svg("text", { x: W - 4, y: H - 2, "text-anchor": "end", text: unit }));
  return root;
}

function stackedBarsChart({ days, series, title }) {
  // days: [{date, available, values: {name: number}}]; series: [{name, colour}]
  const W = chartWidth(), H = W < 600 ? 240 : 300, L = 56, R = 10, T = 18, B = 40;
  const root = frame(W, H, title);
  const totals = days.map((d) => series.reduce((a, s) => a + (d.values[s.name] || 0), 0));
  const max = niceMax(Math.max(...totals, 0));
  const slot = (W - L - R) / Math.max(days.length, 1);
  const yOf = (v) => T + (1 - v / max) * (H - T - B);
  yAxis(root, L, W - R, yOf, max, "USD per day");
  days.forEach((day, i) => {
    const x = L + i * slot + slot * 0.15;
    const w = slot * 0.7;
    if (!day.available) {
      root.append(svg("text", { x: x + w / 2, y: H - B - 4, "text-anchor": "middle", text: "n/a" }));
    }
    let base = 0;
    for (const s of series) {
      const v = day.values[s.name] || 0;
      if (v > 0) {
        root.append(svg("rect", { x, y: yOf(base + v), width: w, height: yOf(base) - yOf(base + v),
          fill: s.colour, "data-day": day.date, "data-series": s.name },
          svg("title", { text: `${day.date} ${s.name}: ${shortUsd(v)}` })));
      }
      base += v;
    }
    if (i % labelStep(days.length, W - L - R, 40) === 0) {
      root.append(svg("text", { x: x + w / 2, y: H - B + 14, "text-anchor": "middle",
        text: day.date.slice(5) }));
    }
  });
  root.append(svg("text", { x: W - R, y: H - 6, "text-anchor": "end", text: "UTC day" }));
  return root;
}

// ---------------------------------------------------------------- views

const VIEWS = {};

VIEWS.now = async function now() {
  const [jobs, idle] = await Promise.all([
    api("/jobs", { status: "running", sort: "cost", limit: 100 }),
    api("/idle"),
  ]);
  const running = jobs.jobs;
  const asOf = idle.as_of;
  const sources = running.flatMap((j) => j.price_sources);
  const burn = sumNano(running.map((j) => j.burn_rate_usd_per_hour));
  const risk = sumNano(running.map((j) => j.spend_at_risk_usd));
  const idleCost = sumNano(idle.instances.map((i) => i.cost_usd));
  const out = [
    el("h2", { text: "Now" }),
    provenance(asOf, sources),
    el("div", { class: "cards" },
      card("Running jobs", String(running.length), "cost accrued to now", "now:running"),
      card("Burn rate", `${perUnitNano(burn)}/h`, "all running instances", "now:burn"),
      card("Spend at risk", usdNano(risk), "since each job's last checkpoint", "now:risk"),
      card("Idle accelerators", String(idle.instances.length),
        `${usdNano(idleCost)} spent while idle`, "now:idle")),
  ];
  if (!running.length) {
    out.push(el("p", { class: "empty", text: "No job is running now." }));
  } else {
    out.push(el("h3", { text: "Running jobs: cost so far, and the part at risk" }));
    out.push(legend([["sw-instance", "cost so far, safe (before the last checkpoint)"],
      ["sw-waste", "at risk: instance cost since the last checkpoint"]]));
    out.push(hbarChart({
      title: "Running jobs: cost so far and spend at risk (USD)",
      unit: "USD",
      rows: running.map((j) => {
        const total = num(j.cost_usd.total);
        const risk = Math.min(num(j.spend_at_risk_usd), total);
        return { label: j.job_id, total: jobTotal(j),
          parts: [{ value: total - risk, colour: "#2f6fb3", name: "safe" },
            { value: risk, colour: "#c8423b", name: "at risk", text: usd(j.spend_at_risk_usd) }] };
      }),
    }));
    out.push(table(
      ["Job", "Team", "Started", ["Cost so far", "num"], ["Burn $/h", "num"],
        ["At risk", "num"], "Last checkpoint", "State", "Prices"],
      running.map((j) => ({ key: j.job_id, cells: [
        el("a", { href: `#/job/${encodeURIComponent(j.job_id)}`, text: j.job_id }),
        j.tags.team || "–",
        utc(j.started_at),
        { v: jobTotal(j), cls: "num", fig: `job:${j.job_id}:total` },
        { v: `${perUnit(j.burn_rate_usd_per_hour)}/h`, cls: "num", fig: `job:${j.job_id}:burn` },
        money(j.spend_at_risk_usd, `job:${j.job_id}:risk`),
        j.last_checkpoint_at ? `${utc(j.last_checkpoint_at)} (step ${j.last_checkpoint_step ?? "?"})`
          : "none: all since start",
        el("span", {}, stateBadge(j), j.complete ? "" : " ", j.complete ? null : completeness(j)),
        { v: j.price_sources.map(shortSource).join(", "), cls: "small" },
      ] })), { name: "running" }));
  }
  out.push(el("h3", { text: "Accelerators idle now" }));
  out.push(el("p", { class: "muted small", text:
    "Idle: the instance's own CloudWatch alarms say accelerator and CPU are both low; " +
    "input-bound: accelerator low while the CPU is busy. This is the alarms' view (30 min " +
    "below the thresholds), not a utilization metric read by the API." }));
  if (!idle.instances.length) {
    out.push(el("p", { class: "empty", text: "No accelerator is idle now." }));
  } else {
    out.push(table(
      ["Instance", "Type", "Job", "Condition", "Since", "For", ["Cost while idle", "num"],
        ["Burn $/h", "num"]],
      idle.instances.map((i) => ({ key: i.instance_id, cells: [
        i.instance_id, i.instance_type,
        el("a", { href: `#/job/${encodeURIComponent(i.job_id)}`, text: i.job_id }),
        el("span", { class: "badge warn", text: i.condition.replace("_", "-") }),
        utc(i.since), duration(i.idle_seconds),
        money(i.cost_usd, `idle:${i.instance_id}:cost`),
        { v: `${perUnit(i.burn_rate_usd_per_hour)}/h`, cls: "num" },
      ] })), { name: "idle" }));
  }
  if (window.nowEfficiency) out.push(await window.nowEfficiency(running));
  return out;
};

async function jobsInRange(days) {
  if (days === 7) return api("/jobs", { limit: 100 });
  const to = await today();
  return api("/jobs", { limit: 100, from: addDays(to, 1 - days), to });
}

VIEWS.jobs = async function jobs(arg, params) {
  const days = Number(params.get("days") || 30);
  const body = await jobsInRange(days);
  const form = el("form", { class: "inline", on: { submit: (e) => {
    e.preventDefault();
    const picked = [...form.querySelectorAll("input[type=checkbox]:checked")].map((c) => c.value);
    location.hash = `#/compare?jobs=${picked.map(encodeURIComponent).join(",")}`;
  } } });
  const daySelect = el("select", { name: "days", on: { change: (e) => {
    location.hash = `#/jobs?days=${e.target.value}`;
  } } }, [7, 30, 90].map((d) => el("option", { value: d, selected: d === days, text: `last ${d} days` })));
  form.append(el("label", {}, "Jobs active in", daySelect),
    el("button", { type: "submit", text: "Compare the ticked jobs" }));
  const rows = body.jobs.map((j) => ({ key: j.job_id, cells: [
    el("input", { type: "checkbox", value: j.job_id, "aria-label": `compare ${j.job_id}` }),
    el("a", { href: `#/job/${encodeURIComponent(j.job_id)}`, text: j.job_id }),
    statusBadge(j), j.tags.team || "–", j.tags.project || "–",
    { v: jobTotal(j), cls: "num", fig: `job:${j.job_id}:total` },
    money(j.cost_usd.instance), money(j.cost_usd.ebs), money(j.cost_usd.checkpoint_storage),
    { v: usdNano(nanoOf(j.cost_usd.wasted_idle) + nanoOf(j.cost_usd.wasted_rerun)), cls: "num" },
    { v: fixed(j.instance_seconds / 3600, 1), cls: "num" },
    utc(j.started_at),
    el("span", {}, stateBadge(j), " ", completeness(j)),
  ] }));
  return [
    el("h2", { text: "Jobs" }),
    provenance(body.jobs[0] && body.jobs[0].as_of, body.jobs.flatMap((j) => j.price_sources),
      `${body.from} to ${body.to}`),
    form,
    rows.length ? table(["", "Job", "Status", "Team", "Project", ["Total", "num"], ["Instance", "num"],
      ["EBS", "num"], ["Ckpt storage", "num"], ["Wasted", "num"], ["Inst-hours", "num"], "Started",
      "Figures"], rows, { name: "jobs" }) : el("p", { class: "empty", text: "No job in this range." }),
  ];
};

async function allItems(jobId) {
  const items = [];
  let token = null;
  for (let page = 0; page < 20; page += 1) {
    const body = await api(`/jobs/${encodeURIComponent(jobId)}/items`, { limit: 500, next_token: token });
    items.push(...body.items);
    token = body.next_token;
    if (!token) break;
  }
  return items;
}

VIEWS.job = async function job(arg, params) {
  const id = decodeURIComponent(arg || "");
  if (!id) return [el("p", { class: "empty", text: "Pick a job from the Jobs view." })];
  const path = `/jobs/${encodeURIComponent(id)}`;
  const [detail, timeline, items] = await Promise.all([
    api(path), api(`${path}/timeline`, { points: 160 }), allItems(id),
  ]);
  const c = detail.cost_usd;
  const hours = detail.instance_seconds / 3600;
  const out = [
    el("h2", {}, `Job ${detail.job_id} `, statusBadge(detail), " ", completeness(detail)),
    provenance(detail.as_of, detail.price_sources,
      Object.entries(detail.tags).map(([k, v]) => `${k}=${v}`).join(", ")),
    el("div", { class: "cards" },
      card("Total", jobTotal(detail), detail.complete ? "instance + EBS + checkpoint storage"
        : `${missingText(detail)}: the unpriced time is not in the figure`, "job:total"),
      card("Instance", usd(c.instance), `${fixed(hours, 2)} instance-hours`, "job:instance"),
      card("EBS", usd(c.ebs), "volumes, prorated per second", "job:ebs"),
      card("Checkpoint storage", usd(c.checkpoint_storage),
        `${detail.checkpoint_objects} objects, ${detail.checkpoints} checkpoints`, "job:storage"),
      card("Wasted: rerun", usd(c.wasted_rerun), `${detail.interruptions} interruptions`, "job:rerun"),
      card("Wasted: idle", usd(c.wasted_idle), `${duration(detail.idle_seconds)} idle`, "job:idle"),
      card("Per 1,000 steps", detail.cost_per_1k_steps_usd ? perUnit(detail.cost_per_1k_steps_usd) : "–",
        detail.last_checkpoint_step ? `to step ${detail.last_checkpoint_step}` : "no stepped checkpoint",
        "job:per1k"),
      card("Per 1M tokens", detail.cost_per_million_tokens_usd ? perUnit(detail.cost_per_million_tokens_usd) : "–",
        detail.cost_per_million_tokens_usd ? "tokens-per-step tag" : "no tokens-per-step tag", "job:per1m"),
      card("Per accelerator-hour", detail.usd_per_accelerator_hour ? perUnit(detail.usd_per_accelerator_hour) : "–",
        detail.accelerator_seconds === null ? "accelerator count unknown"
          : `${fixed(detail.accelerator_seconds / 3600, 2)} accelerator-hours`, "job:peraccel"),
      card("Utilization", detail.utilization === null ? "not measured" : pct(Number(detail.utilization)),
        detail.utilization === null ? "no datapoints of the accelerator metric"
          : `measured over ${pct(Number(detail.utilization_measured_share))} of the time`, "job:util"),
      card("Burn rate", `${perUnit(detail.burn_rate_usd_per_hour)}/h`,
        detail.status === "running" ? "now" : `nothing runs: ${statusWord(detail.status)}`, "job:burn"),
      // Spend at risk is what a failure now would lose: only a running job has any.
      detail.status === "running" ? card("Spend at risk", usd(detail.spend_at_risk_usd),
        detail.last_checkpoint_at ? `since ${utc(detail.last_checkpoint_at)}` : "since the start",
        "job:risk") : null),
  ];
  const idle = items.filter((i) => i.kind === "idle");
  const interruptions = items.filter((i) => i.kind === "interruption");
  const checkpoints = items.filter((i) => i.kind === "checkpoint");
  out.push(el("h3", { text: "Cumulative cost over time" }));
  out.push(legend([["sw-instance", "instance"], ["sw-ebs", "EBS"], ["sw-storage", "checkpoint storage"],
    ["sw-idle", `idle periods (${idle.length})`], ["sw-waste", `interruptions (${interruptions.length})`],
    ["sw-ckpt", `checkpoint writes (${checkpoints.length}, ticks)`]]));
  out.push(stackedAreaChart({
    title: `Cumulative cost of ${detail.job_id} (USD) split by component`,
    points: timeline.points,
    keys: ["instance_usd", "ebs_usd", "checkpoint_storage_usd"],
    colours: ["#2f6fb3", "#e39b2d", "#4f9d69"],
    markers: { idle, interruptions, checkpoints },
  }));
  const last = timeline.points[timeline.points.length - 1];
  out.push(el("p", { class: "muted small" },
    `At ${utc(last.at)}: instance ${usd(last.instance_usd)} + EBS ${usd(last.ebs_usd)} + ` +
    `checkpoint storage ${usd(last.checkpoint_storage_usd)} = `,
    el("strong", { "data-fig": "job:timeline-total", text: usd(last.total_usd) })));

  // Estimate to finish, as a range.
  const target = params.get("target") || "";
  const input = el("input", { type: "number", name: "target", min: 1, value: target,
    placeholder: "e.g. 200000", "aria-label": "target steps" });
  const estimate = el("div", { "data-role": "estimate" });
  const form = el("form", { class: "inline", on: { submit: (e) => {
    e.preventDefault();
    location.hash = `#/job/${encodeURIComponent(id)}?target=${encodeURIComponent(input.value)}`;
  } } }, el("label", {}, "Target steps", input), el("button", { type: "submit", text: "Estimate" }));
  out.push(el("h3", { text: "Estimate to finish" }), form, estimate);
  if (!detail.steps_per_hour) {
    estimate.append(el("p", { class: "empty", text:
      "Needs at least two stepped checkpoints to measure a pace." }));
  } else if (target) {
    try {
      const e = await api(`${path}/estimate`, { target_steps: target });
      estimate.append(el("div", { class: "cards" },
        card("Cost to finish", `${usd(e.cost_usd.low)} – ${usd(e.cost_usd.high)}`,
          `${e.remaining_steps} steps left`, "estimate:cost"),
        card("Total at finish", `${usd(e.total_at_finish_usd.low)} – ${usd(e.total_at_finish_usd.high)}`,
          "what the job will have cost", "estimate:total"),
        card("Hours to finish", `${fixed(e.hours.low, 1)} – ${fixed(e.hours.high, 1)} h`,
          "at the measured pace, then slower", "estimate:hours")),
      el("ul", { class: "notes" }, e.assumptions.map((a) => el("li", { text: a }))));
    } catch (error) {
      estimate.append(showError(error));
    }
  } else {
    estimate.append(el("p", { class: "muted small", text:
      `Pace ${fixed(detail.steps_per_hour, 1)} steps/h, at step ${detail.last_checkpoint_step}: ` +
      "enter a target to see the range." }));
  }

  out.push(el("h3", { text: "Segments and their rates" }));
  const segRows = [];
  for (const inst of detail.instances) {
    for (const seg of inst.segments) {
      // An open segment carries its hours and cost accrued to the as-of moment (rule 9).
      const open = seg.state === "open";
      const cost = seg.cost_usd === null
        ? el("span", { class: "badge warn", text: seg.priced ? "not accrued" : "unpriced" })
        : { v: open ? `${usd(seg.cost_usd)} so far` : usd(seg.cost_usd), cls: "num",
          fig: open ? `segment:${inst.instance_id}:open` : null };
      segRows.push({ key: open ? `open:${inst.instance_id}` : null, cells: [inst.instance_id,
        inst.instance_type, utc(seg.start), open ? `running (to ${utc(detail.as_of)})` : utc(seg.end),
        { v: fixed(seg.billed_seconds / 3600, 2), cls: "num", fig: open ? `segment:${inst.instance_id}:hours` : null },
        cost,
        { v: seg.rates.map((r) => `${exactUsd(r.effective_usd_per_hour)}/h ${sourceText(`${r.source}:${r.checked_on}`)}`).join("; "),
          cls: "wrap small" }] });
    }
  }
  out.push(table(["Instance", "Type", "Start", "End", ["Hours", "num"], ["Cost", "num"], "Rate (source, checked)"],
    segRows, { name: "segments" }));
  if (interruptions.length || idle.length) {
    out.push(el("h3", { text: "Interruptions and idle periods" }));
    out.push(table(["Kind", "Instance", "From", "To"], [...interruptions, ...idle].map((i) => ({ cells: [
      i.kind, i.instance_id, utc(i.start || i.at), i.kind === "idle" ? utc(i.end) : i.action] })),
    { name: "events" }));
  }
  out.push(el("h3", { text: "Not in the figures yet" }));
  out.push(el("ul", { class: "notes" }, Object.entries(detail.unconfirmed_details || {}).map(
    ([k, v]) => el("li", {}, el("strong", { text: k }), `: ${v}`))));
  if (window.jobEfficiency) out.push(await window.jobEfficiency(id));
  return out;
};

function wallClockHours(detail) {
  const starts = [];
  const ends = [];
  for (const inst of detail.instances) {
    for (const seg of inst.segments) {
      starts.push(parseTime(seg.start));
      ends.push(seg.end ? parseTime(seg.end) : parseTime(detail.as_of));
    }
  }
  if (!starts.length) return null;
  return (Math.max(...ends) - Math.min(...starts)) / 3600000;
}

VIEWS.compare = async function compare(arg, params) {
  const ids = (params.get("jobs") || "").split(",").map((s) => s.trim()).filter(Boolean);
  if (ids.length < 2) {
    const out = await VIEWS.jobs(null, new URLSearchParams("days=30"));
    out[0] = el("h2", { text: "Trainium vs GPU: tick two to five jobs to compare" });
    return out;
  }
  const [body, ...details] = await Promise.all([
    api("/compare", { jobs: ids.join(",") }),
    ...ids.map((id) => api(`/jobs/${encodeURIComponent(id)}`)),
  ]);
  const rows = body.jobs;
  const walls = details.map(wallClockHours);
  const metric = (label, fn) => ({ cells: [label, ...rows.map((r, i) => fn(r, i))] });
  const m = (value, fig) => ({ v: value === null || value === undefined ? "–" : usd(value), cls: "num", fig });
  const unit = (value, fig) => ({ v: value === null || value === undefined ? "–" : perUnit(value), cls: "num", fig });
  const out = [
    el("h2", { text: "Trainium vs GPU" }),
    provenance(details[0].as_of, details.flatMap((d) => d.price_sources)),
    table(["", ...rows.map((r) => r.job_id)], [
      metric("Accelerators", (r) => r.accelerators.join(", ")),
      metric("Instance types", (r) => r.instance_types.join(", ")),
      metric("Total", (r) => ({ v: r.complete === false ? `at least ${usd(r.total_usd)}` : usd(r.total_usd),
        cls: "num", fig: `cmp:${r.job_id}:total` })),
      metric("$ per 1,000 steps", (r) => unit(r.cost_per_1k_steps_usd, `cmp:${r.job_id}:per1k`)),
      metric("$ per 1M tokens", (r) => unit(r.cost_per_million_tokens_usd, `cmp:${r.job_id}:per1m`)),
      metric("Steps (last checkpoint)", (r) => ({ v: r.steps ?? "–", cls: "num" })),
      metric("Tokens per step", (r) => ({ v: r.tokens_per_step ?? "–", cls: "num" })),
      metric("Wall-clock (h)", (r, i) => ({ v: fixed(walls[i], 1), cls: "num" })),
      metric("Instance-hours", (r) => ({ v: fixed(r.instance_hours, 2), cls: "num", fig: `cmp:${r.job_id}:hours` })),
      metric("Accelerator-hours", (r) => ({ v: r.accelerator_seconds === null ? "unknown"
        : fixed(r.accelerator_seconds / 3600, 2), cls: "num" })),
      metric("$ per accelerator-hour", (r) => unit(r.usd_per_accelerator_hour, `cmp:${r.job_id}:peraccel`)),
      metric("Utilization (measured)", (r) => ({ v: r.utilization === null ? "not measured"
        : `${pct(Number(r.utilization))} of ${pct(Number(r.utilization_measured_share))} measured`,
        cls: "num" })),
      metric("Effective accelerator-hours", (r) => ({ v: r.effective_accelerator_hours === null
        ? "not measured" : fixed(r.effective_accelerator_hours, 2), cls: "num" })),
      metric("Throughput (steps/h, tokens/s)", (r) => ({ v: r.steps_per_hour === null ? "not measured"
        : `${fixed(r.steps_per_hour, 1)} steps/h, ${r.tokens_per_second === null ? "tokens/s –"
          : `${fixed(r.tokens_per_second, 0)} tokens/s`}`, cls: "num", fig: `cmp:${r.job_id}:pace` })),
      metric("Retries (spot interruptions)", (r) => ({ v: String(r.interruptions), cls: "num" })),
      metric("Wasted: idle", (r) => m(r.wasted_idle_usd, `cmp:${r.job_id}:idle`)),
      metric("Wasted: rerun", (r) => m(r.wasted_rerun_usd, `cmp:${r.job_id}:rerun`)),
      metric("Warm-up (to first checkpoint or busy alarm)", (r) => r.warmup_seconds === null ? "not measured"
        : `${duration(r.warmup_seconds)} (${usd(r.warmup_usd)})`),
      metric("Priced completely", (r) => (r.complete ? "yes"
        : `no: ${missingText(details.find((d) => d.job_id === r.job_id) || {})}`)),
    ], { name: "compare" }),
  ];
  const bars = (title, key, axisUnit) => {
    const usable = rows.filter((r) => r[key] !== null && r[key] !== undefined);
    if (!usable.length) return null;
    return [el("h3", { text: title }), hbarChart({ title, unit: axisUnit,
      rows: usable.map((r, i) => ({ label: r.job_id, total: perUnit(r[key]),
        parts: [{ value: num(r[key]), colour: PALETTE[i % PALETTE.length], name: key }] })) })];
  };
  out.push(bars("$ per 1M tokens (lower is better)", "cost_per_million_tokens_usd", "USD"));
  out.push(bars("$ per 1,000 steps", "cost_per_1k_steps_usd", "USD"));
  out.push(el("h3", { text: "Comparability notes" }));
  out.push(body.notes.length ? el("ul", { class: "notes", "data-role": "notes" },
    body.notes.map((n) => el("li", { text: n })))
    : el("p", { class: "muted", text: "The jobs are comparable on every figure shown." }));
  out.push(el("p", { class: "muted small", text:
    "Utilization is measured: the accelerator metric's mean over the time it covers (of " +
    "the share shown); without datapoints it is not measured, never 100 % or 0 %. Idle " +
    "alarms say when an instance idled, not how busy it was. Wall-clock: first start to " +
    "last stop (or now)." }));
  return out;
};

VIEWS.spend = async function spend(arg, params) {
  const groupBy = params.get("group_by") || "team";
  const last = params.get("to") || addDays(await today(), -1);
  const first = params.get("from") || addDays(last, -13);
  const form = el("form", { class: "inline", on: { submit: (e) => {
    e.preventDefault();
    const data = new FormData(form);
    location.hash = `#/spend?${new URLSearchParams(data)}`;
  } } },
  el("label", {}, "Stack by tag", el("select", { name: "group_by" },
    GROUPING_KEYS.map((k) => el("option", { value: k, selected: k === groupBy, text: k })))),
  el("label", {}, "From", el("input", { type: "date", name: "from", value: first })),
  el("label", {}, "To", el("input", { type: "date", name: "to", value: last })),
  el("button", { type: "submit", text: "Show" }));
  const out = [el("h2", { text: "Spend by day" }), form];
  const body = await api("/summaries", { from: first, to: last, group_by: groupBy });
  const values = new Map();
  for (const day of body.days) {
    for (const [v, x] of tagValues(day)) values.set(v, (values.get(v) || 0) + num(x));
  }
  const names = [...values.keys()].sort((a, b) => values.get(b) - values.get(a));
  const shown = names.slice(0, 6);
  const noTag = `(no ${groupBy})`;
  const series = [...shown.map((n, i) => ({ name: n, colour: PALETTE[i] })),
    ...(names.length > 6 ? [{ name: "(other values)", colour: PALETTE[6] }] : []),
    { name: noTag, colour: NONE_COLOUR }];
  const days = body.days.map((d) => {
    const v = {};
    if (d.available) {
      let tagged = 0n;
      for (const [name, x] of tagValues(d)) {
        const key = shown.includes(name) ? name : "(other values)";
        v[key] = (v[key] || 0) + num(x);
        tagged += nanoOf(x);
      }
      v[noTag] = Number(nanoOf(d.total_usd) - tagged) / 1e9;
    }
    return { date: d.date, available: d.available, values: v };
  });
  const available = body.days.filter((d) => d.available);
  const total = sumNano(available.map((d) => d.total_usd));
  const tagged = available.reduce((acc, d) => acc + sumNano(tagValues(d).map(([, x]) => x)), 0n);
  const untagged = sumNano(available.map((d) => d.untagged_usd));
  const share = total > 0n ? Number((tagged * 10000n) / total) / 100 : null;
  const priced = await sourcesBetween(body.from, body.to);
  out.push(provenance(available.length ? available[available.length - 1].date + "T23:59:59Z" : null,
    priced.sources, [`daily summaries ${body.from} to ${body.to}; ${available.length} of ` +
    `${body.days.length} days summarized`, priced.note].filter(Boolean).join("; ")));
  out.push(el("div", { class: "cards" },
    card("Spend in range", usdNano(total), "summarized days", "spend:total"),
    card(`Carrying a ${groupBy} tag`, share === null ? "–" : `${share.toFixed(1)} %`,
      `${usdNano(tagged)} of the spend`, "spend:compliance"),
    card(`Without a ${groupBy} tag`, usdNano(total - tagged), "includes untagged accelerators", "spend:notag"),
    card("Untagged accelerators", usdNano(untagged), "instances without a job tag", "spend:untagged")));
  out.push(legend(series.map((s, i) => [s.name === noTag ? "sw-none" : `sw-${i}`, s.name])));
  out.push(stackedBarsChart({ days, series, title: `Daily spend stacked by ${groupBy} (USD)` }));
  out.push(table(["Day", ["Total", "num"], ...series.map((s) => [s.name, "num"]), ["Untagged accel.", "num"]],
    body.days.map((d, i) => ({ key: d.date, cells: [d.date,
      d.available ? money(d.total_usd, `day:${d.date}:total`) : "not summarized",
      ...series.map((s) => (d.available ? { v: s.name in days[i].values
        ? (s.name === noTag || s.name === "(other values)" ? shortUsdExact(days[i].values[s.name], d, s.name, groupBy, shown)
          : usd(d.by_tag[s.name])) : "–", cls: "num" } : "")),
      d.available ? money(d.untagged_usd) : ""] })), { name: "days" }));
  const lastDay = available.length ? available[available.length - 1].date : null;
  if (lastDay) {
    const summary = await api(`/summaries/${lastDay}`);
    out.push(el("h3", {}, `Tag compliance on ${lastDay} `,
      el("a", { href: `#/day/${lastDay}`, class: "small", text: "(the day's summary)" })));
    out.push(summary.tag_compliance.length ? table(["Instance", "Job", "Missing required tags"],
      summary.tag_compliance.map((row) => ({ cells: [row.instance_id, row.job_id, row.missing.join(", ")] })),
      { name: "compliance" }) : el("p", { class: "muted", text: "Every instance carries the required tags." }));
  }
  return out;
};

// A day's spend per value of the grouping key; the API's "(none)" entry (spend without
// the key) is left out: the views show it as the residual, total less the tagged values.
function tagValues(day) {
  return Object.entries(day.by_tag || {}).filter(([k]) => k !== "(none)");
}

function shortUsdExact(value, day, name, groupBy, shown) {
  // the residual columns, exact to the cent from the API's strings
  const tagged = tagValues(day);
  if (name === "(other values)") {
    return usdNano(sumNano(tagged.filter(([k]) => !shown.includes(k)).map(([, v]) => v)));
  }
  return usdNano(nanoOf(day.total_usd) - sumNano(tagged.map(([, v]) => v)));
}

function budgetCrossing(budget, threshold) {
  // One threshold of the budget's one forecast (crossed, projected, possible, not_projected).
  return ((budget.forecast || {}).crossings || []).find((c) => c.threshold === threshold) || null;
}

function crossingCell(crossing) {
  // The table's short form of the same words (the chart and the alerts give them whole).
  if (!crossing || crossing.state === "not_projected") return "not projected";
  if (crossing.state === "crossed") return "crossed";
  if (crossing.state === "possible") return `not projected (high end ${utc(crossing.high_at)})`;
  return utc(crossing.at);
}

function cutAt(points, t1) {
  // Points of a rising curve (time order), cut at t1: the last one moved onto t1.
  while (points.length > 2 && points[points.length - 2][0] >= t1) points.pop();
  const [a, b] = points.slice(-2);
  if (b[0] > t1 && b[0] > a[0]) points[points.length - 1] = [t1, a[1] + ((b[1] - a[1]) * (t1 - a[0])) / (b[0] - a[0])];
}

function budgetChart(budget, history) {
  const W = chartWidth(), H = 260, L = 56, R = W < 600 ? 84 : 110, T = 16, B = 40;
  const root = frame(W, H, `Budget ${budget.budget_id}: spend and its forecast against thresholds (USD)`);
  const forecast = budget.forecast || { jobs: [], crossings: [] };
  const amount = num(budget.amount_usd);
  const t0 = parseTime(budget.period_start);
  const asOf = parseTime(budget.as_of);
  const lowUntil = Math.max(asOf, ...forecast.jobs.map((j) => parseTime(j.low_end)));
  const highUntil = Math.max(asOf, ...forecast.jobs.map((j) => parseTime(j.high_end)));
  // A total budget has no end: the chart runs to the central projection's end (or the
  // high end's 100 % crossing), a day at least; the range is cut there.
  const hundredAt = (budgetCrossing(budget, 100) || {}).high_at;
  let t1 = parseTime(budget.period_end) || new Date(Math.max(asOf - 0 + 86400000,
    parseTime(budget.projected_until) || asOf, hundredAt ? parseTime(hundredAt) : asOf));
  const maxThreshold = Math.max(...budget.thresholds, 100) / 100;
  const top = Math.max(amount * maxThreshold, num(budget.projected_high_usd || budget.projected_total_usd), num(budget.spend_usd));
  const max = niceMax(top * 1.05);
  const start = history.length ? new Date(Math.max(t0, parseTime(`${history[0].date}T00:00:00Z`) - 0)) : t0;
  const xOf = (t) => L + ((t - start) / Math.max(1, t1 - start)) * (W - L - R);
  const yOf = (v) => T + (1 - v / max) * (H - T - B);
  yAxis(root, L, W - R, yOf, max, "USD in the period");
  for (const th of budget.thresholds) {
    const y = yOf((amount * th) / 100);
    root.append(svg("line", { x1: L, x2: W - R, y1: y, y2: y, stroke: th >= 100 ? "#c8423b" : "#e39b2d",
      "stroke-dasharray": "6 4", "data-mark": `threshold-${th}` }));
    const label = W < 600 ? `${th}% ${shortUsd((amount * th) / 100)}` : `${th} % (${shortUsd((amount * th) / 100)})`;
    root.append(svg("text", { x: W - R + 4, y: y + 4, text: label }));
  }
  // Spend so far: the daily summaries' cumulative (where readable), then now.
  const pts = [];
  let cum = 0;
  if (history.length) pts.push([start, 0]);
  for (const day of history) {
    cum += day.value;
    pts.push([parseTime(`${addDays(day.date, 1)}T00:00:00Z`), cum]);
  }
  pts.push([asOf, num(budget.spend_usd)]);
  const line = (points) => points.map(([t, v]) => `${xOf(t).toFixed(1)},${yOf(v).toFixed(1)}`).join(" ");
  root.append(svg("polyline", { points: line(pts), fill: "none", stroke: "#2f6fb3", "stroke-width": 2.5, "data-series": "spend" }));
  root.append(svg("circle", { cx: xOf(asOf), cy: yOf(num(budget.spend_usd)), r: 4, fill: "#2f6fb3" },
    svg("title", { text: `spend ${usd(budget.spend_usd)} at ${utc(budget.as_of)}` })));
  if (budget.projected_until) {
    const now = [asOf, num(budget.spend_usd)];
    // The range: the high end's curve passes through its own crossings (shaded to the low end's).
    const highPts = [now, ...forecast.crossings.filter((c) => c.high_at && parseTime(c.high_at) > asOf)
      .map((c) => [parseTime(c.high_at), num(c.amount_usd)]), [new Date(highUntil), num(budget.projected_high_usd)]];
    highPts.sort((a, b) => a[0] - b[0]);
    cutAt(highPts, t1);
    const lowPts = [now, [new Date(lowUntil), num(budget.projected_low_usd)]];
    cutAt(lowPts, t1);
    root.append(svg("polygon", { points: line([...highPts, lowPts[lowPts.length - 1]]),
      fill: "#6a4c93", "fill-opacity": 0.18, stroke: "#6a4c93", "stroke-opacity": 0.5, "stroke-width": 1,
      "data-series": "forecast-range" },
      svg("title", { text: `range ${usd(budget.projected_low_usd)} to ${usd(budget.projected_high_usd)} (${forecast.range || ""})` })));
    const highEnd = highPts[highPts.length - 1];
    // The high end's label stays inside the chart: its date only where there is room, and
    // drawn to the left of the curve's end when the right has none.
    const byWhen = highEnd[0] < highUntil && W >= 600 ? ` by ${utc(`${new Date(highUntil).toISOString().slice(0, 19)}Z`)}` : "";
    const highText = `high ${shortUsd(num(budget.projected_high_usd))}${byWhen}`;
    const hx = xOf(highEnd[0]);
    const highWidth = highText.length * 6.8;
    const toLeft = hx + 4 + highWidth > W;
    root.append(svg("text", { x: toLeft ? Math.min(W - 2, Math.max(highWidth + 2, hx - 4)) : hx + 4,
      y: yOf(highEnd[1]) + (toLeft ? -6 : 4), "text-anchor": toLeft ? "end" : "start",
      fill: "#6a4c93", text: highText }));
    // The central projection passes through its own threshold crossings.
    const central = [now, ...forecast.crossings.filter((c) => c.state === "projected")
      .map((c) => [parseTime(c.at), num(c.amount_usd)]), [parseTime(budget.projected_until), num(budget.projected_total_usd)]];
    central.sort((a, b) => a[0] - b[0]);
    root.append(svg("polyline", { points: line(central), fill: "none", stroke: "#6a4c93", "stroke-width": 2,
      "stroke-dasharray": "4 4", "data-series": "forecast" }, svg("title", { text:
      `forecast ${usd(budget.projected_total_usd)} by ${utc(budget.projected_until)}` })));
  }
  const hundred = budgetCrossing(budget, 100);
  const when = hundred && (hundred.state === "projected" ? hundred.at : hundred.state === "possible" ? hundred.high_at : null);
  if (when) {
    const x = xOf(parseTime(when));
    const projected = hundred.state === "projected";
    root.append(svg("line", { x1: x, x2: x, y1: T, y2: H - B, stroke: "#c8423b",
      "stroke-dasharray": projected ? null : "2 3", "data-mark": projected ? "crossing" : "high-crossing" }));
    // the label on the side of the line with room for it (shorter on a narrow chart)
    const moment = W < 600 ? utc(when).slice(5) : utc(when);
    const text = W < 600
      ? (projected ? `100 % at ${moment}` : `high end 100 % at ${moment}`)
      : (projected ? `100 % projected at ${moment}` : `100 % not projected; high end at ${moment}`);
    const width = text.length * 6.8;
    const left = x - 4 - width >= 0 || x + 4 + width > W;
    // Either side, the label is kept inside the chart.
    const tx = left ? Math.min(W - 2, Math.max(width + 2, x - 4)) : Math.max(2, Math.min(x + 4, W - 2 - width));
    root.append(svg("text", { x: tx, y: T + 10, "text-anchor": left ? "end" : "start",
      fill: "#c8423b", text }));
  }
  timeAxis(root, start, t1, xOf, H - B);
  return root;
}

function jobProjections(budget) {
  // How each running job was projected (its method and ends), then the stated assumption.
  const forecast = budget.forecast || { jobs: [] };
  if (!forecast.jobs.length) return el("p", { class: "note", text: "Nothing in scope is running: no further spend is projected." });
  const rows = forecast.jobs.map((j) => ({ key: j.job_id, cells: [j.job_id,
    j.method === "declared_end" ? `declared end (${j.declared_hours} h)` :
      `assumed length${j.past_declared_end ? `, past its declared ${j.declared_hours} h` : ""}`,
    utc(j.end), j.method === "declared_end" ? "–" : `${utc(j.low_end)} to ${utc(j.high_end)}`] }));
  return el("div", {}, table(["Running job", "Projected", "To", "80 % range"], rows, { name: `budget-jobs-${budget.budget_id}` }),
    el("p", { class: "note", text: `Assumed: ${forecast.assumption}. Range: ${forecast.range}.` }));
}

async function budgetHistory(budget, lastDay) {
  // Daily spend of the budget's scope from the stored daily summaries (finance and admins).
  if (budget.period === "day" || !budget.period_start) return [];
  const scope = budget.scope || {};
  let first = budget.period_start.slice(0, 10);
  if (first > lastDay) return [];
  if (addDays(lastDay, -92) > first) first = addDays(lastDay, -92);
  let key = null;
  let value = null;
  if (scope.tag) {
    const keys = Object.keys(scope.tag);
    if (keys.length !== 1) return [];
    key = keys[0];
    value = scope.tag[key];
  } else if (!scope.account) {
    return [];
  }
  try {
    const body = await api("/summaries", { from: first, to: lastDay, group_by: key });
    return body.days.filter((d) => d.available).map((d) => ({ date: d.date,
      value: num(key ? (d.by_tag || {})[value] || 0 : d.total_usd) }));
  } catch (error) {
    return [];
  }
}

VIEWS.budgets = async function budgets() {
  const body = await api("/budgets");
  const out = [el("h2", { text: "Budgets" })];
  if (!body.budgets.length) {
    out.push(el("p", { class: "empty", text:
      "No budget is set. Finance and admins set them in CDK context or with `costtracker budgets set`." }));
    return out;
  }
  const day = addDays(await today(), -1);
  const asOf = (await api("/jobs", { limit: 1 })).jobs.map((j) => j.as_of)[0] || null;
  // The price sources of the jobs the budgets' periods hold (the API reads at most 92 days).
  const last = addDays(day, 1);
  const starts = body.budgets.map((b) => (b.period_start || "").slice(0, 10)).filter(Boolean).sort();
  const first = starts.length && starts[0] > addDays(last, -91) ? starts[0] : addDays(last, -91);
  const priced = await sourcesBetween(first, last);
  out.push(provenance(asOf, priced.sources, ["spend as the ledger knows it now; one forecast: each running job at its current burn to its declared or assumed end, with an 80 % range",
    priced.note].filter(Boolean).join("; ")));
  out.push(table(["Budget", "Scope", "Period", ["Spend", "num"], ["Amount", "num"], ["%", "num"],
    ["Burn $/h", "num"], ["Forecast (range)", "num"], "100 %", "Source"],
  body.budgets.map((b) => {
    const hundred = budgetCrossing(b, 100);
    const words = crossingCell(hundred);
    const badge = hundred && hundred.state === "projected" ? "badge warn" : hundred && hundred.state === "crossed" ? "badge warn" : null;
    return { key: b.budget_id, cells: [b.budget_id, scopeText(b.scope),
      `${b.period} (${b.period_key})`, money(b.spend_usd, `budget:${b.budget_id}:spend`),
      money(b.amount_usd, `budget:${b.budget_id}:amount`), { v: `${b.percent} %`, cls: "num" },
      { v: `${perUnit(b.burn_rate_usd_per_hour)}/h`, cls: "num" },
      { v: `${usd(b.projected_total_usd)} (${usd(b.projected_low_usd)} to ${usd(b.projected_high_usd)})`,
        cls: "num", fig: `budget:${b.budget_id}:forecast` },
      badge ? el("span", { class: badge, text: words, "data-fig": `budget:${b.budget_id}:crossing` })
        : el("span", { text: words, "data-fig": `budget:${b.budget_id}:crossing` }),
      b.source] };
  }), { name: "budgets" }));
  for (const b of body.budgets) {
    const history = await budgetHistory(b, day);
    out.push(el("h3", { text: `${b.budget_id}: ${usd(b.spend_usd)} of ${usd(b.amount_usd)} (${b.percent} %)` }));
    out.push(legend([["sw-instance", history.length ? "spend (daily summaries, then now)" : "spend now"],
      ["sw-3", "forecast (central; shaded: 80 % range)"], ["sw-1", "thresholds"], ["sw-waste", "100 %"]]));
    out.push(budgetChart({ ...b, as_of: asOf }, history));
    out.push(jobProjections(b));
  }
  return out;
};

function scopeText(scope) {
  if (!scope) return "–";
  if (scope.job) return `job ${scope.job}`;
  if (scope.tag) return Object.entries(scope.tag).map(([k, v]) => `${k}=${v}`).join(" and ");
  return "the whole account";
}

// ---------------------------------------------------------------- context

// The demo says what its data is: a scenario replayed to its end, not the live ledger.
// /ui/context.json exists only beside `costtracker demo` (a 404 elsewhere: nothing shown).
async function showContext() {
  const box = document.getElementById("context");
  if (!box) return;
  try {
    const response = await fetch("/ui/context.json", { headers: { Accept: "application/json" } });
    if (!response.ok) return;
    const context = await response.json();
    if (context.mode !== "demo") return;
    box.replaceChildren(el("strong", { text: `Demo data as of ${utc(context.as_of)}` }),
      `: the end of ${context.scenario}, replayed on the embedded emulator. Every view answers ` +
      "as of that moment, not the wall clock.");
    box.hidden = false;
  } catch (error) {
    // no context: a deployed API's dashboard
  }
}

// ---------------------------------------------------------------- router

// Views of their own files (efficiency.js: Why did it change, Efficiency, a day's summary).
Object.assign(VIEWS, window.EXTRA_VIEWS || {});

function route() {
  const hash = location.hash.replace(/^#\/?/, "") || "now";
  const [pathPart, query = ""] = hash.split("?");
  const [view, ...rest] = pathPart.split("/");
  return { view: VIEWS[view] ? view : "now", arg: rest.join("/"), params: new URLSearchParams(query) };
}

async function render() {
  const token = ++renderToken;
  const { view, arg, params } = route();
  for (const link of document.querySelectorAll("nav a")) {
    link.classList.toggle("active", link.dataset.view === view || (view === "job" && link.dataset.view === "jobs"));
  }
  MAIN.setAttribute("aria-busy", "true");
  MAIN.dataset.view = view;
  let nodes;
  try {
    nodes = await VIEWS[view](arg, params);
  } catch (error) {
    nodes = [el("h2", { text: "Could not load this view" }), showError(error)];
  }
  if (token !== renderToken) return;
  MAIN.replaceChildren(...nodes.flat(Infinity).filter(Boolean));
  MAIN.setAttribute("aria-busy", "false");
  document.title = `costtracker · ${view}`;
}

window.addEventListener("hashchange", render);
let drawnWidth = window.innerWidth;
let resizeTimer = null;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    if (Math.abs(window.innerWidth - drawnWidth) < 40) return;
    drawnWidth = window.innerWidth;
    render(); // charts are drawn for the width
  }, 250);
});
showContext();
render();
