// The gallery's pages: no framework, no build step, nothing fetched from outside this server.
// One script draws the three views (packs, a pack, a map) from the server's JSON, and redraws
// the one on screen whenever the build tells (server-sent events) that a build has finished.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const el = (tag, attrs = {}, ...kids) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined) node.append(kid.nodeType ? kid : String(kid));
  return node;
};
const fmt = (v) => (typeof v === "number" && !Number.isInteger(v) ? v.toFixed(2) : String(v));
const PALETTE = ["#e6194b", "#3cb44b", "#ffe119", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6",
  "#bfef45", "#fabed4", "#469990", "#dcbeff", "#9a6324", "#fffac8", "#800000", "#aaffc3"];
const HEAT = ["#440154", "#481a6c", "#472f7d", "#414487", "#39568c", "#31688e", "#2a788e", "#23888e",
  "#1f988b", "#22a884", "#35b779", "#54c568", "#7ad151", "#a5db36", "#d2e21b", "#fde725"];
const MARK = { spawn: "#00e436", exit: "#ff004d", room: "#29adff", path: "#ffec27" };
const OTHERS = ["#ffa300", "#ff77a8", "#ffccaa", "#c2c3c7", "#00ffff", "#ff00ff", "#a8e72e", "#fff1e8", "#ab5236", "#37946e", "#83769c"];

// What the page keeps across redraws: the pack page's sort and filter, the map page's overlays and view.
const ui = { sort: "index", order: "asc", filterStat: "", min: "", max: "", overlays: null, view: null };
let generation = -1;

async function getJSON(url) {
  const r = await fetch(url, { cache: "no-store" });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

function route() {
  const parts = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "pack" && parts.length === 2) return { view: "pack", pack: parts[1] };
  if (parts[0] === "pack" && parts[2] === "map") return { view: "map", pack: parts[1], index: Number(parts[3]) };
  return { view: "home" };
}

async function render() {
  const r = route();
  document.body.dataset.view = r.view;
  const crumbs = $("#crumbs");
  crumbs.replaceChildren();
  if (r.pack) crumbs.append(el("a", { href: `/pack/${encodeURIComponent(r.pack)}` }, r.pack));
  if (r.view === "map") crumbs.append(el("a", { href: location.pathname }, `map ${r.index}`));
  try {
    if (r.view === "home") await renderHome();
    else if (r.view === "pack") await renderPack(r.pack);
    else await renderMap(r.pack, r.index);
  } catch (err) {
    $("#view").replaceChildren(el("p", { class: "muted", id: "not-ready" }, `${err.message} (the page updates when a build finishes)`));
  }
  document.body.dataset.rendered = String(generation);
}

// -- the packs ------------------------------------------------------------------------------

async function renderHome() {
  const data = await getJSON("/api/packs");
  document.title = "pcg gallery";
  $("#view").replaceChildren(
    el("h1", {}, "Packs"),
    el("div", { class: "packs" }, data.packs.map((p) =>
      el("a", { class: "card", href: `/pack/${encodeURIComponent(p.name)}`, "data-pack": p.name },
        p.sheet ? el("img", { src: p.sheet, alt: `${p.name} contact sheet` }) : el("p", { class: "muted" }, "not built yet"),
        el("div", { class: "name" }, p.name, el("span", { class: "muted" }, `${p.maps} maps`)),
        el("div", { class: "muted" }, p.recipe)))),
  );
}

// -- a pack ---------------------------------------------------------------------------------

