// Efficiency views of the dashboard: "Why did it change" (use, efficiency, price, other,
// to the cent), a team's efficiency, a job's efficiency with its checkpoint storage in
// GB over time, the efficiency of the jobs running now, and one day's summary. Loaded
// before app.js; its functions use app.js's helpers (el, api, card, table, ...) when
// called. Every figure is measured or says "not measured", never a default.
"use strict";

window.EXTRA_VIEWS = window.EXTRA_VIEWS || {};

function measured(value, digits = 1) {
  return value === null || value === undefined ? "not measured" : fixed(value, digits);
}

function measuredShare(value) {
  return value === null || value === undefined ? "not measured" : pct(value);
}

function perUnitOrDash(value) {
  return value === null || value === undefined ? "–" : perUnit(value);
}

// ---------------------------------------------------------------- a job's efficiency

// Charts are drawn for the width they get (app.js's chartWidth), not scaled down.
function drawWidth() {
  return typeof chartWidth === "function" ? chartWidth() : 900;
}

function storageChart(points) {
  const W = drawWidth(), H = W < 600 ? 200 : 220, L = 64, R = 14, T = 18, B = 44;
  const root = frame(W, H, "Checkpoint storage held over time (GB)");
  const t0 = parseTime(points[0].at), t1 = parseTime(points[points.length - 1].at);
  const max = niceMax(Math.max(...points.map((p) => num(p.gb))) * 1.05);
  const xOf = (t) => L + ((t - t0) / Math.max(1, t1 - t0)) * (W - L - R);
  const yOf = (v) => T + (1 - v / max) * (H - T - B);
  for (let i = 0; i <= 4; i += 1) {
    const v = (max * i) / 4;
    root.append(svg("line", { x1: L, x2: W - R, y1: yOf(v), y2: yOf(v), class: "axis" }));
    root.append(svg("text", { x: L - 6, y: yOf(v) + 4, "text-anchor": "end", text: `${fixed(v, 0)} GB` }));
  }
  timeAxis(root, t0, t1, xOf, H - B);
  const path = points.map((p, i) => `${i ? "L" : "M"}${xOf(parseTime(p.at)).toFixed(1)},${yOf(num(p.gb)).toFixed(1)}`);
  root.append(svg("path", { d: path.join(" "), fill: "none", stroke: "#4f9d69", "stroke-width": 2,
    "data-series": "storage" }));
  return root;
}

function efficiencyCards(e, prefix) {
  return el("div", { class: "cards" },
    card("Accelerator-hours", measured(e.accelerator_hours), "running hours x chips/GPUs", `${prefix}:acch`),
    card("Effective accelerator-hours", measured(e.effective_accelerator_hours),
      "measured utilization x accelerators, measured time only", `${prefix}:effh`),
    card("Utilization", measuredShare(e.utilization),
      e.utilization_measured_share === null ? "no datapoint" : `over ${pct(e.utilization_measured_share)} of the time`,
      `${prefix}:util`),
    card("Throughput", e.steps_per_hour === null ? "not measured" : `${fixed(e.steps_per_hour, 1)} steps/h`,
      e.tokens_per_second === null ? "tokens/s: no tokens-per-step tag" : `${fixed(e.tokens_per_second, 0)} tokens/s`,
      `${prefix}:pace`),
    card("$ per accelerator-hour", perUnitOrDash(e.usd_per_accelerator_hour), "instance cost / accelerator-hours",
      `${prefix}:peracch`),
    card("$ per 1k steps", perUnitOrDash(e.cost_per_1k_steps_usd),
      `$/1M tokens ${perUnitOrDash(e.cost_per_million_tokens_usd)}`, `${prefix}:per1k`),
    card("Retries", String(e.interruptions), "spot interruptions (work since the last checkpoint redone)",
      `${prefix}:retries`),
    card("Rerun waste", usd(e.wasted_rerun_usd),
      e.rerun_share_of_instance_cost === null ? "" : `${pct(e.rerun_share_of_instance_cost)} of instance cost`,
      `${prefix}:rerun`));
}

