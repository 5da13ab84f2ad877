// matcore web page (docs/web.md): appended to the emscripten glue as the end of matcore.js.
// Everything numerical is asked of the core (web/api.cpp): this file only keeps the page's
// state, builds the controls from the core's field table and draws the answers.
// State lives in the URL's query string (the permalink): the keys of KEYS, in the command line's
// own syntax (a=0x3c00,2^-24  set=frac_bits=26,c_frac=26).
(function () {
  'use strict';
  const KEYS = ['arch', 'type', 'out', 'variant', 'set', 'toml', 'a', 'b', 'c', 'sa', 'sb',
                'arch2', 'type2', 'out2', 'variant2', 'set2', 'seed', 'step', 'lesson'];
  const DEFAULT = {arch: 'mi300x', type: 'fp16', a: '1,2^-24,2^-24', b: '1,1,1', c: '0'};
  let M = null, catalog = null, lessons = [], state = {}, last = null;
  const $ = (id) => document.getElementById(id);
  // For browsers without a WebDriver (Firefox on Debian: tb/web/test_web.py): with report=1 in
  // the URL, the page posts d, the trace and any script error to its server's /report when ready.
  const REPORT = /[?&]report(=|&|$)/.test(window.location.search);
  const scriptErrors = [];
  if (REPORT) {
    window.addEventListener('error', (e) => scriptErrors.push(String(e.message)));
    const err = console.error.bind(console);
    console.error = (...a) => { scriptErrors.push(a.join(' ')); err(...a); };
  }
  function report() {
    fetch('report', {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({ua: navigator.userAgent, d: $('d-hex').textContent, error: $('error').textContent,
                            trace: last && last.ok ? last.trace : '', errors: scriptErrors})});
  }

  // ------------------------------------------------------------------ state and the URL
  // The query split by hand: decodeURIComponent keeps '+' (URLSearchParams would make it a
  // space, and '+' belongs to the value syntax: a=1+2^-24).
  function query() {
    const q = {};
    for (const part of window.location.search.replace(/^\?/, '').split('&')) {
      if (!part) continue;
      const i = part.indexOf('=');
      const k = i < 0 ? part : part.slice(0, i);
      try { q[k] = i < 0 ? '' : decodeURIComponent(part.slice(i + 1)); } catch (e) { q[k] = part.slice(i + 1); }
    }
    return q;
  }
  function readUrl() {
    const q = query();
    const s = {};
    for (const k of KEYS) if (k in q) s[k] = q[k];
    if (!s.arch && !s.toml) Object.assign(s, DEFAULT, s);
    return s;
  }
  function permalink() {
    const parts = [];
    for (const k of KEYS) {
      if (state[k] === undefined || state[k] === '') continue;
      const v = encodeURIComponent(state[k]).replace(/%2C/g, ',').replace(/%5E/g, '^').replace(/%3D/g, '=');
      parts.push(k + '=' + v);
    }
    return window.location.pathname + (parts.length ? '?' + parts.join('&') : '');
  }
  function writeUrl() {
    const url = permalink();
    window.history.replaceState(null, '', url);
    $('permalink').href = url;
  }

  // ------------------------------------------------------------------ set strings (--set syntax)
  // "k=v,k=v": a part without '=' belongs to the previous value (type=e4m3,e5m2), as apply_settings reads it.
  function parseSet(text) {
    const out = [];
    for (const part of (text || '').split(',')) {
      if (part.includes('=')) {
        const i = part.indexOf('=');
        out.push([part.slice(0, i).trim(), part.slice(i + 1).trim()]);
      } else if (out.length && part !== '') {
        out[out.length - 1][1] += ',' + part.trim();
      } else if (part.trim() !== '') {
        out.push([part.trim(), '']);
      }
    }
    return out;
  }
  function setField(text, name, value) {
    const kv = parseSet(text).filter(([k]) => k !== name);
    if (value !== null) kv.push([name, value]);
    return kv.map(([k, v]) => k + '=' + v).join(',');
  }

  // ------------------------------------------------------------------ preset selectors
  function archEntry(a) { return catalog.archs.find((x) => x.arch === a); }
  function typeEntry(a, t) { const e = archEntry(a); return e ? e.types.find((x) => x.type === t) : null; }
  // An option for each value; a chosen value that is not among them (a typo, an alias the
  // command line takes: type=bf16_1k) is kept as an option of its own, for the core to judge.
  function fill(sel, values, chosen, label) {
    sel.innerHTML = '';
    if (chosen !== undefined && chosen !== '' && !values.includes(chosen)) values = [chosen].concat(values);
    for (const v of values) {
      const o = document.createElement('option');
      o.value = v;
      o.textContent = label ? label(v) : v;
      sel.appendChild(o);
    }
    sel.value = values.includes(chosen) ? chosen : values[0];
    return sel.value;
  }
  function fillDesign(sfx) {
    const archs = catalog.archs.map((x) => x.arch);
    const arch = fill($('arch' + sfx), archs, state['arch' + sfx] || archs[0]);
    const types = archEntry(arch) ? archEntry(arch).types.map((x) => x.type) : [];
    const type = fill($('type' + sfx), types, state['type' + sfx]);
    const te = typeEntry(arch, type) || {outs: [''], variants: [], hypothesis: ''};
    const out = fill($('out' + sfx), te.outs, state['out' + sfx] || '', (v) => v || 'default');
    const variant = fill($('variant' + sfx), [''].concat(te.variants), state['variant' + sfx] || '', (v) => v || 'default');
    Object.assign(state, {['arch' + sfx]: arch, ['type' + sfx]: type, ['out' + sfx]: out, ['variant' + sfx]: variant});
    if (!sfx) {
      $('hypothesis').hidden = !te.hypothesis;
      $('hypothesis').textContent = te.hypothesis ? 'hypothesis: ' + te.hypothesis : '';
    }
  }

  // ------------------------------------------------------------------ field controls
  function fieldControl(f) {
    let el;
    if (f.kind === 'bool') {
      el = document.createElement('input');
      el.type = 'checkbox';
    } else if (f.kind === 'choice' || f.kind === 'format') {
      el = document.createElement('select');
      const opts = f.kind === 'choice' ? f.choices : (f.name.startsWith('scale') ? catalog.scale_formats : catalog.formats);
      for (const v of opts) {
        const o = document.createElement('option');
        o.value = o.textContent = v;
        el.appendChild(o);
      }
    } else {
      el = document.createElement('input');
      el.type = f.kind === 'int' ? 'number' : 'text';
      if (f.kind === 'int') { el.min = f.lo; el.max = f.hi; el.style.width = '7em'; }
    }
    el.id = 'field-' + f.name;
    el.dataset.field = f.name;
    el.addEventListener('change', () => {
      const v = f.kind === 'bool' ? (el.checked ? 'true' : 'false') : el.value;
      state.set = setField(state.set, f.name, v);
      $('set').value = state.set;
      render();
    });
    return el;
  }
  function buildFields() {
    const box = $('fields');
    let section = null;
    for (const f of catalog.fields) {
      if (f.section !== section) {
        section = f.section;
        const h = document.createElement('h3');
        h.textContent = section;
        h.style.fontSize = '1em';
        box.appendChild(h);
      }
      const div = document.createElement('div');
      div.className = 'field';
      div.id = 'fieldrow-' + f.name;
      const lab = document.createElement('label');
      const name = document.createElement('code');
      name.textContent = f.name + ' ';
      lab.appendChild(name);
      lab.appendChild(fieldControl(f));
      const doc = document.createElement('span');
      doc.className = 'doc';
      doc.textContent = f.doc + ' (' + f.allowed + ')';
      lab.appendChild(doc);
      div.appendChild(lab);
      box.appendChild(div);
    }
  }
  function showFields(values) {
    const changed = new Set(parseSet(state.set).map(([k]) => k));
    for (const f of catalog.fields) {
      const el = $('field-' + f.name);
      const v = values[f.name];
      if (f.kind === 'bool') el.checked = v === 'true';
      else el.value = v;
      $('fieldrow-' + f.name).classList.toggle('changed', changed.has(f.name));
    }
  }

  // ------------------------------------------------------------------ evaluation
  function request(svg) {
    const r = {svg: svg};
    for (const k of ['arch', 'type', 'out', 'variant', 'set', 'toml']) r[k] = state[k] || '';
    // a pasted vector-file line is read by the core's own reader (api.cpp, ab_text)
    for (const k of ['a', 'b', 'c', 'sa', 'sb']) r[k] = (state[k] || '').trim();
    if (state.arch2 && $('cmp').checked) for (const k of ['arch2', 'type2', 'out2', 'variant2', 'set2']) r[k] = state[k] || '';
    return r;
  }
  function render() {
    writeUrl();
    const t0 = performance.now();
    const res = JSON.parse(M.evaluate(request(true)));
    last = res;
    $('error').textContent = res.ok ? '' : res.error;
    if (!res.ok) {
      for (const id of ['d-hex', 'd-dec', 'd2-hex', 'd2-dec', 'picture', 'notes', 'warnings', 'pipeline']) $(id).textContent = '';
      $('records').tBodies[0].innerHTML = '';
      $('records-head').textContent = '';
      return;
    }
    const d0 = res.designs[0];
    $('d-hex').textContent = '0x' + d0.d_hex;
    $('d-dec').textContent = d0.d_dec + '  (' + d0.out_fmt + ')';
    const label = (d, i) => d.name + (d.variant ? '+' + d.variant : '') + (state[i ? 'set2' : 'set'] ? ' with ' + state[i ? 'set2' : 'set'] : '');
    const two = res.designs.length === 2;
    $('d2-line').hidden = !two;
    if (two) {
      $('d2-hex').textContent = '0x' + res.designs[1].d_hex;
      $('d2-dec').textContent = res.designs[1].d_dec + '  (' + label(res.designs[1], 1) + ')';
    }
    $('notes').textContent = res.notes.map((n) => 'note: ' + n).join('\n');
    $('warnings').textContent = res.designs.flatMap((d) => d.warnings.map((w) => 'warning: ' + d.name + ': ' + w)).join('\n');
    $('pipeline').textContent = res.designs.map((d, i) => label(d, i) + ': ' + d.pipeline).join('\n');
    $('scales').hidden = !d0.scale_block;
    if (!state.toml) $('toml').value = d0.toml;
    showFields(d0.fields);
    $('picture').innerHTML = res.svg.replace(/^<\?xml[^>]*>\s*/, '');
    $('svg-link').href = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(res.svg);
    drawRecords(res);
    markDifference(res);
    setupStep(d0.stages);
    document.body.dataset.renderMs = (performance.now() - t0).toFixed(1);
    // the edit's picture on the screen: two animation frames later the browser has laid it out and painted it
    delete document.body.dataset.paintMs;
    requestAnimationFrame(() => requestAnimationFrame(() => {
      document.body.dataset.paintMs = (performance.now() - t0).toFixed(1);
      if (!document.body.dataset.firstPaintMs) document.body.dataset.firstPaintMs = performance.now().toFixed(0);
    }));
  }

  // The rows of both designs matched by (group, name), as `matcore dot --dp A --dp B` prints them.
  function drawRecords(res) {
    const head = $('records-head');
    const two = res.designs.length === 2;
    head.textContent = '';
    for (const t of ['stage record', res.designs[0].name].concat(two ? [res.designs[1].name] : [], ['bits'])) {
      const th = document.createElement('th');
      th.textContent = t;
      head.appendChild(th);
    }
    const body = $('records').tBodies[0];
    body.innerHTML = '';
    const other = two ? res.designs[1].rows.slice() : [];
    differing = [];
    res.designs[0].rows.forEach((row, i) => {
      const tr = document.createElement('tr');
      tr.dataset.stage = row.stage;
      let cells = [row.name, row.value];
      if (two) {
        const j = other.findIndex((x) => x && x.group === row.group && x.name === row.name);
        cells.push(j >= 0 ? other[j].value : '-');
        if (j >= 0) other[j] = null;
        if (cells[2] !== row.value && row.name !== 'group') differing.push(row.name);
      }
      cells.push(row.bits);
      for (const c of cells) {
        const td = document.createElement('td');
        td.textContent = c;
        tr.appendChild(td);
      }
      if (i === res.first_diff) { tr.className = 'diff'; tr.title = 'the first record whose bits differ'; tr.id = 'first-diff'; }
      body.appendChild(tr);
    });
  }

  // The first record whose bits differ, in the picture too: its rows in both panels.
  // (The picture draws numbers, not every record: the first differing record it draws.)
  let differing = [];
  function markDifference(res) {
    if (res.first_diff < 0) return;
    const drawn = new Set([...$('picture').querySelectorAll('g.row')].map((g) => g.dataset.row));
    const name = differing.find((n) => drawn.has(n));
    for (const g of $('picture').querySelectorAll('g.row')) {
      if (name === undefined || g.dataset.row !== name) continue;
      g.classList.add('diff');
      const box = g.getBBox();
      const r = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
      for (const [k, v] of [['x', box.x - 2], ['y', box.y - 1], ['width', box.width + 4], ['height', box.height + 2]]) r.setAttribute(k, v);
      r.setAttribute('class', 'diffbox');
      g.insertBefore(r, g.firstChild);
    }
  }

  // ------------------------------------------------------------------ the step control
  let stages = [];
  function stageIndex(name) {
    const i = stages.indexOf(name.split('.')[0]);
    return i < 0 ? 0 : i;
  }
  function setupStep(st) {
    stages = st;
    const s = $('step');
    s.max = stages.length - 1;
    const want = state.step === undefined || state.step === '' ? stages.length - 1 : Math.min(+state.step, stages.length - 1);
    s.value = want;
    showStep();
  }
  function showStep() {
    const k = +$('step').value;
    $('step-label').textContent = 'stage ' + (k + 1) + ' of ' + stages.length + ': ' + stages[k];
    for (const tr of $('records').tBodies[0].rows) {
      const i = stageIndex(tr.cells[0].textContent);
      tr.classList.toggle('hidden', i > k);
      tr.classList.toggle('current', i === k && k < stages.length - 1);
    }
    for (const g of $('picture').querySelectorAll('g.row')) {
      const i = stageIndex(g.dataset.row);
      g.classList.toggle('hidden', i > k);
      g.classList.toggle('current', i === k);
    }
  }
  function step(delta) {
    const s = $('step');
    s.value = Math.max(0, Math.min(+s.max, +s.value + delta));
    state.step = +s.value === +s.max ? '' : s.value;
    showStep();
    writeUrl();
  }

  // ------------------------------------------------------------------ lessons
  function loadLessons() {
    if (lessons.length) return;
    const ls = JSON.parse(M.lessons());
    lessons = Array.isArray(ls) ? ls : [];
    if (!Array.isArray(ls)) console.error('lessons: ' + ls.error);
  }
  function buildLessons() {
    const groups = [...new Set(lessons.map((l) => l.group))];
    const sel = $('lesson-group');
    fill(sel, groups, groups[0]);
    const show = () => {
      const ol = $('lessons');
      ol.innerHTML = '';
      lessons.forEach((l, i) => {
        if (l.group !== sel.value) return;
        const li = document.createElement('li');
        const b = document.createElement('button');
        b.textContent = l.title;
        b.id = 'lesson-' + i;
        b.addEventListener('click', () => takeLesson(i));
        li.appendChild(b);
        ol.appendChild(li);
      });
    };
    sel.addEventListener('change', show);
    show();
  }
  function takeLesson(i) {
    const l = lessons[i];
    Object.assign(state, {arch: l.arch, type: l.type, out: '', variant: '', set: '', toml: '', a: l.a, b: l.b, c: l.c, sa: '', sb: '', step: '', lesson: l.source});
    syncInputs();
    render();
  }
  function showLesson() {
    // the lesson by its source (a table's file:line, a probe's name): links survive new lessons
    const l = state.lesson ? lessons.find((x) => x.source === state.lesson) : null;
    $('lesson-text').textContent = l ? l.group + ': ' + l.title + '. ' + l.text + '\n' + l.expect + '  [' + l.source + ']' : '';
  }

  // ------------------------------------------------------------------ wiring
  function syncInputs() {
    fillDesign('');
    if (state.arch2) fillDesign('2');
    for (const k of ['set', 'a', 'b', 'c', 'sa', 'sb', 'set2', 'seed']) $(k).value = state[k] || (k === 'seed' ? '0' : '');
    if (state.toml) $('toml').value = state.toml;
    $('cmp').checked = !!state.arch2;
    $('cmp-box').hidden = !state.arch2;
    showLesson();
  }
  function onInput(id, key, alsoReset) {
    $(id).addEventListener('change', () => {
      state[key] = $(id).value;
      if (alsoReset) for (const k of alsoReset) state[k] = '';
      if (key !== 'lesson') state.lesson = '';
      syncInputs();
      render();
    });
  }
  function wire() {
    for (const sfx of ['', '2']) {
      onInput('arch' + sfx, 'arch' + sfx, ['type' + sfx, 'out' + sfx, 'variant' + sfx]);
      onInput('type' + sfx, 'type' + sfx, ['out' + sfx, 'variant' + sfx]);
      onInput('out' + sfx, 'out' + sfx);
      onInput('variant' + sfx, 'variant' + sfx);
      onInput('set' + sfx, 'set' + sfx);
    }
    for (const k of ['a', 'b', 'c', 'sa', 'sb', 'seed']) onInput(k, k);
    $('cmp').addEventListener('change', () => {
      if ($('cmp').checked) { state.arch2 = state.arch2 || state.arch; state.type2 = state.type2 || state.type; }
      else for (const k of ['arch2', 'type2', 'out2', 'variant2', 'set2']) state[k] = '';
      syncInputs();
      render();
    });
    $('random').addEventListener('click', () => {
      const r = request(false);
      r.seed = $('seed').value || '0';
      const res = JSON.parse(M.random_operands(r));
      if (!res.ok) { $('error').textContent = res.error; return; }
      Object.assign(state, {a: res.a, b: res.b, c: res.c, sa: res.sa || '', sb: res.sb || '', seed: r.seed, lesson: ''});
      syncInputs();
      render();
    });
    $('toml-apply').addEventListener('click', () => { state.toml = $('toml').value; state.set = ''; syncInputs(); render(); });
    $('toml-clear').addEventListener('click', () => { state.toml = ''; syncInputs(); render(); });
    $('toml-load').addEventListener('change', (e) => {
      const f = e.target.files[0];
      if (f) f.text().then((t) => { $('toml').value = t; state.toml = t; state.set = ''; syncInputs(); render(); });
    });
    $('step').addEventListener('input', () => step(0));
    $('step-prev').addEventListener('click', () => step(-1));
    $('step-next').addEventListener('click', () => step(1));
    $('copy-link').addEventListener('click', () => {
      const url = window.location.href;
      if (navigator.clipboard) navigator.clipboard.writeText(url).catch(() => {});
    });
  }

  function start(module) {
    M = module;
    catalog = JSON.parse(M.catalog());
    state = readUrl();
    // the lessons' text needs them; the list itself is built after the first picture
    if (state.lesson) loadLessons();
    buildFields();
    wire();
    syncInputs();
    $('loading').hidden = true;
    $('app').hidden = false;
    render();
    document.body.dataset.readyMs = performance.now().toFixed(0);  // after navigation start
    window.setTimeout(() => {
      loadLessons();
      buildLessons();
      document.body.dataset.ready = '1';
      if (REPORT) report();
    }, 0);
  }
  // For tests and the console: the module and the page's functions.
  window.matcorePage = {render: () => render(), state: () => state, last: () => last};
  matcoreModule().then((m) => { window.matcore = m; start(m); });
})();