async function renderPack(name) {
  const pack = await getJSON(`/api/packs/${encodeURIComponent(name)}`);
  document.title = `${pack.name} · pcg gallery`;
  const view = $("#view");
  const grid = el("div", { class: "grid", id: "maps" });
  const count = el("span", { class: "muted", id: "shown" });
  const statOptions = (selected) => pack.stats.map((s) => el("option", { value: s, selected: s === selected }, s));
  if (ui.filterStat && !pack.stats.includes(ui.filterStat)) ui.filterStat = "";
  if (ui.sort !== "index" && ui.sort !== "seed" && !pack.stats.includes(ui.sort)) ui.sort = "index";

  const draw = () => {
    const value = (m, k) => (k === "index" ? m.index : k === "seed" ? BigInt(m.seed) : m.stats[k]);
    const lo = ui.min === "" ? -Infinity : Number(ui.min);
    const hi = ui.max === "" ? Infinity : Number(ui.max);
    let maps = pack.maps.filter((m) => !ui.filterStat || (typeof m.stats[ui.filterStat] === "number" && m.stats[ui.filterStat] >= lo && m.stats[ui.filterStat] <= hi));
    maps = maps.slice().sort((a, b) => {
      const x = value(a, ui.sort), y = value(b, ui.sort);
      const d = (x === undefined) - (y === undefined) || (x < y ? -1 : x > y ? 1 : a.index - b.index);
      return ui.order === "asc" ? d : -d;
    });
    grid.replaceChildren(...maps.map((m) => card(pack, m)));
    count.textContent = `${maps.length} of ${pack.maps.length} maps`;
  };
  const on = (key) => (e) => { ui[key] = e.target.value; draw(); };
  view.replaceChildren(
    el("h1", {}, pack.name),
    el("p", { class: "muted" }, pack.description ? `${pack.description} · ` : "", `recipe ${pack.recipe} · pack seed ${pack.seed}`),
    el("div", { class: "controls" },
      el("label", { for: "sort" }, "sort by"),
      el("select", { id: "sort", onchange: on("sort") },
        el("option", { value: "index", selected: ui.sort === "index" }, "map"),
        el("option", { value: "seed", selected: ui.sort === "seed" }, "seed"), statOptions(ui.sort)),
      el("select", { id: "order", onchange: on("order") },
        el("option", { value: "asc", selected: ui.order === "asc" }, "ascending"),
        el("option", { value: "desc", selected: ui.order === "desc" }, "descending")),
      el("label", { for: "filter-stat" }, "filter"),
      el("select", { id: "filter-stat", onchange: on("filterStat") }, el("option", { value: "" }, "(none)"), statOptions(ui.filterStat)),
      el("input", { id: "filter-min", type: "number", step: "any", placeholder: "min", value: ui.min, oninput: on("min"), size: 6 }),
      el("input", { id: "filter-max", type: "number", step: "any", placeholder: "max", value: ui.max, oninput: on("max"), size: 6 }),
      count),
    grid,
    el("h2", {}, "Stat spread"),
    el("div", { class: "hists", id: "hists" }, pack.stats.map((s) => histogram(s, pack.maps.map((m) => m.stats[s]).filter((v) => typeof v === "number")))),
    measures(pack),
    el("h2", {}, "Recipe"),
    el("pre", { id: "recipe" }, pack.recipe_text),
  );
  draw();
}

// How varied the pack is (each map's distance to its nearest neighbour: 0 alike, 1 nothing
// alike) and how many of its maps can be finished, per stage measured.
function measures(pack) {
  const lines = [];
  for (const [stage, byMeasure] of Object.entries(pack.diversity || {})) {
    for (const [measure, d] of Object.entries(byMeasure)) {
      lines.push(el("li", { "data-measure": `${stage}.${measure}` },
        `${stage}, ${measure}: nearest map ${fmt(d.median)} at the median (${fmt(d.min)} to ${fmt(d.max)}); ${Math.round(d.distinct * 100)}% distinct`));
    }
  }
  for (const [stage, p] of Object.entries(pack.playability || {})) {
    lines.push(el("li", { "data-playable": stage }, `${stage}: ${p.solvable} of ${p.maps} maps can be finished`));
  }
  return lines.length ? el("section", { id: "measures" }, el("h2", {}, "Diversity and playability"), el("ul", {}, lines)) : null;
}