// The job view's efficiency section (app.js calls it at the end of the job view).
window.jobEfficiency = async function jobEfficiency(jobId) {
  const e = await api(`/jobs/${encodeURIComponent(jobId)}/efficiency`, { points: 60 });
  const out = [el("h3", { text: "Efficiency" }), efficiencyCards(e, "eff")];
  if (e.storage_gb.length) {
    const last = e.storage_gb[e.storage_gb.length - 1];
    out.push(el("p", { class: "muted small", "data-fig": "eff:storage",
      text: `Checkpoint storage now ${fixed(last.gb, 2)} GB (GB = 2^30 bytes), costing ${usd(e.checkpoint_storage_usd)} so far` }));
    out.push(storageChart(e.storage_gb));
  } else {
    out.push(el("p", { class: "empty", text: "No checkpoint written: no storage to show." }));
  }
  return out;
};

// Now's efficiency section: the running jobs' accelerator-hours and how busy they are.
window.nowEfficiency = async function nowEfficiency(running) {
  if (!running.length) return [];
  const rows = running.slice(0, 20).map((j) => ({ key: j.job_id, cells: [
    el("a", { href: `#/job/${encodeURIComponent(j.job_id)}`, text: j.job_id }),
    { v: measured(j.accelerator_seconds === null ? null : j.accelerator_seconds / 3600), cls: "num" },
    { v: measuredShare(j.utilization), cls: "num", fig: `now:${j.job_id}:util` },
    { v: j.steps_per_hour === null ? "–" : fixed(j.steps_per_hour, 1), cls: "num" },
    { v: perUnitOrDash(j.usd_per_accelerator_hour), cls: "num" },
    { v: perUnitOrDash(j.cost_per_1k_steps_usd), cls: "num" }] }));
  return [el("h3", { text: "Running jobs: efficiency" }),
    table(["Job", ["Acc-hours", "num"], ["Utilization", "num"], ["Steps/h", "num"],
      ["$/acc-hour", "num"], ["$/1k steps", "num"]], rows, { name: "now-efficiency" }),
    running.length > 20 ? el("p", { class: "muted small", text: `and ${running.length - 20} more running jobs` }) : null];
};

// ---------------------------------------------------------------- a team's efficiency

