// sparsroof HTML report: builds the page from the JSON in #report-data.
// Every string of the data goes in through textContent or setAttribute, never as markup.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const NS = "http://www.w3.org/2000/svg";
  const PREFIX = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""],
    [1e-3, "m"], [1e-6, "u"], [1e-9, "n"], [1e-12, "p"]];

  const display = {};
  data.display.forEach(function (key, i) { display[key] = i; });
  const rows = data.rows.map(function (values, id) {
    const row = { id: id, cells: data.cells[id] };
    data.columns.forEach(function (c, j) { row[c] = values[j]; });
    return row;
  });
  const marks = rows.map(function () { return []; });  // SVG elements of each row
  const shownRows = rows.map(function () { return true; });

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(NS, tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function cell(row, key) { return row.cells[display[key]]; }
  function unique(values) {
    return Array.from(new Set(values)).sort(function (a, b) {
      return String(a).localeCompare(String(b), undefined, { numeric: true });
    });
  }
  function siTick(v, unit) {  // an axis tick with an SI prefix: 1e9 FLOP/s -> "1 GFLOP/s"
    const p = PREFIX.find(function (e) { return v >= e[0] * 0.999; }) || PREFIX[PREFIX.length - 1];
    return String(Number((v / p[0]).toPrecision(3))) + (unit ? " " + p[1] + unit : p[1]);
  }
  function plural(n, word) { return n.toLocaleString("en") + " " + word + (n === 1 ? "" : "s"); }

  const classes = unique(rows.map(function (r) { return r["class"]; }));
  // each class's [colour, face, edge], as the figures draw it
  function colorOf(label) { return (data.class_styles[label] || ["#555", "#555", "#fff"])[0]; }
  function faceOf(label) { return (data.class_styles[label] || ["#555", "#555", "#fff"])[1]; }
  function edgeOf(label) { return (data.class_styles[label] || ["#555", "#555", "#fff"])[2]; }
  const specs = Array.from(new Set(rows.map(function (r) { return r.spec; })));

  // -- tooltip -----------------------------------------------------------------------
  const tip = document.getElementById("tip");
  function describe(row) {
    const lines = [
      [row["class"], row.spec].join(" · "),
      [row.format, row.model, row.kernel + (row.d !== null ? " d=" + row.d : ""),
        row.ordering].filter(Boolean).join(" · "),
      "AI " + cell(row, "ai") + " F/B · " + cell(row, "attainable_flops"),
      "SoL " + cell(row, "sol_s") + " · bound: " + cell(row, "bound")];
    if (row.measured_s !== null) {
      lines.push("measured " + cell(row, "measured_s") + " · " + cell(row, "pct_sol") + " of SoL");
    }
    return lines;
  }
  function showTip(event, title, lines) {
    tip.replaceChildren(el("b", {}, title));
    lines.forEach(function (line) { tip.appendChild(el("div", {}, line)); });
    tip.hidden = false;
    const x = Math.min(event.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
    const y = event.clientY + 14 + tip.offsetHeight > window.innerHeight
      ? event.clientY - tip.offsetHeight - 10 : event.clientY + 14;
    tip.style.left = Math.max(4, x) + "px";
    tip.style.top = Math.max(4, y) + "px";
  }
  function hideTip() { tip.hidden = true; }
  function hoverRow(mark, row, others) {
    mark.addEventListener("mouseover", function (e) {
      const lines = describe(row);
      const same = (others || []).filter(function (o) { return o !== row && shownRows[o.id]; });
      if (same.length) {
        lines.push("also at this point (" + same.length + "):");
        same.slice(0, 6).forEach(function (o) {
          lines.push("  " + [o.matrix, o.format, o.model, o.ordering].filter(Boolean).join(" · "));
        });
        if (same.length > 6) lines.push("  and " + (same.length - 6) + " more");
      }
      showTip(e, row.matrix, lines);
      mark.classList.add("hot");
      if (rowElements[row.id]) rowElements[row.id].classList.add("hot");
    });
    mark.addEventListener("mouseout", function () {
      hideTip();
      mark.classList.remove("hot");
      if (rowElements[row.id]) rowElements[row.id].classList.remove("hot");
    });
    marks[row.id].push(mark);
  }

  // -- log and linear scales, axes -------------------------------------------------------
  function logScale(lo, hi, a, b) {
    const l0 = Math.log10(lo), l1 = Math.log10(hi);
    const f = function (v) { return a + (Math.log10(v) - l0) / (l1 - l0) * (b - a); };
    f.lo = lo;
    f.hi = hi;
    f.ticks = function () {
      const steps = l1 - l0 < 2.5 ? [1, 2, 5] : [1];
      const out = [];
      for (let k = Math.floor(l0) - 1; k <= Math.ceil(l1); k++) {
        steps.forEach(function (m) {
          const v = m * Math.pow(10, k);
          if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v);
        });
      }
      return out;
    };
    return f;
  }
  function linScale(lo, hi, a, b) {
    const f = function (v) { return a + (v - lo) / (hi - lo) * (b - a); };
    f.ticks = function () {
      const step = Math.pow(10, Math.floor(Math.log10((hi - lo) / 4)));
      const nice = [1, 2, 2.5, 5, 10].map(function (m) { return m * step; })
        .find(function (s) { return (hi - lo) / s <= 8; });
      const out = [];
      for (let v = Math.ceil(lo / nice) * nice; v <= hi + 1e-9; v += nice) out.push(v);
      return out;
    };
    return f;
  }
  function decades(lo, hi) {
    return [Math.pow(10, Math.floor(Math.log10(lo))), Math.pow(10, Math.ceil(Math.log10(hi)))];
  }
  function xAxis(g, x, y0, y1, fmt) {
    x.ticks().forEach(function (v) {
      g.appendChild(svg("line", { x1: x(v), x2: x(v), y1: y0, y2: y1, "class": "grid" }));
      g.appendChild(svg("text", { x: x(v), y: y1 + 15, "text-anchor": "middle" }, fmt(v)));
    });
  }
  function yAxis(g, y, x0, x1, fmt) {
    y.ticks().forEach(function (v) {
      g.appendChild(svg("line", { x1: x0, x2: x1, y1: y(v), y2: y(v), "class": "grid" }));
      g.appendChild(svg("text", { x: x0 - 6, y: y(v) + 4, "text-anchor": "end" }, fmt(v)));
    });
  }

  // -- rooflines ---------------------------------------------------------------------------
  const W = 620, H = 400, M = { l: 104, r: 14, t: 14, b: 46 };

  function launchGroups(mine) {
    const groups = new Map();
    mine.forEach(function (r) {
      if (!(r.launch_s > 0 && r.flops > 0)) return;
      const key = [r.key, r.kernel, r.d, r.launch_s].join("\u0000");
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(r);
    });
    return Array.from(groups.values());
  }

  function roofline(roofs) {
    const mine = rows.filter(function (r) { return r.spec === roofs.spec; });
    const points = mine.filter(function (r) { return r.ai > 0 && r.attainable_flops > 0; });
    const box = el("div", { "class": "chart", "data-spec": roofs.spec });
    const device = roofs.device && roofs.device !== roofs.spec ? " (" + roofs.device + ")" : "";
    box.appendChild(el("h3", {}, roofs.spec + device));
    if (!points.length) {
      box.appendChild(el("p", { "class": "empty" }, "No row of this spec has work to plot."));
      return box;
    }
    const peaks = roofs.peaks.map(function (p) { return p.value; });
    const bws = roofs.levels.map(function (l) { return l.value; });
    const top = Math.max.apply(null, peaks.concat(points.map(function (r) { return r.attainable_flops; })));
    const ais = points.map(function (r) { return r.ai; });
    const ridge = bws.length && peaks.length ? Math.max.apply(null, peaks) / Math.min.apply(null, bws) : 1;
    const measured = points.filter(function (r) { return r.measured_s > 0; })
      .map(function (r) { return r.flops / r.measured_s; });
    const ceilings = launchGroups(points).map(function (g) { return g[0].flops / g[0].launch_s; });
    const ys = points.map(function (r) { return r.attainable_flops; }).concat(measured, ceilings);
    const xd = decades(Math.min.apply(null, ais) / 2, Math.max(Math.max.apply(null, ais), ridge) * 2);
    const yd = decades(Math.min.apply(null, ys) / 2, top * 1.5);
    const x = logScale(xd[0], xd[1], M.l, W - M.r);
    const y = logScale(yd[0], yd[1], H - M.b, M.t);
    const chart = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img",
      "aria-label": "roofline of " + roofs.spec });
    const axes = svg("g", { "class": "axis" });
    xAxis(axes, x, M.t, H - M.b, function (v) { return String(Number(v.toPrecision(3))); });
    yAxis(axes, y, M.l, W - M.r, function (v) { return siTick(v, "FLOP/s"); });
    axes.appendChild(svg("rect", { x: M.l, y: M.t, width: W - M.l - M.r, height: H - M.t - M.b,
      fill: "none", stroke: "#c3c9d2" }));
    axes.appendChild(svg("text", { x: (M.l + W - M.r) / 2, y: H - 8, "text-anchor": "middle" },
      "arithmetic intensity (useful FLOP / byte)"));
    axes.appendChild(svg("text", { x: 12, y: (M.t + H - M.b) / 2, "text-anchor": "middle",
      transform: "rotate(-90 12 " + (M.t + H - M.b) / 2 + ")" }, "attainable FLOP/s (speed of light)"));
    chart.appendChild(axes);
    drawRoofs(chart, roofs, x, y, top);
    drawLaunch(chart, points, x, y, top);
    drawPoints(chart, points, x, y);
    box.appendChild(chart);
    box.appendChild(legend(points, roofs));
    const hidden = mine.length - points.length;
    if (hidden) {
      box.appendChild(el("p", { "class": "chart-note" }, plural(hidden, "row") +
        " with no work (or no rate) cannot sit on log axes and are not drawn."));
    }
    return box;
  }

  function drawRoofs(chart, roofs, x, y, top) {
    const g = svg("g", {});
    const maxPeak = Math.max.apply(null, roofs.peaks.map(function (p) { return p.value; }).concat([0]));
    const fastest = Math.max.apply(null, roofs.levels.map(function (l) { return l.value; }).concat([0]));
    roofs.levels.forEach(function (lv, i) {
      // the level's slanted line, from the chart's floor up to the highest peak
      const x0 = Math.max(x.lo, y.lo / lv.value);
      const x1 = Math.min(x.hi, (maxPeak || top) / lv.value);
      if (!(x0 < x1)) return;
      const cls = "roof" + (lv.cache ? " cache" : "") + (lv.from_spec ? " spec" : "");
      const line = svg("line", { x1: x(x0), y1: y(lv.value * x0), x2: x(x1), y2: y(lv.value * x1),
        "class": cls, "data-roof": "memory" });
      const kind = lv.cache === true ? " (cache)" : lv.cache === false ? " (main memory)" : "";
      line.appendChild(svg("title", {}, lv.label + kind +
        (lv.from_spec ? "; from the spec: no row is bound by it" : "")));
      g.appendChild(line);
      const at = x0 * Math.pow(x1 / x0, 0.12 + 0.22 * (i % 3));
      const px = x(at), py = y(lv.value * at);
      const angle = Math.atan2(y(lv.value * x1) - y(lv.value * x0), x(x1) - x(x0)) * 180 / Math.PI;
      g.appendChild(svg("text", { x: px, y: py - 5, "class": "roof-label",
        transform: "rotate(" + angle.toFixed(2) + " " + px.toFixed(1) + " " + py.toFixed(1) + ")" },
      lv.label + (lv.cache ? " (cache)" : "")));
    });
    roofs.peaks.forEach(function (p) {
      const x0 = Math.max(x.lo, fastest ? p.value / fastest : x.lo);
      const line = svg("line", { x1: x(x0), y1: y(p.value), x2: x(x.hi), y2: y(p.value),
        "class": "roof", "data-roof": "compute" });
      line.appendChild(svg("title", {}, "compute peak " + p.label));
      g.appendChild(line);
      g.appendChild(svg("text", { x: x(x.hi) - 4, y: y(p.value) - 5, "text-anchor": "end",
        "class": "roof-label" }, p.label));
    });
    chart.appendChild(g);
  }

  function drawLaunch(chart, points, x, y, top) {
    const g = svg("g", {});
    launchGroups(points).forEach(function (group) {
      const r = group[0];
      const ceiling = r.flops / r.launch_s;
      if (!(ceiling < top)) return;
      const ai = group.map(function (p) { return p.ai; });
      const line = svg("line", { x1: x(Math.min.apply(null, ai) / 1.5), x2: x(Math.max.apply(null, ai) * 1.5),
        y1: y(ceiling), y2: y(ceiling), "class": "launch", stroke: colorOf(r["class"]), "data-roof": "launch" });
      line.appendChild(svg("title", {}, "launch ceiling of " + r.matrix + " (" + r.kernel +
        (r.d !== null ? " d=" + r.d : "") + "): F / t_launch"));
      g.appendChild(line);
    });
    chart.appendChild(g);
  }

  function drawPoints(chart, points, x, y) {
    const g = svg("g", { "class": "points" });
    points.forEach(function (r) {
      if (r.measured_s > 0) {
        const my = y(r.flops / r.measured_s);
        g.appendChild(svg("line", { x1: x(r.ai), x2: x(r.ai), y1: y(r.attainable_flops), y2: my, "class": "link" }));
        const m = svg("circle", { cx: x(r.ai), cy: my, r: 4, "class": "pt-measured", stroke: colorOf(r["class"]),
          "data-row": r.id });
        hoverRow(m, r);
        g.appendChild(m);
      }
    });
    const at = new Map();  // rows drawn on the same pixel: the tooltip names them all
    points.forEach(function (r) {
      const k = Math.round(x(r.ai)) + "," + Math.round(y(r.attainable_flops));
      if (!at.has(k)) at.set(k, []);
      at.get(k).push(r);
    });
    points.forEach(function (r) {
      const c = svg("circle", { cx: x(r.ai), cy: y(r.attainable_flops), r: 4.5, "class": "pt",
        fill: faceOf(r["class"]), "data-row": r.id,
        "aria-label": [r.matrix, r.format, r.model].join(", ") });
      c.style.stroke = edgeOf(r["class"]);
      hoverRow(c, r, at.get(Math.round(x(r.ai)) + "," + Math.round(y(r.attainable_flops))));
      g.appendChild(c);
    });
    chart.appendChild(g);
  }

  function legend(points, roofs) {
    const box = el("div", { "class": "legend" });
    unique(points.map(function (r) { return r["class"]; })).forEach(function (label) {
      const item = el("span", {});
      const sw = el("span", { "class": "swatch" });
      sw.style.background = faceOf(label);
      sw.style.border = "2px solid " + edgeOf(label);
      item.appendChild(sw);
      item.appendChild(document.createTextNode(label));
      box.appendChild(item);
    });
    const parts = ["— roof", "- - cache", "··· launch ceiling"];
    if (roofs.levels.some(function (l) { return l.from_spec; })) parts.push("grey: a level of the spec no row is bound by");
    if (points.some(function (r) { return r.measured_s > 0; })) parts.push("○ measured");
    box.appendChild(el("span", {}, parts.join(", ")));
    return box;
  }

  // -- distribution by class -------------------------------------------------------------
  function metric() {
    if (data.has_runs) {
      return { label: "% of SoL (bound / measured time; above 100% beats the bound)", log: false,
        value: function (r) { return r.pct_sol; }, fmt: function (v) { return v.toFixed(1) + "%"; } };
    }
    return { label: "SoL per stored entry (seconds; lower is faster)", log: true,
      value: function (r) { return r.sol_s > 0 && r.nnz > 0 ? r.sol_s / r.nnz : null; },
      fmt: function (v) { return siTick(v, "s"); } };
  }
  function quantile(sorted, q) {
    const i = (sorted.length - 1) * q, lo = Math.floor(i), hi = Math.ceil(i);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (i - lo);
  }
  function distribution() {
    const m = metric();
    document.getElementById("distribution-title").textContent =
      (data.has_runs ? "% of SoL" : "SoL per entry") + " by structure class";
    document.getElementById("distribution-explain").textContent = m.label +
      ": one dot per row, the box from the lower to the upper quartile with the median, the line from the least to the most.";
    const target = document.getElementById("distribution-chart");
    const valued = rows.filter(function (r) { return m.value(r) !== null; });
    if (!valued.length) { target.appendChild(el("p", { "class": "empty" }, "No values to show.")); return; }
    const lane = 12, band = 28 + lane * (specs.length - 1), L = 170, R = 20, T = 10, B = 40;
    const height = T + B + band * classes.length;
    const vs = valued.map(m.value);
    let x;
    if (m.log) {
      const lo = Math.min.apply(null, vs), hi = Math.max.apply(null, vs);
      const pad = Math.max(Math.sqrt(hi / lo), 1.5);
      x = logScale(lo / pad, hi * pad, L, 1200 - R);
    } else {
      x = linScale(0, Math.max(100, Math.max.apply(null, vs) * 1.05), L, 1200 - R);
    }
    const chart = svg("svg", { viewBox: "0 0 1200 " + height, role: "img", "aria-label": m.label });
    const axes = svg("g", { "class": "axis" });
    xAxis(axes, x, T, height - B, m.log ? m.fmt : function (v) { return v + "%"; });
    chart.appendChild(axes);
    if (!m.log) chart.appendChild(svg("line", { x1: x(100), x2: x(100), y1: T, y2: height - B, "class": "ref" }));
    classes.forEach(function (label, i) {
      const mid = T + band * i + band / 2;
      const mine = valued.filter(function (r) { return r["class"] === label; });
      const sorted = mine.map(m.value).sort(function (a, b) { return a - b; });
      chart.appendChild(svg("text", { x: L - 10, y: mid + 4, "text-anchor": "end", "class": "class-label" },
        label + " (" + sorted.length + ")"));
      if (!sorted.length) return;
      const q = [0, 0.25, 0.5, 0.75, 1].map(function (p) { return quantile(sorted, p); });
      chart.appendChild(svg("line", { x1: x(q[0]), x2: x(q[4]), y1: mid, y2: mid, "class": "whisker" }));
      const half = band / 2 - 4;
      chart.appendChild(svg("rect", { x: x(q[1]), y: mid - half, width: Math.max(1, x(q[3]) - x(q[1])),
        height: 2 * half, "class": "box" }));
      chart.appendChild(svg("line", { x1: x(q[2]), x2: x(q[2]), y1: mid - half, y2: mid + half, "class": "median" }));
      mine.forEach(function (r) {
        const offset = (specs.indexOf(r.spec) - (specs.length - 1) / 2) * lane;
        const jitter = ((r.id * 7919) % 7 - 3) * 1.1;
        const c = svg("circle", { cx: x(m.value(r)), cy: mid + offset + jitter, r: 3.2,
          "class": "pt dist", fill: faceOf(label), "data-row": r.id });
        c.style.stroke = edgeOf(label);
        hoverRow(c, r);
        chart.appendChild(c);
      });
    });
    target.appendChild(chart);
    if (specs.length > 1) {
      target.appendChild(el("div", { "class": "legend" }, "Dots in one lane per spec, top to bottom: " +
        specs.join(", ") + " (the spec filter of the table fades the others)."));
    }
  }

  // -- the table: sort, filter and pages -------------------------------------------------------
  // The table shows one page of the rows that pass the filter, in the sorted order: a
  // browser lays out a table of tens of thousands of rows for seconds, a page at once.
  const rowElements = [];
  const state = { words: [], selects: {}, key: null, dir: 1, page: 0 };
  const table = document.getElementById("results");
  const tbody = table.querySelector("tbody");
  let ordered = rows.slice();
  let passing = ordered;

  function rowElement(r) {
    if (rowElements[r.id]) return rowElements[r.id];
    const tr = el("tr", { "data-row": r.id });
    data.table.forEach(function (c) {
      const td = el("td", { "class": c.numeric ? "num" : "" }, cell(r, c.key));
      if (c.key === "pct_sol" && r.pct_sol > 100) td.classList.add("over");
      tr.appendChild(td);
    });
    tr.addEventListener("mouseover", function () {
      marks[r.id].forEach(function (mk) { mk.classList.add("hot"); });
    });
    tr.addEventListener("mouseout", function () {
      marks[r.id].forEach(function (mk) { mk.classList.remove("hot"); });
    });
    rowElements[r.id] = tr;
    return tr;
  }

  function buildTable() {
    const head = el("tr", {});
    data.table.forEach(function (c) {
      const th = el("th", { scope: "col", "data-key": c.key, "aria-sort": "none", tabindex: "0",
        "class": c.numeric ? "num" : "" }, c.header);
      th.addEventListener("click", function () { sortBy(c.key); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") sortBy(c.key); });
      head.appendChild(th);
    });
    table.querySelector("thead").appendChild(head);
    document.getElementById("prev").addEventListener("click", function () { turn(-1); });
    document.getElementById("next").addEventListener("click", function () { turn(1); });
  }

  function render() {
    const size = data.page_rows;
    const pages = Math.max(1, Math.ceil(passing.length / size));
    state.page = Math.min(Math.max(state.page, 0), pages - 1);
    const first = state.page * size;
    const frag = document.createDocumentFragment();
    passing.slice(first, first + size).forEach(function (r) { frag.appendChild(rowElement(r)); });
    tbody.replaceChildren(frag);
    document.getElementById("count").textContent = passing.length.toLocaleString("en") +
      " of " + plural(rows.length, "row");
    const pager = document.getElementById("pager");
    pager.hidden = pages < 2;
    document.getElementById("page").textContent = "rows " + (first + 1).toLocaleString("en") +
      "–" + Math.min(first + size, passing.length).toLocaleString("en") + " (page " +
      (state.page + 1) + " of " + pages + ")";
    document.getElementById("prev").disabled = state.page === 0;
    document.getElementById("next").disabled = state.page >= pages - 1;
  }
  function turn(step) { state.page += step; render(); }

  function compare(key) {
    return function (a, b) {
      const va = a[key], vb = b[key];
      const na = va === null || va === "", nb = vb === null || vb === "";
      if (na || nb) return na === nb ? a.id - b.id : (na ? 1 : -1);  // blanks last
      const c = typeof va === "number" && typeof vb === "number" ? va - vb
        : String(va).localeCompare(String(vb), undefined, { numeric: true });
      return c ? c * state.dir : a.id - b.id;
    };
  }
  function sortBy(key) {
    state.dir = state.key === key ? -state.dir : 1;
    state.key = key;
    ordered = rows.slice().sort(compare(key));
    passing = ordered.filter(function (r) { return shownRows[r.id]; });
    state.page = 0;
    render();
    table.querySelectorAll("thead th").forEach(function (th) {
      th.setAttribute("aria-sort", th.getAttribute("data-key") !== key ? "none"
        : state.dir > 0 ? "ascending" : "descending");
    });
  }

  const SELECTS = ["spec", "class", "format", "model", "ordering", "bound"];
  function haystack(r) {
    return [r.matrix, r["class"], r.spec, r.kernel, r.format, r.model, r.ordering, r.bound,
      r.level, r.key].join(" ").toLowerCase();
  }
  const hay = rows.map(haystack);
  function visible(r) {
    for (const k in state.selects) {
      if (state.selects[k] !== "" && String(r[k]) !== state.selects[k]) return false;
    }
    return state.words.every(function (w) { return hay[r.id].indexOf(w) >= 0; });
  }
  function applyFilter() {
    rows.forEach(function (r) {
      const show = visible(r);
      shownRows[r.id] = show;
      marks[r.id].forEach(function (mk) { mk.classList.toggle("dim", !show); });
    });
    passing = ordered.filter(function (r) { return shownRows[r.id]; });
    state.page = 0;
    render();
  }
  function buildFilters() {
    const input = document.getElementById("filter");
    input.addEventListener("input", function () {
      state.words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      applyFilter();
    });
    const holder = document.getElementById("selects");
    SELECTS.forEach(function (key) {
      const values = unique(rows.map(function (r) { return r[key]; }).filter(function (v) { return v !== ""; }));
      if (values.length < 2) return;
      const sel = el("select", { id: "f-" + key, "aria-label": "only rows of one " + key });
      sel.appendChild(el("option", { value: "" }, "every " + key));
      values.forEach(function (v) { sel.appendChild(el("option", { value: String(v) }, v)); });
      sel.addEventListener("change", function () { state.selects[key] = sel.value; applyFilter(); });
      state.selects[key] = "";
      holder.appendChild(sel);
    });
    document.getElementById("clear").addEventListener("click", function () {
      input.value = "";
      state.words = [];
      holder.querySelectorAll("select").forEach(function (s) { s.value = ""; });
      Object.keys(state.selects).forEach(function (k) { state.selects[k] = ""; });
      applyFilter();
    });
  }

  // -- the other sections ---------------------------------------------------------------------
  function plainTable(headers, body, numeric) {
    const t = el("table", { "class": "plain" });
    const head = el("tr", {});
    headers.forEach(function (h, i) { head.appendChild(el("th", { "class": numeric[i] ? "num" : "" }, h)); });
    t.appendChild(el("thead", {})).appendChild(head);
    const tb = t.appendChild(el("tbody", {}));
    body.forEach(function (cells) {
      const tr = el("tr", {});
      cells.forEach(function (v, i) { tr.appendChild(el("td", { "class": numeric[i] ? "num" : "" }, v)); });
      tb.appendChild(tr);
    });
    const wrap = el("div", { "class": "scroll" });
    wrap.appendChild(t);
    return wrap;
  }
  function summary() {
    document.getElementById("title").textContent = "sparsroof report: " + data.title;
    const dl = document.getElementById("summary");
    data.summary.forEach(function (pair) {
      const d = el("div", {});
      d.appendChild(el("dt", {}, pair[0]));
      d.appendChild(el("dd", {}, pair[1]));
      dl.appendChild(d);
    });
    const notes = document.getElementById("notes");
    data.notes.forEach(function (n) { notes.appendChild(el("li", {}, n)); });
    document.getElementById("footer").textContent = "Made by sparsroof " + data.tool_version +
      (data.source_version && data.source_version !== data.tool_version
        ? " from results of sparsroof " + data.source_version : "") +
      ". Every figure is a bound (speed of light): no correct kernel runs faster.";
  }
  function gallery() {
    const box = document.getElementById("spy");
    if (!data.matrices.length) { box.appendChild(el("p", { "class": "empty" }, "No matrices.")); return; }
    data.matrices.forEach(function (m) {
      const fig = el("figure", { "class": "spy", title: m.file });
      if (m.thumb.indexOf("data:image/png;base64,") === 0) {
        fig.appendChild(el("img", { src: m.thumb, alt: "spy plot of " + m.name, width: "132", height: "132" }));
      } else {
        fig.appendChild(el("div", { "class": "nospy" }, m.note || "no spy plot"));
      }
      const cap = el("figcaption", {});
      cap.appendChild(el("b", {}, m.name));
      cap.appendChild(el("span", {}, m["class"]));
      if (m.detail) cap.appendChild(el("span", {}, m.detail));
      fig.appendChild(cap);
      box.appendChild(fig);
    });
  }
  function gains() {
    const box = document.getElementById("gains-body");
    if (!data.gains.length) {
      box.appendChild(el("p", { "class": "empty" }, "No reorderings in this source " +
        "(sparsroof batch --reorder or analyze --reorder adds them)."));
      return;
    }
    box.appendChild(el("p", { "class": "explain" }, "Cache-aware time of each reordered matrix " +
      "beside the original order (a model's estimate of a kernel that sweeps row panels, not a " +
      "bound): gain = original time / reordered time; break-even = runs of the kernel that pay " +
      "for the reordering's time."));
    box.appendChild(plainTable(["matrix", "spec", "ordering", "d", "format", "time before", "time after",
      "gain", "break-even runs", "reordering time", ""], data.gains,
    [false, false, false, true, false, true, true, true, true, true, false]));
  }
  function failures() {
    const box = document.getElementById("failures-body");
    if (!data.failures.length) {
      box.appendChild(el("p", { "class": "empty" }, "No failures recorded."));
      return;
    }
    box.appendChild(plainTable(["matrix", "file", "kind", "reason"], data.failures.map(function (f) {
      return [f.name, f.path + (f.member ? "::" + f.member : ""), f.kind, f.reason];
    }), [false, false, false, false]));
  }

  summary();
  buildTable();
  buildFilters();
  const charts = document.getElementById("roofline-charts");
  data.roofs.forEach(function (r) { charts.appendChild(roofline(r)); });
  if (!data.roofs.length) charts.appendChild(el("p", { "class": "empty" }, "No rows to plot."));
  distribution();
  gallery();
  gains();
  failures();
  applyFilter();
}());