function card(pack, m) {
  return el("a", { class: "card", href: `/pack/${encodeURIComponent(pack.name)}/map/${m.index}`, "data-index": m.index },
    m.preview ? el("img", { src: m.preview, alt: m.stem, loading: "lazy" }) : null,
    el("div", { class: "name" }, m.stem, m.pinned ? el("span", { class: "badge" }, typeof m.pinned === "object" ? `re-rolled ${m.pinned.rerolls}x` : "pinned") : null),
    el("dl", {}, Object.entries(m.stats).flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-stat": k }, fmt(v))])));
}

function histogram(stat, values) {
  const bins = 12;
  const lo = Math.min(...values), hi = Math.max(...values);
  const counts = new Array(bins).fill(0);
  for (const v of values) counts[hi === lo ? 0 : Math.min(bins - 1, Math.floor(((v - lo) / (hi - lo)) * bins))]++;
  const top = Math.max(1, ...counts);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${bins * 10} 50`);
  svg.setAttribute("preserveAspectRatio", "none");
  counts.forEach((c, i) => {
    const r = document.createElementNS(ns, "rect");
    r.setAttribute("x", i * 10 + 1); r.setAttribute("width", 8);
    r.setAttribute("y", 50 - (c / top) * 48); r.setAttribute("height", (c / top) * 48);
    const t = document.createElementNS(ns, "title");
    t.textContent = `${c} maps`;
    r.append(t);
    svg.append(r);
  });
  return el("div", { class: "hist", "data-stat": stat }, el("div", {}, stat), svg,
    el("div", { class: "legend" }, values.length ? `${fmt(lo)} … ${fmt(hi)} · mean ${fmt(values.reduce((a, b) => a + b, 0) / values.length)}` : "no values"));
}

// -- a map ----------------------------------------------------------------------------------

async function renderMap(packName, index) {
  const m = await getJSON(`/api/packs/${encodeURIComponent(packName)}/maps/${index}`);
  document.title = `${m.pack} ${m.stem} · pcg gallery`;
  const info = m.info || { tiles: [1, 1], tile: [1, 1], step: 1, markers: [] };
  // A level graph's connections (door links) are an overlay of their own, offered when the map has them.
  const hasLinks = info.markers.some((mk) => mk[0] === "link");
  const kinds = ["objects", "paths", ...(hasLinks ? ["links"] : []), ...Object.keys(m.layers)];
  if (!ui.overlays || ui.overlaysFor !== m.pack) {
    ui.overlays = { objects: true, paths: true, links: true };
    ui.overlaysFor = m.pack;
  }
  const viewer = el("div", { class: "viewer", id: "viewer" });
  const base = el("canvas", { id: "base" });
  const over = el("canvas", { id: "overlay" });
  viewer.append(base, over);
  const toggles = kinds.map((k) => el("label", {},
    el("input", { type: "checkbox", "data-overlay": k, checked: !!ui.overlays[k], onchange: (e) => { ui.overlays[k] = e.target.checked; paint(); } }), " ", k));
  const zoomBy = (f) => { zoomAt(f, viewer.clientWidth / 2, viewer.clientHeight / 2); };
  const link = (i, label) => (i >= 0 && i < m.maps ? el("a", { href: `/pack/${encodeURIComponent(m.pack)}/map/${i}` }, label) : el("span", { class: "muted" }, label));
  const seedAction = (action) => async () => {
    const r = await fetch(`/api/packs/${encodeURIComponent(m.pack)}/maps/${m.index}/${action}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    const body = await r.json();
    $("#action-result").textContent = body.ok ? `${action}: seed ${body.before} → ${body.seed}${body.written ? " (recipe saved; rebuilding…)" : " (no change)"}` : body.errors.join("\n");
  };
  const pinned = m.pinned === undefined || m.pinned === null ? "follows the pack seed" : typeof m.pinned === "object" ? `re-rolled ${m.pinned.rerolls}x` : "pinned";
  $("#view").replaceChildren(
    el("h1", {}, `${m.pack} · ${m.stem}`),
    el("div", { class: "mapview" },
      el("div", {},
        el("div", { class: "toolbar" }, link(m.index - 1, "← previous"), link(m.index + 1, "next →"),
          el("span", { class: "muted" }, "overlays:"), toggles,
          el("button", { id: "zoom-in", onclick: () => zoomBy(1.25) }, "+"),
          el("button", { id: "zoom-out", onclick: () => zoomBy(0.8) }, "−"),
          el("button", { id: "zoom-fit", onclick: () => { ui.view = null; fit(); paint(); } }, "fit")),
        viewer,
        el("div", { class: "legend", id: "legend" })),
      el("div", { class: "side" },
        el("section", {}, el("h2", {}, "Seed"),
          el("p", {}, el("span", { id: "seed" }, String(m.seed)), " · ", el("span", { id: "pin-state" }, pinned),
            m.attempt ? el("span", { id: "attempt", class: "muted" }, ` · filter's attempt ${m.attempt}`) : null),
          el("div", { class: "actions" },
            el("button", { id: "pin", onclick: seedAction("pin") }, "Pin"),
            el("button", { id: "reroll", onclick: seedAction("reroll") }, "Re-roll"),
            el("button", { id: "unpin", onclick: seedAction("unpin") }, "Unpin")),
          el("p", { class: "muted", id: "action-result" })),
        el("section", {}, el("h2", {}, "Properties"),
          el("table", { id: "props" }, Object.entries(m.stats).map(([k, v]) => el("tr", { "data-stat": k }, el("td", {}, k), el("td", {}, fmt(v)))))),
        el("section", {}, el("h2", {}, "Provenance"),
          el("table", { id: "provenance" },
            m.stages.map((s) => el("tr", {}, el("td", {}, s.name), el("td", {}, `${s.kind} v${s.version}`))),
            Object.entries(m.versions).map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, String(v)))))),
        m.gifs.length ? el("section", { id: "gifs" }, el("h2", {}, "Generation"), m.gifs.map((g) => el("img", { src: g, alt: "rewrite animation" }))) : null,
        el("section", {}, el("h2", {}, "Files"), el("ul", { id: "files" }, m.files.map((f) => el("li", {}, el("a", { href: f.url }, f.path))))))),
  );

  // The picture: the map drawn from its tileset without markers (objects are an overlay), or the preview.
  const img = new Image();
  const step = info.step;
  const px = { w: (info.tiles[0] * info.tile[0]) / step, h: (info.tiles[1] * info.tile[1]) / step };
  let scale = 1, ox = 0, oy = 0;
  const fit = () => {
    scale = Math.min(viewer.clientWidth / px.w, viewer.clientHeight / px.h);
    ox = (viewer.clientWidth - px.w * scale) / 2;
    oy = (viewer.clientHeight - px.h * scale) / 2;
  };
  const zoomAt = (f, cx, cy) => {
    const s = Math.max(0.05, Math.min(64, scale * f));
    ox = cx - ((cx - ox) * s) / scale; oy = cy - ((cy - oy) * s) / scale; scale = s;
    ui.view = { key: `${m.pack}/${m.index}`, scale, ox, oy };
    paint();
  };
  function paint() {
    for (const c of [base, over]) { c.width = viewer.clientWidth; c.height = viewer.clientHeight; }
    const b = base.getContext("2d");
    b.imageSmoothingEnabled = false;
    if (img.complete && img.naturalWidth) b.drawImage(img, ox, oy, px.w * scale, px.h * scale);
    const o = over.getContext("2d");
    o.imageSmoothingEnabled = false;
    const drawn = [];
    for (const [name, layer] of Object.entries(m.layers)) {
      if (!ui.overlays[name]) continue;
      drawn.push(name);
      o.drawImage(layerImage(name, layer, info.tiles), ox, oy, px.w * scale, px.h * scale);
    }
    const k = scale / step; // map pixels -> screen pixels
    const X = (x) => ox + x * k, Y = (y) => oy + y * k;
    const r = Math.max(3, (Math.min(...info.tile) * k) / 3);
    let others = 0;
    const colour = {};
    // The preview's own colour for a type (info.inks), so the overlay matches the picture.
    const ink = (t) => MARK[t] || (info.inks || {})[t] || (colour[t] ||= OTHERS[others++ % OTHERS.length]);
    if (ui.overlays.paths) drawn.push("paths");
    if (hasLinks && ui.overlays.links) drawn.push("links");
    if (ui.overlays.objects) drawn.push("objects");
    const shown = { path: "paths", link: "links" };
    for (const [kind, type, x, y, w, h, points] of info.markers) {
      if (!ui.overlays[shown[kind] || "objects"]) continue;
      const isLine = kind === "path" || kind === "link";
      o.strokeStyle = o.fillStyle = ink(kind === "path" ? "path" : type);
      o.lineWidth = Math.max(1, k * Math.min(...info.tile) / (kind === "link" ? 10 : 6));
      if (kind === "rect" || kind === "tile") o.strokeRect(X(x), Y(y), w * k, h * k);
      else if (isLine && points.length) {
        o.beginPath(); o.moveTo(X(points[0][0]), Y(points[0][1]));
        for (const [a, c] of points.slice(1)) o.lineTo(X(a), Y(c));
        o.stroke();
      } else {
        o.beginPath(); o.arc(X(x), Y(y), r, 0, 2 * Math.PI); o.fill();
        o.strokeStyle = "#000"; o.lineWidth = 1; o.stroke();
      }
    }
    over.dataset.drawn = drawn.join(",");
    over.dataset.scale = scale.toFixed(3);
    // Links and locked doors are named for what they are (a locked one is drawn in the keys' colour).
    const legend = (mk) => (mk[0] === "path" ? ["path", "path"]
      : mk[0] === "link" ? [mk[1] === "link" ? "link" : "locked link", mk[1]]
      : mk[1] === "locked" ? ["locked door", mk[1]] : [mk[1], mk[1]]);
    const entries = new Map(info.markers.map((mk) => legend(mk)));
    $("#legend").replaceChildren(...[...entries].map(([label, t]) => el("span", { style: `color:${ink(t)};margin-right:.75rem` }, `● ${label}`)));
  }
  img.onload = () => {
    const v = ui.view && ui.view.key === `${m.pack}/${m.index}` ? ui.view : null;
    if (v) ({ scale, ox, oy } = v); else fit();
    paint();
    viewer.dataset.loaded = "true";
  };
  img.onerror = () => { if (m.preview && img.src.indexOf(m.preview) < 0) img.src = m.preview; };
  if (m.picture || m.preview) img.src = m.picture || m.preview;
  else viewer.append(el("p", { class: "empty" }, "No picture: this map has no Tiled map or preview among its files (an exporter with preview = true draws one)."));
  viewer.addEventListener("wheel", (e) => {
    e.preventDefault();
    const box = viewer.getBoundingClientRect();
    zoomAt(e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX - box.left, e.clientY - box.top);
  }, { passive: false });
  let drag = null;
  viewer.addEventListener("pointerdown", (e) => { drag = { x: e.clientX - ox, y: e.clientY - oy }; viewer.classList.add("dragging"); viewer.setPointerCapture(e.pointerId); });
  viewer.addEventListener("pointermove", (e) => {
    if (!drag) return;
    ox = e.clientX - drag.x; oy = e.clientY - drag.y;
    ui.view = { key: `${m.pack}/${m.index}`, scale, ox, oy };
    paint();
  });
  viewer.addEventListener("pointerup", () => { drag = null; viewer.classList.remove("dragging"); });
  window.onresize = paint;
  paint();
}

