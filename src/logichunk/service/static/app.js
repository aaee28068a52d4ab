/* logichunk web page. Plain JavaScript, no build step, no network beyond this server.
 *
 * Offsets from the server are Python string indices (code points); JavaScript strings index UTF-16
 * code units, so every text gets a code-point -> UTF-16 map before it is sliced (see u16map).
 */
"use strict";
(function () {
  // ------------------------------------------------------------------ i18n
  const I18N = {
    en: {
      tagline: "cut text where its logic breaks", project: "Project", newProject: "+ New", apiKey: "API key",
      useKey: "Use", input: "Text", pastePlaceholder: "Paste text here, or upload a file",
      upload: "Upload file…", sampleZh: "中文示例", sampleEn: "English sample", method: "Method", sizes: "Sizes",
      sizesHelp: "limit per level, top first, e.g. 1000,500,200", unit: "Unit", chunk: "Chunk",
      saveDoc: "Save to project", documents: "Documents", refresh: "Refresh", tree: "Hierarchy", expand: "Expand",
      collapse: "Collapse", nothingYet: "Nothing chunked yet.", bubbles: "Bubbles",
      bubblesHelp: "Pieces the cascade could only force-split, kept for review.", chunks: "Chunks", level: "Level",
      leaves: "leaves", viewHelp: "Chunk a text, or open a document: each chunk is coloured, hover for its id.",
      signal: "Gap signal", curve: "Curve", blocks: "Blocks",
      blocksHelp: "Edit a block: it turns dirty, and is re-chunked in the background once you pause.",
      search: "Search", queryPlaceholder: "Ask the project…", mode: "Mode", go: "Search", editBlock: "Edit block",
      live: "Save as I type", save: "Save", close: "Close",
      footer: "Spans are exact: the chunks concatenate back to your text.",
      connected: "connected", keyNeeded: "key needed", keyInvalid: "key invalid", offline: "offline",
      noText: "Paste or upload some text first.", chunking: "chunking…", saving: "saving…",
      chunkedIn: "{n} chunks in {ms} ms", savedDoc: "saved as “{t}”; chunking in the background",
      noDocs: "No documents in this project yet.", del: "delete", confirmDelete: "Delete “{t}” and its chunks?",
      chars: "chars", sentences: "sentences", depth: "depth", stale: "being re-chunked",
      unit_chars: "chars", unit_bytes: "bytes", unit_tokens: "tokens", points: "points", gaps: "gaps",
      score: "score", raw: "raw", rev: "rev",
      noBubbles: "No bubbles: nothing had to be force-split.", priority: "priority", category: "category",
      content: "content", where: "where", searching: "searching…", noResults: "No results.",
      results: "{n} results in {ms} ms", fallback: "fell back to {f}", edit: "Edit", playground: "Playground",
      docView: "Document", newProjectPrompt: "Name of the new project (letters, digits, _ - .)",
      unreadable: "This file could not be read.", pages: "p. {p}", reading: "Reading {name}…", tooBig: "Too large: the server takes at most {n} characters.",
      offset: "offset", value: "value", inChunk: "in chunk", cuts: "cuts", threshold: "threshold",
      conflict: "Someone else changed this block (now revision {r}); reloaded their text.",
      status_clean: "clean", status_queued: "queued", status_running: "re-chunking", status_failed: "failed",
      status_dirty: "dirty", status_saving: "saving", status_ready: "ready", status_pending: "chunking",
      status_conflict: "changed elsewhere", yourText: "Your text (not saved):",
      dueIn: "in {s} s", allLevels: "all", emptyQuery: "Type a query.", noProject: "No project selected.",
      blockCount: "{n} blocks", openFirst: "Save the text to the project, then search it.",
      keyHelp: "Paste the API key that `logichunk serve` printed.",
    },
    zh: {
      tagline: "按逻辑断点切分文本", project: "项目", newProject: "+ 新建", apiKey: "API 密钥", useKey: "使用",
      input: "文本", pastePlaceholder: "在此粘贴文本，或上传文件", upload: "上传文件…", sampleZh: "中文示例",
      sampleEn: "English sample", method: "方法", sizes: "大小", sizesHelp: "各层上限，自上而下，如 1000,500,200",
      unit: "单位", chunk: "切分", saveDoc: "保存到项目", documents: "文档", refresh: "刷新", tree: "层级结构",
      expand: "展开", collapse: "折叠", nothingYet: "尚未切分。", bubbles: "气泡",
      bubblesHelp: "级联只能强制切分的片段，留待审阅。", chunks: "分块", level: "层级", leaves: "叶子",
      viewHelp: "切分一段文本或打开一篇文档：每个分块着色显示，悬停可见其编号。", signal: "断点信号",
      curve: "曲线", blocks: "段落块", blocksHelp: "编辑段落块：它会被标记为待处理，停止输入后在后台重新切分。",
      search: "检索", queryPlaceholder: "向项目提问…", mode: "模式", go: "检索", editBlock: "编辑段落块",
      live: "边输入边保存", save: "保存", close: "关闭", footer: "分块是原文的精确区间：拼接后与原文一字不差。",
      connected: "已连接", keyNeeded: "需要密钥", keyInvalid: "密钥无效", offline: "离线",
      noText: "请先粘贴或上传文本。", chunking: "切分中…", saving: "保存中…", chunkedIn: "{n} 个分块，用时 {ms} 毫秒",
      savedDoc: "已保存为“{t}”，正在后台切分", noDocs: "此项目还没有文档。", del: "删除",
      confirmDelete: "删除“{t}”及其分块？", chars: "字符", sentences: "句", depth: "深度", stale: "正在重新切分",
      unit_chars: "字符", unit_bytes: "字节", unit_tokens: "词元", points: "个点", gaps: "个间隙",
      score: "得分", raw: "原始", rev: "版本",
      noBubbles: "没有气泡：无需强制切分。", priority: "优先级", category: "类别", content: "内容", where: "位置",
      searching: "检索中…", noResults: "没有结果。", results: "{n} 条结果，用时 {ms} 毫秒", fallback: "已回退到 {f}",
      edit: "编辑", playground: "试切", docView: "文档", newProjectPrompt: "新项目名称（字母、数字、_ - .）",
      unreadable: "无法读取该文件。", pages: "第 {p} 页", reading: "正在读取 {name}…", tooBig: "文本过长：服务器最多接受 {n} 个字符。", offset: "位置",
      value: "数值", inChunk: "所在分块", cuts: "切点", threshold: "阈值",
      conflict: "该段落块已被他人修改（当前版本 {r}），已载入最新文本。", status_clean: "已切分",
      status_queued: "排队中", status_running: "切分中", status_failed: "失败", status_dirty: "待处理",
      status_saving: "保存中", status_ready: "就绪", status_pending: "切分中", dueIn: "{s} 秒后",
      status_conflict: "已被他人修改", yourText: "你输入的文本（未保存）：",
      allLevels: "全部", emptyQuery: "请输入检索内容。", noProject: "未选择项目。", blockCount: "{n} 个段落块",
      openFirst: "先把文本保存到项目，再检索。", keyHelp: "请粘贴 `logichunk serve` 打印的 API 密钥。",
    },
  };
  const CURVE_NAMES = {
    en: { entropy: "entropy gap score (tier 1)", composite: "composite score (tier 3)",
      similarity: "adjacent-sentence similarity", structure: "author's structure (5 = heading)",
      window_entropy: "window entropy (bits)",
      perplexity: "window perplexity", divergence: "window divergence (JSD)", novelty: "novelty (cache surprisal)" },
    zh: { entropy: "熵断点得分（第 1 层）", composite: "综合得分（第 3 层）", similarity: "相邻句相似度",
      structure: "文档结构强度（5 = 标题）",
      window_entropy: "窗口熵（比特）", perplexity: "窗口困惑度", divergence: "窗口散度（JSD）",
      novelty: "新颖度（缓存惊异度）" },
  };
  const THRESHOLD_NAMES = { zh: { "weakest cut taken": "已取切点中最弱者", "average gap": "平均断点",
    "similarity threshold": "相似度阈值" } };

  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  };
  const SVGNS = "http://www.w3.org/2000/svg";
  const svg = (tag, attrs) => {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    return e;
  };

  const state = {
    key: localStorage.getItem("logichunk.key") || "",
    lang: localStorage.getItem("logichunk.lang") || ((navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en"),
    project: localStorage.getItem("logichunk.project") || "",
    info: null,
    view: null, // {source, title, text, map, nodes, byId, kids, cuts, curves, bubbles, docId, blocks}
    depth: 0, // 0 = deepest level
    selected: null,
    signal: localStorage.getItem("logichunk.signal") || "",
    pollTimer: null,
    edit: null, // {blockId, revision, timer, inflight}
  };

  function t(key, vars) {
    let s = (I18N[state.lang] && I18N[state.lang][key]) || I18N.en[key] || key;
    for (const k in vars || {}) s = s.split("{" + k + "}").join(String(vars[k])); // no $& / $' patterns
    return s;
  }

  function applyI18n() {
    document.documentElement.lang = state.lang === "zh" ? "zh-CN" : "en";
    document.querySelectorAll("[data-i18n]").forEach((e) => { e.textContent = t(e.dataset.i18n); });
    document.querySelectorAll("[data-i18n-placeholder]").forEach((e) => { e.placeholder = t(e.dataset.i18nPlaceholder); });
    document.querySelectorAll("[data-i18n-title]").forEach((e) => { e.title = t(e.dataset.i18nTitle); });
    $("lang").textContent = state.lang === "zh" ? "English" : "中文";
    if (state.view) render();
    if (state.view && state.view.blocks) renderBlocks(state.view.blocks);
    if ($("text").value) updateCount();
    if (state.info) loadDocs().catch(() => {});
  }

  // ------------------------------------------------------------------ HTTP
  class ApiError extends Error {
    constructor(status, body) {
      const err = (body && body.error) || {};
      super(err.message || "HTTP " + status);
      this.status = status; this.code = err.code || ""; this.details = err.details;
    }
  }

  async function api(method, path, body, opts) {
    const headers = { "X-API-Key": state.key };
    let payload;
    if (body instanceof Blob || body instanceof ArrayBuffer) {
      payload = body; headers["Content-Type"] = "application/octet-stream";
    } else if (body !== undefined) {
      payload = JSON.stringify(body); headers["Content-Type"] = "application/json";
    }
    let res;
    try {
      res = await fetch(path, { method, headers, body: payload, signal: opts && opts.signal });
    } catch (e) {
      if (e.name === "AbortError") throw e;
      setConn("offline");
      throw new ApiError(0, { error: { code: "offline", message: t("offline") } });
    }
    if (res.status === 401) {
      const b = await res.json().catch(() => ({}));
      setConn(b.error && b.error.code === "invalid_api_key" ? "invalid" : "needed");
      throw new ApiError(401, b);
    }
    if (res.status === 204) return null;
    const data = await res.json().catch(() => null);
    if (!res.ok) throw new ApiError(res.status, data);
    setConn("ok");
    return data;
  }

  function setConn(s) {
    const c = $("conn");
    c.dataset.state = s === "ok" ? "ok" : s === "offline" ? "error" : "failed";
    c.textContent = { ok: t("connected"), needed: t("keyNeeded"), invalid: t("keyInvalid"), offline: t("offline") }[s] || "";
    if (s === "needed" || s === "invalid") banner(t("keyHelp"));
    else if (s === "ok") banner("");
  }

  function banner(msg, kind) {
    const b = $("banner");
    b.hidden = !msg;
    b.textContent = msg || "";
    b.className = "banner" + (kind ? " " + kind : "");
  }

  // ------------------------------------------------------------------ text offsets
  // map[i] = UTF-16 index of code point i (length = code points + 1)
  function u16map(text) {
    if (!/[\uD800-\uDFFF]/.test(text)) return null; // identity: no surrogate pairs
    const map = new Uint32Array(text.length + 1);
    let cp = 0;
    for (let i = 0; i < text.length; i++, cp++) {
      map[cp] = i;
      const c = text.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
        const d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) i++;
      }
    }
    map[cp] = text.length;
    return map.subarray(0, cp + 1);
  }
  const at = (map, i) => (map ? map[Math.min(i, map.length - 1)] : i);
  const cpLength = (text) => { const m = u16map(text); return m ? m.length - 1 : text.length; };

  // ------------------------------------------------------------------ view model
  function makeView(src) {
    const nodes = src.nodes;
    const byId = new Map();
    const kids = new Map();
    const levelOrder = new Map();
    for (const n of nodes) {
      byId.set(n.id, n);
      const p = n.parent === undefined ? null : n.parent;
      if (!kids.has(p)) kids.set(p, []);
      kids.get(p).push(n);
      const k = levelOrder.get(n.level) || 0;
      n.colour = k % 10;
      levelOrder.set(n.level, k + 1);
    }
    const maxLevel = nodes.reduce((m, n) => Math.max(m, n.level), 0);
    return Object.assign({ byId, kids, maxLevel, map: u16map(src.text) }, src);
  }

  // chunks that tile the text at `depth` (0 = leaves): that level, plus shallower leaves
  function tiling(view, depth) {
    const d = depth || view.maxLevel;
    return view.nodes.filter((n) => {
      const leaf = !(view.kids.get(n.id) || []).length;
      return n.level === d || (n.level < d && leaf);
    });
  }

  function cutLevels(view) {
    const lv = new Map();
    for (const c of view.cuts || []) {
      if (!lv.has(c.offset) || lv.get(c.offset) > c.level) lv.set(c.offset, c.level);
    }
    return lv;
  }

  // ------------------------------------------------------------------ rendering: text
  function renderText() {
    const v = state.view;
    const box = $("text-view");
    box.textContent = "";
    const frag = document.createDocumentFragment();
    const spans = tiling(v, state.depth).filter((n) => n.start !== null && n.start !== undefined && !n.stale)
      .sort((a, b) => a.start - b.start);
    const lv = cutLevels(v);
    let pos = 0;
    const plain = (a, b, cls) => {
      if (b > a) frag.appendChild(el("span", cls || "", v.text.slice(at(v.map, a), at(v.map, b))));
    };
    for (const n of spans) {
      if (n.start < pos) continue; // overlapping (should not happen)
      plain(pos, n.start, "stale");
      const s = el("span", "chunk c" + n.colour, v.text.slice(at(v.map, n.start), at(v.map, n.end)));
      const cl = lv.get(n.start);
      if (cl && n.start > 0) s.classList.add("cut" + Math.min(cl, 3));
      s.dataset.id = n.id;
      frag.appendChild(s);
      pos = n.end;
    }
    plain(pos, cpLength(v.text), pos === 0 ? "" : "stale");
    box.appendChild(frag);
    box.dataset.renders = String(+(box.dataset.renders || 0) + 1); // lets scripts and tests wait for a new view
    box.dataset.source = v.source;
    if (state.selected) markSelected(state.selected, false);
  }

  function tipText(n) {
    const parts = [n.id];
    const anc = [];
    let p = n.parent;
    while (p) { anc.unshift(p); p = state.view.byId.get(p) ? state.view.byId.get(p).parent : null; }
    const path = anc.length ? anc.join(" › ") + " › " : "";
    return { id: parts[0], path, line: [n.method, (n.size != null ? n.size : n.end - n.start) + " " + t("unit_" + (state.view.unit || "chars")),
      t("level") + " " + n.level].join(" · ") };
  }

  function showTip(e, n) {
    const tip = $("tooltip");
    const info = tipText(n);
    tip.textContent = "";
    if (info.path) tip.appendChild(el("span", "", info.path));
    tip.appendChild(el("b", "", info.id));
    tip.appendChild(el("div", "", info.line));
    tip.hidden = false;
    const x = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
    const y = e.clientY + 16 + tip.offsetHeight > window.innerHeight ? e.clientY - tip.offsetHeight - 10 : e.clientY + 16;
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }

  function hideTip() { $("tooltip").hidden = true; }

  // ------------------------------------------------------------------ rendering: tree
  function preview(n) {
    const v = state.view;
    if (n.start === null || n.start === undefined) return n.text ? n.text.slice(0, 40) : "";
    const s = v.text.slice(at(v.map, n.start), at(v.map, Math.min(n.end, n.start + 60))).replace(/\s+/g, " ").trim();
    return s.length > 36 ? s.slice(0, 36) + "…" : s;
  }

  function renderTree() {
    const v = state.view;
    const box = $("tree");
    box.textContent = "";
    const build = (parent, depth) => {
      const frag = document.createDocumentFragment();
      for (const n of v.kids.get(parent) || []) {
        const children = v.kids.get(n.id) || [];
        const head = document.createDocumentFragment();
        head.appendChild(el("span", "swatch c" + n.colour));
        head.appendChild(el("code", "node-id", n.id));
        head.appendChild(el("span", "meth", n.kind && n.kind !== "parent" && n.kind !== "child" ? n.kind : n.method));
        head.appendChild(el("span", "size", String(n.size != null ? n.size : n.end - n.start)));
        if (n.stale) head.appendChild(el("span", "badge", t("stale"))).dataset.state = "running";
        head.appendChild(el("span", "preview", n.title || preview(n)));
        if (children.length) {
          const d = el("details");
          if (depth < 1) d.open = true;
          const s = el("summary");
          s.appendChild(head);
          s.dataset.id = n.id;
          d.appendChild(s);
          d.appendChild(build(n.id, depth + 1));
          frag.appendChild(d);
        } else {
          const leaf = el("div", "leaf");
          leaf.appendChild(head);
          leaf.dataset.id = n.id;
          frag.appendChild(leaf);
        }
      }
      return frag;
    };
    box.appendChild(build(null, 0));
    if (!v.nodes.length) box.appendChild(el("p", "muted", t("nothingYet")));
  }

  function markSelected(id, scroll) {
    state.selected = id;
    const v = state.view;
    const n = v && v.byId.get(id);
    document.querySelectorAll(".chunk.selected, .tree .selected").forEach((e) => e.classList.remove("selected"));
    if (!n) return;
    let first = null;
    document.querySelectorAll("#text-view .chunk").forEach((s) => {
      const m = v.byId.get(s.dataset.id);
      if (m && m.start >= n.start && m.end <= n.end) { s.classList.add("selected"); if (!first) first = s; }
      else if (m && m.start <= n.start && m.end >= n.end) { s.classList.add("selected"); if (!first) first = s; }
    });
    const tn = document.querySelector('.tree [data-id="' + CSS.escape(id) + '"]');
    if (tn) {
      tn.classList.add("selected");
      let d = tn.parentElement;
      while (d && d !== $("tree")) { if (d.tagName === "DETAILS") d.open = true; d = d.parentElement; }
      if (scroll) tn.scrollIntoView({ block: "nearest" });
    }
    if (first && scroll) first.scrollIntoView({ block: "center", behavior: "smooth" });
    drawPlot();
  }

  // ------------------------------------------------------------------ rendering: plot
  function seriesList() {
    const v = state.view;
    return (v && v.curves && v.curves.series) || [];
  }

  function renderSignalSelect() {
    const sel = $("signal-select");
    const names = CURVE_NAMES[state.lang] || CURVE_NAMES.en;
    const list = seriesList();
    sel.textContent = "";
    for (const s of list) {
      const o = el("option", "", names[s.name] || s.label);
      o.value = s.name;
      sel.appendChild(o);
    }
    const pref = list.find((s) => s.name === state.signal) ||
      list.find((s) => s.name === (state.view && state.view.preferSignal)) || list[0];
    if (pref) sel.value = pref.name;
  }

  function niceTicks(lo, hi, n) {
    if (!(hi > lo)) return [lo];
    const step0 = (hi - lo) / n;
    const mag = Math.pow(10, Math.floor(Math.log10(step0)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= step0) || step0;
    const out = [];
    for (let x = Math.ceil(lo / step) * step; x <= hi + 1e-9; x += step) out.push(+x.toFixed(10));
    return out;
  }

  function drawPlot() {
    const box = $("plot");
    box.textContent = "";
    const v = state.view;
    const s = seriesList().find((x) => x.name === $("signal-select").value);
    if (!v || !s) return;
    const W = Math.max(320, box.clientWidth || 800), H = 260;
    const m = { l: 46, r: 14, t: 12, b: 44 };
    const pw = W - m.l - m.r, ph = H - m.t - m.b;
    const len = Math.max(1, v.curves.length || cpLength(v.text));
    let ys = s.y.slice();
    for (const th of s.thresholds) ys.push(th.value);
    let lo = Math.min.apply(null, ys.length ? ys : [0]), hi = Math.max.apply(null, ys.length ? ys : [1]);
    if (hi - lo < 1e-9) { hi += 0.5; lo -= 0.5; }
    const pad = (hi - lo) * 0.06; lo -= pad; hi += pad;
    const X = (x) => m.l + (x / len) * pw;
    const Y = (y) => m.t + ph - ((y - lo) / (hi - lo)) * ph;
    const root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": s.label });
    for (const ty of niceTicks(lo, hi, 4)) {
      root.appendChild(svg("line", { class: "grid", x1: m.l, x2: W - m.r, y1: Y(ty), y2: Y(ty) }));
      const tx = svg("text", { class: "tick", x: m.l - 6, y: Y(ty) + 3, "text-anchor": "end" });
      tx.textContent = Math.abs(ty) >= 100 ? ty.toFixed(0) : +ty.toFixed(3);
      root.appendChild(tx);
    }
    for (const tx0 of niceTicks(0, len, 8)) {
      const tx = svg("text", { class: "tick", x: X(tx0), y: m.t + ph + 14, "text-anchor": "middle" });
      tx.textContent = tx0;
      root.appendChild(tx);
    }
    root.appendChild(svg("line", { class: "axis", x1: m.l, x2: W - m.r, y1: m.t + ph, y2: m.t + ph }));
    root.appendChild(svg("line", { class: "axis", x1: m.l, x2: m.l, y1: m.t, y2: m.t + ph }));
    // chunk band under the axis: the same colours as the text
    const band = svg("g", { class: "band" });
    for (const n of tiling(v, state.depth)) {
      if (n.start === null || n.start === undefined || n.stale) continue;
      band.appendChild(svg("rect", { class: "c" + n.colour, x: X(n.start), y: m.t + ph + 20,
        width: Math.max(0.5, X(n.end) - X(n.start)), height: 10 }));
    }
    root.appendChild(band);
    // cuts
    for (const c of v.cuts || []) {
      root.appendChild(svg("line", { class: "cut" + Math.min(c.level, 3), x1: X(c.offset), x2: X(c.offset), y1: m.t, y2: m.t + ph }));
    }
    // selected chunk
    const sel = state.selected && v.byId.get(state.selected);
    if (sel && sel.start !== null && sel.start !== undefined) {
      root.appendChild(svg("rect", { x: X(sel.start), y: m.t, width: Math.max(1, X(sel.end) - X(sel.start)), height: ph,
        fill: "#1f5fbf", "fill-opacity": "0.08" }));
    }
    // curve
    const pts = s.x.map((x, i) => X(x).toFixed(1) + "," + Y(s.y[i]).toFixed(1)).join(" ");
    root.appendChild(svg("polyline", { class: "curve", points: pts }));
    if (s.x.length <= 160) {
      s.x.forEach((x, i) => root.appendChild(svg("circle", { class: "dot", cx: X(x), cy: Y(s.y[i]), r: 2.2 })));
    }
    // thresholds
    const tnames = THRESHOLD_NAMES[state.lang] || {};
    s.thresholds.forEach((th, i) => {
      const kind = th.kind || "setting";
      root.appendChild(svg("line", { class: "thr " + kind, x1: m.l, x2: W - m.r, y1: Y(th.value), y2: Y(th.value) }));
      const lab = svg("text", { class: "thr-label " + kind, x: W - m.r - 4, y: Y(th.value) - 4 - i * 12, "text-anchor": "end" });
      lab.textContent = (tnames[th.label] || th.label) + " " + (+th.value.toFixed(3));
      root.appendChild(lab);
    });
    // hover / click
    const guide = svg("line", { class: "guide", x1: 0, x2: 0, y1: m.t, y2: m.t + ph, visibility: "hidden" });
    root.appendChild(guide);
    const hit = svg("rect", { class: "hit", x: m.l, y: m.t, width: pw, height: ph + 32 });
    const offsetAt = (ev) => {
      const r = root.getBoundingClientRect();
      const px = ((ev.clientX - r.left) / r.width) * W;
      return Math.max(0, Math.min(len, Math.round(((px - m.l) / pw) * len)));
    };
    const chunkAt = (off) => tiling(v, state.depth).find((n) => n.start <= off && off < n.end);
    hit.addEventListener("mousemove", (ev) => {
      const off = offsetAt(ev);
      guide.setAttribute("x1", X(off)); guide.setAttribute("x2", X(off)); guide.setAttribute("visibility", "visible");
      let best = -1, bd = Infinity;
      for (let i = 0; i < s.x.length; i++) { const d = Math.abs(s.x[i] - off); if (d < bd) { bd = d; best = i; } }
      const n = chunkAt(off);
      $("plot-readout").textContent = t("offset") + " " + off + (best >= 0 ? " · " + t("value") + " " + (+s.y[best].toFixed(4)) : "") +
        (n ? " · " + t("inChunk") + " " + n.id + " (" + n.method + ")" : "");
    });
    hit.addEventListener("mouseleave", () => guide.setAttribute("visibility", "hidden"));
    hit.addEventListener("click", (ev) => { const n = chunkAt(offsetAt(ev)); if (n) { markSelected(n.id, true); flash(n.id); } });
    root.appendChild(hit);
    box.appendChild(root);
    const dir = s.higher_is_break ? "↑" : "↓";
    const nc = (v.cuts || []).length;
    $("plot-readout").textContent = (CURVE_NAMES[state.lang] || CURVE_NAMES.en)[s.name] + " · " + s.points + " " +
      t(s.kind === "gap" ? "gaps" : "points") + " · " + t("cuts") + " " + nc + " · " + dir;
  }

  function flash(id) {
    document.querySelectorAll('#text-view .chunk[data-id="' + CSS.escape(id) + '"]').forEach((s) => {
      s.classList.add("flash");
      setTimeout(() => s.classList.remove("flash"), 900);
    });
  }

  // ------------------------------------------------------------------ rendering: bubbles, legend, stats
  function renderBubbles() {
    const v = state.view;
    const box = $("bubbles");
    box.textContent = "";
    const list = (v && v.bubbles) || [];
    $("bubble-count").textContent = list.length ? "(" + list.length + ")" : "";
    if (!list.length) { box.appendChild(el("p", "muted small", t("noBubbles"))); return; }
    const table = el("table", "bubbles-table");
    const head = el("tr");
    for (const h of ["priority", "category", "content", "where"]) head.appendChild(el("th", "", t(h)));
    table.appendChild(head);
    for (const b of list) {
      const tr = el("tr");
      const p = el("td"); const badge = el("span", "badge", b.priority); badge.dataset.state = b.priority; p.appendChild(badge);
      tr.appendChild(p);
      tr.appendChild(el("td", "", b.category));
      tr.appendChild(el("td", "", (b.content || "").slice(0, 140)));
      const c = b.context || {};
      const where = [];
      if (c.span) where.push("[" + c.span[0] + ", " + c.span[1] + ")");
      if (c.start !== undefined) where.push("[" + c.start + ", " + c.end + ")");
      if (c.level) where.push(t("level") + " " + c.level);
      if (c.limit) where.push("≤ " + c.limit);
      if (c.break) where.push(c.break);
      if (c.where) where.push(c.where);
      tr.appendChild(el("td", "", where.join(" · ")));
      table.appendChild(tr);
    }
    box.appendChild(table);
  }

  function renderLegendAndStats() {
    const v = state.view;
    const methods = {};
    for (const n of v.nodes) if (n.kind !== "chapter") methods[n.method] = (methods[n.method] || 0) + 1;
    const lg = $("legend");
    lg.textContent = "";
    for (const [mname, count] of Object.entries(methods)) {
      const it = el("span", "item");
      it.appendChild(el("code", "", mname));
      it.appendChild(el("span", "muted", "×" + count));
      lg.appendChild(it);
    }
    const parts = [v.source === "document" ? t("docView") + ": " + v.title : t("playground") + ": " + v.method,
      v.nodes.length + " " + t("chunks").toLowerCase(), cpLength(v.text) + " " + t("chars")];
    if (v.curves) parts.push(v.curves.sentences + " " + t("sentences"));
    if (v.timing) parts.push(v.timing.chunk_ms + " ms");
    $("view-stats").textContent = parts.join(" · ");
    $("view-title").textContent = t("chunks") + (v.title ? " — " + v.title : "");
    // depth buttons
    const db = $("depth-buttons");
    db.textContent = "";
    for (let d = 1; d <= v.maxLevel; d++) {
      const b = el("button", "ghost", String(d));
      b.type = "button";
      b.setAttribute("role", "radio");
      b.setAttribute("aria-checked", String((state.depth || v.maxLevel) === d));
      b.addEventListener("click", () => { state.depth = d; render(); });
      db.appendChild(b);
    }
  }

  function render() {
    if (!state.view) return;
    renderLegendAndStats();
    renderText();
    renderTree();
    renderSignalSelect();
    drawPlot();
    renderBubbles();
  }

  // ------------------------------------------------------------------ playground
  function parseSizes() {
    // full-width digits and separators as typed on a Chinese keyboard; every part a whole number
    const raw = $("sizes").value.replace(/[０-９]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0)).trim();
    if (!raw) return null;
    const parts = raw.split(/[,，、\s]+/).filter(Boolean);
    if (!parts.length || parts.some((x) => !/^[0-9]+$/.test(x) || parseInt(x, 10) < 1)) throw new Error(t("sizesHelp"));
    return parts.map((x) => parseInt(x, 10));
  }

  async function chunkText() {
    const text = $("text").value;
    if (!text.trim()) { $("chunk-status").textContent = t("noText"); return; }
    const limit = state.info && state.info.limits.max_chunk_chars;
    if (limit && cpLength(text) > limit) { $("chunk-status").textContent = t("tooBig", { n: limit }); return; }
    let sizes;
    try { sizes = parseSizes(); } catch (e) { $("chunk-status").textContent = e.message; return; }
    $("chunk-status").textContent = t("chunking");
    $("chunk-btn").disabled = true;
    try {
      const r = await api("POST", "/api/chunk", { text, method: $("method").value, sizes, unit: $("unit").value });
      stopPolling();
      $("blocks-card").hidden = true;
      document.querySelectorAll(".doc-list li.active").forEach((e) => e.classList.remove("active"));
      state.view = makeView({ source: "playground", title: "", method: r.method, text, nodes: r.chunks, cuts: r.cuts,
        curves: r.curves, bubbles: r.bubbles, unit: r.unit, timing: r.timing,
        preferSignal: r.method.indexOf("semantic") >= 0 || r.method === "parent-child" ? "similarity" : "entropy" });
      state.depth = 0; state.selected = null;
      render();
      $("chunk-status").textContent = t("chunkedIn", { n: r.chunks.length, ms: r.timing.chunk_ms });
    } catch (e) {
      $("chunk-status").textContent = e.message;
    } finally {
      $("chunk-btn").disabled = false;
    }
  }

  async function saveDoc() {
    const text = $("text").value;
    if (!text.trim()) { $("chunk-status").textContent = t("noText"); return; }
    if (!state.project) { $("chunk-status").textContent = t("noProject"); return; }
    const first = text.trim().split(/\n/)[0].replace(/^#+\s*/, "").slice(0, 60) || "untitled";
    $("chunk-status").textContent = t("saving");
    try {
      const r = await api("POST", "/api/projects/" + encodeURIComponent(state.project) + "/documents?wait=30",
        { title: state.uploadName || first, text });
      $("chunk-status").textContent = t("savedDoc", { t: r.title });
      await loadDocs();
      await openDoc(r.id);
    } catch (e) {
      $("chunk-status").textContent = e.message;
    }
  }

  // ------------------------------------------------------------------ projects and documents
  async function loadInfo() {
    state.info = await api("GET", "/api/info");
    const ms = $("method");
    const prev = ms.value;
    ms.textContent = "";
    for (const m of state.info.methods) {
      const o = el("option", "", m.name);
      o.value = m.name; o.title = m.about;
      ms.appendChild(o);
    }
    if (prev) ms.value = prev;
    const mode = $("mode");
    mode.textContent = "";
    for (const m of state.info.retrieve_modes) {
      const o = el("option", "", m);
      o.value = m;
      mode.appendChild(o);
    }
    mode.value = state.info.default_mode;
  }

  async function loadProjects() {
    const r = await api("GET", "/api/projects");
    const sel = $("project-select");
    sel.textContent = "";
    for (const p of r.projects) {
      const o = el("option", "", p.name);
      o.value = p.name;
      sel.appendChild(o);
    }
    if (!r.projects.some((p) => p.name === state.project)) state.project = state.info.default_project;
    sel.value = state.project;
  }

  const docBase = () => "/api/projects/" + encodeURIComponent(state.project) + "/documents";

  async function loadDocs() {
    if (!state.project) return;
    const r = await api("GET", docBase());
    const ul = $("doc-list");
    ul.textContent = "";
    if (!r.documents.length) ul.appendChild(el("li", "muted", t("noDocs")));
    for (const d of r.documents) {
      const li = el("li");
      li.dataset.id = d.id;
      if (state.view && state.view.docId === d.id) li.classList.add("active");
      const st = el("span", "badge", t("status_" + d.status));
      st.dataset.state = d.status;
      li.appendChild(el("span", "title", d.title));
      li.appendChild(el("span", "muted small", d.chars + " " + t("chars")));
      li.appendChild(st);
      const del = el("button", "del", "×");
      del.type = "button"; del.title = t("del");
      del.addEventListener("click", async (e) => {
        e.stopPropagation();
        if (!confirm(t("confirmDelete", { t: d.title }))) return;
        await api("DELETE", docBase() + "/" + d.id);
        if (state.view && state.view.docId === d.id) { state.view = null; $("blocks-card").hidden = true; }
        loadDocs();
      });
      li.appendChild(del);
      li.addEventListener("click", () => openDoc(d.id));
      ul.appendChild(li);
    }
    return r.documents;
  }

  async function openDoc(id, keepSelection) {
    const [tree, curves] = await Promise.all([api("GET", docBase() + "/" + id + "/tree"),
      api("GET", docBase() + "/" + id + "/curves")]);
    const sel = keepSelection ? state.selected : null;
    state.view = makeView({ source: "document", docId: id, title: tree.document.title, text: tree.text, nodes: tree.chunks,
      cuts: curves.cuts, curves: curves.curves, bubbles: tree.bubbles, blocks: tree.blocks, unit: "chars",
      preferSignal: "similarity" });
    if (!keepSelection) state.depth = 0;
    state.selected = sel;
    render();
    renderBlocks(tree.blocks);
    document.querySelectorAll(".doc-list li").forEach((li) => li.classList.toggle("active", li.dataset.id === id));
    if (tree.blocks.some((b) => b.status !== "clean" && b.status !== "failed")) startPolling();
  }

  // ------------------------------------------------------------------ blocks: edit and status
  function statusBadge(b) {
    const s = el("span", "badge", t("status_" + b.status) + (b.due_in_ms ? " " + t("dueIn", { s: (b.due_in_ms / 1000).toFixed(1) }) : ""));
    s.dataset.state = b.status;
    if (b.error) s.title = b.error;
    return s;
  }

  function renderBlocks(blocks) {
    const card = $("blocks-card");
    card.hidden = false;
    const ul = $("block-list");
    ul.textContent = "";
    const v = state.view;
    const counts = {};
    for (const b of blocks) {
      counts[b.status] = (counts[b.status] || 0) + 1;
      const li = el("li");
      li.dataset.id = b.id;
      li.appendChild(el("span", "muted small", b.chapter + "·" + b.order));
      li.appendChild(statusBadge(b));
      const text = v && v.text ? v.text.slice(at(v.map, b.start), at(v.map, b.end)) : "";
      li.appendChild(el("span", "preview", text.replace(/\s+/g, " ").trim().slice(0, 80)));
      const btn = el("button", "small", t("edit"));
      btn.type = "button";
      btn.addEventListener("click", () => openEditor(b.id));
      li.appendChild(btn);
      ul.appendChild(li);
    }
    $("blocks-summary").textContent = t("blockCount", { n: blocks.length }) + " · " +
      Object.entries(counts).map(([k, n]) => t("status_" + k) + " " + n).join(" · ");
  }

  function stopPolling() { if (state.pollTimer) { clearTimeout(state.pollTimer); state.pollTimer = null; } }

  function startPolling() {
    stopPolling();
    const tick = async () => {
      const v = state.view;
      if (!v || v.source !== "document") return;
      try {
        const doc = await api("GET", docBase() + "/" + v.docId);
        renderBlocks(doc.blocks);
        v.blocks = doc.blocks;
        if (state.edit) {
          const b = doc.blocks.find((x) => x.id === state.edit.blockId);
          if (b && !state.edit.inflight) setEditStatus(b.status, b);
        }
        const busy = doc.blocks.some((b) => b.status === "queued" || b.status === "running" || b.status === "dirty");
        if (!busy) { state.pollTimer = null; await openDoc(v.docId, true); loadDocs(); return; }
      } catch (e) { /* keep polling: a transient error */ }
      state.pollTimer = setTimeout(tick, 600);
    };
    state.pollTimer = setTimeout(tick, 300);
  }

  function setEditStatus(status, b) {
    const s = $("edit-status");
    s.dataset.state = status;
    s.textContent = t("status_" + status) + (b && b.due_in_ms ? " " + t("dueIn", { s: (b.due_in_ms / 1000).toFixed(1) }) : "");
  }

  async function openEditor(blockId) {
    const base = "/api/projects/" + encodeURIComponent(state.project) + "/blocks/" + blockId;
    const b = await api("GET", base);
    state.edit = { blockId, revision: b.revision, timer: null, inflight: false, base };
    $("edit-id").textContent = blockId;
    $("edit-text").value = b.content;
    $("edit-msg").textContent = "";
    setEditStatus(b.status, b);
    $("edit-dialog").showModal();
  }

  async function saveEdit() {
    const ed = state.edit;
    if (!ed) return;
    clearTimeout(ed.timer);
    ed.inflight = true;
    setEditStatus("saving");
    try {
      const r = await api("PUT", ed.base, { content: $("edit-text").value, expected_revision: ed.revision });
      ed.revision = r.revision;
      setEditStatus(r.status, r);
      $("edit-msg").textContent = t("rev") + " " + r.revision;
      startPolling();
    } catch (e) {
      if (e.status === 409) {
        const mine = $("edit-text").value;
        const cur = await api("GET", ed.base);
        ed.revision = cur.revision;
        $("edit-text").value = cur.content;
        setEditStatus("conflict");
        const msg = $("edit-msg");
        msg.textContent = t("conflict", { r: cur.revision });
        if (mine !== cur.content) { // keep what the user typed, to copy from
          const kept = el("details", "kept");
          kept.appendChild(el("summary", "", t("yourText")));
          kept.appendChild(el("pre", "", mine));
          msg.appendChild(kept);
        }
        startPolling(); // the document view shows the other client's text, not the old one
      } else {
        setEditStatus("failed");
        $("edit-msg").textContent = e.message;
      }
    } finally {
      ed.inflight = false;
    }
  }

  // ------------------------------------------------------------------ search
  async function search(ev) {
    if (ev) ev.preventDefault();
    const q = $("query").value.trim();
    const st = $("search-status");
    if (!q) { st.textContent = t("emptyQuery"); return; }
    if (!state.project) { st.textContent = t("noProject"); return; }
    st.textContent = t("searching");
    const ol = $("results");
    ol.textContent = "";
    try {
      const r = await api("POST", "/api/projects/" + encodeURIComponent(state.project) + "/search",
        { query: q, mode: $("mode").value, top_k: parseInt($("top-k").value, 10) || 5 });
      st.textContent = r.hits.length ? t("results", { n: r.hits.length, ms: r.took_ms.toFixed(1) }) +
        (r.fallback ? " · " + t("fallback", { f: r.fallback }) : "") : t("noResults");
      for (const h of r.hits) ol.appendChild(renderHit(h));
    } catch (e) {
      st.textContent = e.message;
    }
  }

  function renderHit(h) {
    const li = el("li");
    li.dataset.id = h.id;
    const head = el("div", "hit-head");
    head.appendChild(el("span", "", "#" + h.rank));
    head.appendChild(el("code", "node-id", h.id));
    head.appendChild(el("span", "", h.level || ""));
    head.appendChild(el("span", "", t("score") + " " + (+h.score.toFixed(4)) +
      (h.raw_score !== h.score ? " (" + t("raw") + " " + (+h.raw_score.toFixed(4)) + ")" : "")));
    if (h.view && h.view.child_id && h.view.child_id !== h.id) head.appendChild(el("span", "", "↳ " + h.view.child_id));
    if (h.meta && h.meta.relation) head.appendChild(el("span", "", h.meta.relation));
    if (h.document_title) head.appendChild(el("span", "", "· " + h.document_title));
    if (h.document_pages) {  // a PDF's hit: the pages its text lies on
      const [a, b] = h.document_pages;
      head.appendChild(el("span", "hit-pages", t("pages", { p: a === b ? String(a) : a + "–" + b })));
    }
    li.appendChild(head);
    const p = el("p", "hit-text");
    const view = h.view;
    if (view && view.text) {
      const map = u16map(view.text);
      if (view.window) p.appendChild(document.createTextNode("… "));
      if (view.highlight) {
        const a = at(map, Math.max(0, view.highlight[0])), b = at(map, Math.max(0, view.highlight[1]));
        p.appendChild(document.createTextNode(view.text.slice(0, a)));
        p.appendChild(el("mark", "", view.text.slice(a, b)));
        p.appendChild(document.createTextNode(view.text.slice(b)));
      } else {
        p.appendChild(document.createTextNode(view.text));
      }
      if (view.window) p.appendChild(document.createTextNode(" …"));
    }
    li.appendChild(p);
    li.addEventListener("click", async () => {
      if (!state.view || state.view.docId !== h.document_id) await openDoc(h.document_id);
      const target = (view && view.child_id) || h.id;
      if (state.view.byId.has(target)) { markSelected(target, true); flash(target); }
    });
    return li;
  }

  // ------------------------------------------------------------------ wiring
  async function connect() {
    if (!state.key) { setConn("needed"); return; }
    try {
      await loadInfo();
      await loadProjects();
      await loadDocs();
    } catch (e) {
      if (e.status !== 401) banner(e.message);
    }
  }

  async function loadSample(lang) {
    const res = await fetch(lang === "zh" ? "/static/samples/zh.txt" : "/static/samples/en.md");
    $("text").value = await res.text();
    state.uploadName = lang === "zh" ? "桃花源记（示例）" : "Three public-domain texts (sample)";
    $("method").value = "logic-chain";
    $("sizes").value = lang === "zh" ? "300,150" : "1000,400";
    updateCount();
  }

  function updateCount() { $("text-count").textContent = cpLength($("text").value) + " " + t("chars"); }

  function init() {
    const m = /(?:^|[#&])key=([^&]+)/.exec(location.hash);
    if (m) {
      state.key = decodeURIComponent(m[1]);
      localStorage.setItem("logichunk.key", state.key);
      history.replaceState(null, "", location.pathname + location.search);
    }
    $("api-key").value = state.key;
    applyI18n();
    $("lang").addEventListener("click", () => {
      state.lang = state.lang === "zh" ? "en" : "zh";
      localStorage.setItem("logichunk.lang", state.lang);
      applyI18n();
    });
    $("save-key").addEventListener("click", () => {
      state.key = $("api-key").value.trim();
      localStorage.setItem("logichunk.key", state.key);
      connect();
    });
    $("api-key").addEventListener("keydown", (e) => { if (e.key === "Enter") $("save-key").click(); });
    $("project-select").addEventListener("change", () => {
      state.project = $("project-select").value;
      localStorage.setItem("logichunk.project", state.project);
      loadDocs();
    });
    $("new-project").addEventListener("click", async () => {
      const name = prompt(t("newProjectPrompt"));
      if (!name) return;
      try {
        await api("POST", "/api/projects", { name: name.trim() });
        state.project = name.trim();
        localStorage.setItem("logichunk.project", state.project);
        await loadProjects();
        await loadDocs();
      } catch (e) { banner(e.message); }
    });
    $("chunk-btn").addEventListener("click", chunkText);
    $("save-btn").addEventListener("click", saveDoc);
    $("sample-zh").addEventListener("click", () => loadSample("zh"));
    $("sample-en").addEventListener("click", () => loadSample("en"));
    $("text").addEventListener("input", () => { state.uploadName = null; updateCount(); });
    $("file").addEventListener("change", async () => {
      const f = $("file").files[0];
      if (!f) return;
      try {
        const buf = await f.arrayBuffer();
        const head = new TextDecoder("latin1").decode(new Uint8Array(buf.slice(0, 64)));
        let text = null, decoded = "";
        if (!/\.pdf$/i.test(f.name) && !head.trimStart().startsWith("%PDF-")) {
          try { text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(buf); } catch (e) { text = null; }
        }
        if (text === null) {  // a PDF's text layer, UTF-16/32 or GB18030 text: the server reads it (nothing stored)
          $("chunk-status").textContent = t("reading", { name: f.name });
          const read = await api("POST", "/api/read?name=" + encodeURIComponent(f.name), buf);
          text = read.text;
          decoded = read.decoded && read.decoded !== "pdf" ? read.decoded : "";  // (said: e.g. "read as gb18030")
        }
        $("text").value = text;
        state.uploadName = f.name.replace(/\.[^.]+$/, "");
        updateCount();
        $("chunk-status").textContent = decoded ? `${f.name} (${decoded})` : f.name;
      } catch (e) {
        $("chunk-status").textContent = (e instanceof ApiError && e.message) || t("unreadable");
      }
      $("file").value = "";
    });
    $("refresh-docs").addEventListener("click", () => loadDocs().then(() => banner(""), (e) => banner(e.message)));
    $("expand-all").addEventListener("click", () => document.querySelectorAll("#tree details").forEach((d) => { d.open = true; }));
    $("collapse-all").addEventListener("click", () => document.querySelectorAll("#tree details").forEach((d) => { d.open = false; }));
    $("signal-select").addEventListener("change", () => {
      state.signal = $("signal-select").value;
      localStorage.setItem("logichunk.signal", state.signal);
      drawPlot();
    });
    $("search-form").addEventListener("submit", search);
    const tv = $("text-view");
    tv.addEventListener("mousemove", (e) => {
      const s = e.target.closest && e.target.closest(".chunk");
      if (s && state.view) showTip(e, state.view.byId.get(s.dataset.id)); else hideTip();
    });
    tv.addEventListener("mouseleave", hideTip);
    tv.addEventListener("click", (e) => {
      const s = e.target.closest && e.target.closest(".chunk");
      if (s) markSelected(s.dataset.id, false);
    });
    $("tree").addEventListener("click", (e) => {
      const node = e.target.closest("[data-id]");
      if (!node) return;
      if (node.tagName === "SUMMARY" && e.target.closest(".swatch, .node-id, .preview") === null) return; // toggling
      markSelected(node.dataset.id, true);
      flash(node.dataset.id);
    });
    $("edit-save").addEventListener("click", saveEdit);
    $("edit-close").addEventListener("click", () => { $("edit-dialog").close(); });
    $("edit-dialog").addEventListener("close", () => {
      if (state.edit && state.edit.timer) { clearTimeout(state.edit.timer); saveEdit(); }
      state.edit = null;
    });
    $("edit-text").addEventListener("input", () => {
      const ed = state.edit;
      if (!ed || !$("live").checked) return;
      clearTimeout(ed.timer);
      setEditStatus("dirty");
      ed.timer = setTimeout(() => { ed.timer = null; saveEdit(); }, 600);
    });
    let rt = null;
    window.addEventListener("resize", () => { clearTimeout(rt); rt = setTimeout(drawPlot, 120); });
    connect();
  }

  document.addEventListener("DOMContentLoaded", init);
})();