window.EXTRA_VIEWS.efficiency = async function efficiency(arg, params) {
  const last = params.get("to") || await today();
  const first = params.get("from") || addDays(last, -13);
  const team = params.get("team") || "";
  const form = el("form", { class: "inline", on: { submit: (e) => {
    e.preventDefault();
    const data = [...new FormData(form).entries()].filter(([, v]) => v);
    location.hash = `#/efficiency?${new URLSearchParams(data)}`;
  } } },
  el("label", {}, "Team", el("input", { type: "text", name: "team", value: team, placeholder: "any" })),
  el("label", {}, "From", el("input", { type: "date", name: "from", value: first })),
  el("label", {}, "To", el("input", { type: "date", name: "to", value: last })),
  el("button", { type: "submit", text: "Show" }));
  const [body, priced] = await Promise.all([api("/efficiency", { team, from: first, to: last }),
    sourcesBetween(first, last)]);
  const t = body.totals;
  const out = [el("h2", { text: team ? `Efficiency of team ${team}` : "Efficiency" }), form,
    provenance(body.as_of, priced.sources, `jobs active ${first} to ${last}`),
    el("div", { class: "cards" },
      card("Accelerator-hours", measured(t.accelerator_hours), `${t.jobs} jobs`, "team:acch"),
      card("Effective accelerator-hours", measured(t.effective_accelerator_hours),
        `${t.jobs_measured} of ${t.jobs} jobs measured`, "team:effh"),
      card("$ per accelerator-hour", perUnitOrDash(t.usd_per_accelerator_hour), "instance cost / accelerator-hours",
        "team:peracch"),
      card("Spend", usd(t.total_usd), "all the jobs' costs", "team:total"),
      card("Retries", String(t.interruptions), `rerun waste ${usd(t.wasted_rerun_usd)}`, "team:retries"),
      card("Idle waste", usd(t.wasted_idle_usd), "accelerators idle (alarms)", "team:idle"))];
  if (!body.jobs.length) {
    out.push(el("p", { class: "empty", text: "No job of this scope was active in the range." }));
    return out;
  }
  out.push(table(["Job", ["Acc-hours", "num"], ["Effective", "num"], ["Utilization", "num"],
    ["Steps/h", "num"], ["Tokens/s", "num"], ["$/acc-hour", "num"], ["$/1k steps", "num"],
    ["$/1M tokens", "num"], ["Retries", "num"], ["Rerun waste", "num"]],
  body.jobs.map((j) => ({ key: j.job_id, cells: [
    el("a", { href: `#/job/${encodeURIComponent(j.job_id)}`, text: j.job_id }),
    { v: measured(j.accelerator_hours), cls: "num", fig: `team:${j.job_id}:acch` },
    { v: measured(j.effective_accelerator_hours), cls: "num" },
    { v: measuredShare(j.utilization), cls: "num", fig: `team:${j.job_id}:util` },
    { v: j.steps_per_hour === null ? "–" : fixed(j.steps_per_hour, 1), cls: "num" },
    { v: j.tokens_per_second === null ? "–" : fixed(j.tokens_per_second, 0), cls: "num" },
    { v: perUnitOrDash(j.usd_per_accelerator_hour), cls: "num", fig: `team:${j.job_id}:peracch` },
    { v: perUnitOrDash(j.cost_per_1k_steps_usd), cls: "num" },
    { v: perUnitOrDash(j.cost_per_million_tokens_usd), cls: "num" },
    { v: String(j.interruptions), cls: "num" },
    money(j.wasted_rerun_usd)] })), { name: "team-efficiency" }));
  if (body.more_jobs) out.push(el("p", { class: "muted small", text: `and ${body.more_jobs} more jobs (the API pages them)` }));
  out.push(el("ul", { class: "notes" }, body.notes.map((n) => el("li", { text: n }))));
  return out;
};

// ---------------------------------------------------------------- why did it change

const CHANGE_PARTS = [
  ["use", "more or less work", "#2f6fb3"],
  ["efficiency", "accelerator-hours per unit of work", "#c8423b"],
  ["price", "$ per accelerator-hour", "#6a4c93"],
  ["other", "EBS, storage, CPU, managed", "#e39b2d"],
];

function changeWaterfall(body) {
  const W = drawWidth(), H = W < 600 ? 240 : 300, L = 56, R = 10, T = 18, B = 46;
  const root = frame(W, H, "Change in spend: period 0 to period 1, by cause (USD)");
  const before = num(body.before.total_usd);
  const bars = [["period 0", 0, before, "#8a94a0"]];
  let level = before;
  for (const [name, , colour] of CHANGE_PARTS) {
    const v = num(body.change[`${name}_usd`]);
    bars.push([name, level, level + v, colour]);
    level += v;
  }
  bars.push(["period 1", 0, num(body.after.total_usd), "#8a94a0"]);
  const max = niceMax(Math.max(...bars.map(([, a, b]) => Math.max(a, b))) * 1.05);
  const yOf = (v) => T + (1 - v / max) * (H - T - B);
  yAxis(root, L, W - R, yOf, max, "USD in the period");
  const slot = (W - L - R) / bars.length;
  bars.forEach(([name, a, b, colour], i) => {
    const x = L + i * slot + slot * 0.2, w = slot * 0.6;
    const top = yOf(Math.max(a, b));
    root.append(svg("rect", { x, y: top, width: w, height: Math.max(1, Math.abs(yOf(a) - yOf(b))),
      fill: colour, "data-bar": name }));
    const delta = b - a;
    const label = i === 0 || i === bars.length - 1 ? shortUsd(b) : `${delta >= 0 ? "+" : ""}${shortUsd(delta)}`;
    root.append(svg("text", { x: x + w / 2, y: top - 4, "text-anchor": "middle", text: label }));
    root.append(svg("text", { x: x + w / 2, y: H - B + 14, "text-anchor": "middle", text: name }));
  });
  return root;
}