// A data layer as a picture, one pixel per tile: labels in the palette, distances as heat.
function layerImage(name, layer, tiles) {
  const [w, h] = tiles;
  const c = document.createElement("canvas");
  c.width = w; c.height = h;
  const ctx = c.getContext("2d");
  const data = ctx.createImageData(w, h);
  const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  const pal = PALETTE.map(rgb), heat = HEAT.map(rgb);
  layer.values.forEach((v, i) => {
    let colour = null;
    if (layer.heat && v >= 0) colour = heat[Math.floor((v * heat.length) / (layer.max + 1))];
    else if (!layer.heat && v > 0) colour = pal[(v - 1) % pal.length];
    if (colour) { data.data.set([...colour, 170], i * 4); }
  });
  ctx.putImageData(data, 0, 0);
  return c;
}

// -- live -----------------------------------------------------------------------------------

function showState(state) {
  const status = $("#status"), text = $("#status-text"), bar = $("#status-progress");
  const failing = Object.entries(state.errors || {});
  status.className = `status ${state.building ? "building" : failing.length ? "failed" : "idle"}`;
  if (state.building) {
    const p = state.progress || {};
    text.textContent = `building ${state.building}` + (p.total ? ` (${p.done}/${p.total} maps)` : "…");
    bar.hidden = !p.total; bar.max = p.total || 1; bar.value = p.done || 0;
  } else {
    bar.hidden = true;
    text.textContent = failing.length ? `${failing.length} recipe(s) failed: last good maps shown` : `up to date (${state.generation} builds)`;
  }
  const box = $("#errors");
  box.hidden = !failing.length;
  box.replaceChildren(...failing.map(([recipe, lines]) => el("div", { class: "error", "data-recipe": recipe }, el("h2", {}, `error in ${recipe}`), lines.join("\n"))));
}

function startEvents() {
  const state = { generation: 0, building: null, progress: {}, errors: {}, log: [] };
  const log = $("#log");
  const addLine = (item) => log.append(el("div", { class: item.error ? "error" : "" }, item.text));
  const source = new EventSource("/api/events");
  source.addEventListener("state", (e) => {
    Object.assign(state, JSON.parse(e.data));
    log.replaceChildren(); state.log.forEach(addLine);
    showState(state);
    if (state.generation !== generation) { generation = state.generation; render(); }
  });
  source.addEventListener("build", (e) => {
    state.building = JSON.parse(e.data).recipe; state.progress = {};
    log.replaceChildren(); showState(state);
  });
  source.addEventListener("progress", (e) => { const d = JSON.parse(e.data); state.progress = d; showState(state); });
  source.addEventListener("log", (e) => addLine(JSON.parse(e.data)));
  source.addEventListener("built", (e) => {
    const d = JSON.parse(e.data);
    state.building = null;
    if (d.ok) delete state.errors[d.recipe]; else state.errors[d.recipe] = d.errors;
    state.generation = d.generation;
    showState(state);
    generation = d.generation;
    render();
  });
  source.onerror = () => { $("#status-text").textContent = "disconnected from pcg serve (retrying…)"; $("#status").className = "status failed"; };
  // A page left for another stays in the browser's back/forward cache with its stream open:
  // six such pages hold every connection the browser allows to one server, and the next page's
  // requests wait for ever. Close it on leaving; a page shown again from the cache reconnects.
  const leave = () => { source.close(); window.removeEventListener("pagehide", leave); };
  window.addEventListener("pagehide", leave);
}

window.addEventListener("pageshow", (e) => { if (e.persisted) startEvents(); });

document.addEventListener("click", (e) => {
  const a = e.target.closest("a");
  if (!a || a.origin !== location.origin || a.pathname.startsWith("/files/") || e.metaKey || e.ctrlKey) return;
  e.preventDefault();
  history.pushState(null, "", a.pathname);
  render();
});
window.addEventListener("popstate", render);
startEvents();