const BASIS_SHORT = { steps: "per 1k steps", utilization: "per utilized hour", none: "not measured",
  one_period: "one period only" };

window.EXTRA_VIEWS.change = async function change(arg, params) {
  const end = addDays(await today(), -1);
  const to1 = params.get("to1") || end;
  const from1 = params.get("from1") || addDays(to1, -6);
  const to0 = params.get("to0") || addDays(from1, -1);
  const from0 = params.get("from0") || addDays(to0, -6);
  const scope = { team: params.get("team") || "", project: params.get("project") || "",
    job_id: params.get("job_id") || "" };
  const field = (label, name, value, type = "date") => el("label", {}, label,
    el("input", { type, name, value, placeholder: type === "text" ? "any" : null }));
  const form = el("form", { class: "inline", on: { submit: (e) => {
    e.preventDefault();
    const data = [...new FormData(form).entries()].filter(([, v]) => v);
    location.hash = `#/change?${new URLSearchParams(data)}`;
  } } }, field("Period 0 from", "from0", from0), field("to", "to0", to0),
  field("Period 1 from", "from1", from1), field("to", "to1", to1),
  field("Team", "team", scope.team, "text"), field("Project", "project", scope.project, "text"),
  field("Job", "job_id", scope.job_id, "text"), el("button", { type: "submit", text: "Explain" }));
  const [body, priced] = await Promise.all([api("/change", { from0, to0, from1, to1, ...scope }),
    sourcesBetween(from0, to1)]);
  const c = body.change;
  const rose = nanoOf(c.total_usd) >= 0n;
  const verdict = el("p", { class: "verdict", "data-role": "verdict" },
    `Spend ${rose ? "rose" : "fell"} by `,
    el("strong", { "data-fig": "change:total", text: usd(String(c.total_usd).replace("-", "")) }),
    `: ${signedUsd(c.use_usd)} from ${nanoOf(c.use_usd) >= 0n ? "more" : "less"} work (use), `,
    `${signedUsd(c.efficiency_usd)} from ${nanoOf(c.efficiency_usd) > 0n ? "more" : "fewer"} accelerator-hours per unit of work (efficiency), `,
    `${signedUsd(c.price_usd)} from ${nanoOf(c.price_usd) > 0n ? "a dearer" : "a cheaper or the same"} accelerator-hour (price), `,
    `${signedUsd(c.other_usd)} other. Waste changed by ${signedUsd(c.wasted_usd)}.`);
  const rows = body.by_job.map((j) => ({ key: j.job_id, cells: [
    j.job_id, BASIS_SHORT[j.efficiency_basis] || j.efficiency_basis,
    { v: fixed(j.before.accelerator_hours, 1), cls: "num" }, { v: fixed(j.after.accelerator_hours, 1), cls: "num" },
    { v: perUnitOrDash(j.before.cost_per_1k_steps_usd), cls: "num" }, { v: perUnitOrDash(j.after.cost_per_1k_steps_usd), cls: "num" },
    ...["use", "efficiency", "price", "other"].map((k) => ({ v: signedUsd(j.change[`${k}_usd`]), cls: "num",
      fig: `change:${j.job_id}:${k}` })),
    { v: signedUsd(j.change.total_usd), cls: "num" }] }));
  return [
    el("h2", { text: "Why did it change" }), form,
    provenance(body.as_of, priced.sources, `scope: ${[scope.team && `team ${scope.team}`, scope.project && `project ${scope.project}`,
      scope.job_id && `job ${scope.job_id}`].filter(Boolean).join(", ") || "everything you can see"}`),
    verdict,
    el("div", { class: "cards" },
      ...CHANGE_PARTS.map(([name, sub]) => card(name[0].toUpperCase() + name.slice(1),
        signedUsd(c[`${name}_usd`]), sub, `change:${name}`)),
      card("Wasted (idle + rerun)", signedUsd(c.wasted_usd),
        `idle ${signedUsd(c.wasted_idle_usd)}, rerun ${signedUsd(c.wasted_rerun_usd)}`, "change:wasted")),
    legend(CHANGE_PARTS.map(([name], i) => [["sw-0", "sw-4", "sw-3", "sw-1"][i], name])),
    changeWaterfall(body),
    el("h3", { text: "Each job on its own (steps are never added across jobs)" }),
    table(["Job", "Efficiency measured", ["Acc-h 0", "num"], ["Acc-h 1", "num"], ["$/1k steps 0", "num"],
      ["$/1k steps 1", "num"], ["Use", "num"], ["Efficiency", "num"], ["Price", "num"], ["Other", "num"],
      ["Change", "num"]], rows, { name: "change-jobs" }),
    body.others.jobs ? el("p", { class: "muted small",
      text: `and ${body.others.jobs} more jobs, ${signedUsd(body.others.total_usd)}` }) : null,
    table(["", [`Period 0 (${from0} to ${to0})`, "num"], [`Period 1 (${from1} to ${to1})`, "num"]],
      [["Accelerator-hours", "accelerator_hours", (v) => fixed(v, 2)],
        ["$ per accelerator-hour", "usd_per_accelerator_hour", perUnitOrDash],
        ["Accelerator instance cost", "accelerator_usd", usd], ["Total spend", "total_usd", usd],
        ["Wasted: idle", "wasted_idle_usd", usd], ["Wasted: rerun", "wasted_rerun_usd", usd],
        ["Jobs with spend", "jobs", String]].map(([label, key, fmt]) => ({ cells: [label,
        { v: fmt(body.before[key]), cls: "num", fig: `change:${key}:0` },
        { v: fmt(body.after[key]), cls: "num", fig: `change:${key}:1` }] })), { name: "change" }),
    el("ul", { class: "notes" }, body.notes.map((n) => el("li", { text: n }))),
  ];
};

// ---------------------------------------------------------------- one day's summary

window.EXTRA_VIEWS.day = async function day(arg) {
  if (!arg) return [el("p", { class: "empty", text: "Pick a day from the Spend view." })];
  const [s, priced] = await Promise.all([api(`/summaries/${encodeURIComponent(arg)}`),
    sourcesBetween(arg, arg)]);
  const out = [el("h2", { text: `Daily summary ${s.date} (${s.timezone || "UTC"})` }),
    provenance(s.as_of, priced.sources, s.complete ? "fully priced" : "incomplete: some time has no price yet"),
    el("div", { class: "cards" },
      card("Spend", s.complete ? usd(s.total_usd) : `at least ${usd(s.total_usd)}`, "estimated", "daysum:total"),
      card("Change vs the day before", s.change_vs_previous_day_usd === null ? "–" : signedUsd(s.change_vs_previous_day_usd),
        "", "daysum:change"),
      card(s.trailing_mean_days ? `Daily mean of the previous ${s.trailing_mean_days} day${s.trailing_mean_days === 1 ? "" : "s"}` : "Daily mean",
        s.trailing_mean_usd === null || s.trailing_mean_usd === undefined ? "no day before" : usd(s.trailing_mean_usd), "", "daysum:mean"),
      card("Untagged", usd(s.untagged_usd), `${s.untagged_instances.length} instances to tag`, "daysum:untagged"))];
  for (const [key, values] of Object.entries(s.by_tag)) {
    const named = Object.entries(values).filter(([v]) => v !== "(none)")
      .sort((a, b) => num(b[1]) - num(a[1]));
    out.push(el("h3", { text: `By ${key}` }));
    out.push(table([key, ["Spend", "num"]], [...named, ["(none)", values["(none)"] || "0"]].map(([v, x]) => ({
      key: v, cells: [v === "(none)" ? `(none): jobs without ${key}` : v, money(x, `daysum:${key}:${v}`)] })),
    { name: `day-${key}` }));
  }
  out.push(el("h3", { text: "Instances missing required tags" }));
  out.push(s.tag_compliance.length ? table(["Instance", "Job", "Missing"], s.tag_compliance.slice(0, 100).map((c) => ({
    cells: [c.instance_id, c.job_id, c.missing.join(", ")] })), { name: "day-compliance" })
    : el("p", { class: "muted", text: "Every instance carries the required tags." }));
  return out;
};
