'use strict';
// otc inspect: the page. Plain JavaScript, no build step, nothing loaded
// from elsewhere. It talks only to the local server that served it, with
// the token of its URL; that server adds the credentials and proxies to
// the servers given on the command line. Secrets and the user id live in
// their fields only: never in history, never in storage.

const TOKEN = new URLSearchParams(location.search).get('token') || '';
const KINDS = { otc: 'OTC/OXP', mcp: 'MCP', rest: 'REST', a2a: 'A2A' };
const state = {
  info: null,        // {servers, credentials}
  server: '',        // the kind shown
  tools: {},         // kind -> [tool]
  tool: null,        // the tool shown
  form: null,        // the form's root node
  mode: 'form',      // 'form' or 'json'
  history: [],       // {n, server, tool, input, userId, outcome, at}
  current: null,     // the history entry shown in the result panel
  seq: 0,
  secrets: new Map(), // secret id -> value, in this tab's memory only
  readables: {},     // kind -> {resources, prompts}: what an MCP server has beside its tools
};
const MAX_HISTORY = 100;

// --- small helpers ---------------------------------------------------------

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v === true) e.setAttribute(k, '');
    else e.setAttribute(k, v);
  }
  for (const k of kids.flat()) {
    if (k === undefined || k === null || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}
const $ = (sel, root) => (root || document).querySelector(sel);
const pretty = v => JSON.stringify(v, null, 2);
function status(text) { $('#status').textContent = text; }

async function api(path, opts) {
  opts = opts || {};
  opts.headers = Object.assign({ 'X-Otc-Inspect-Token': TOKEN }, opts.headers || {});
  const res = await fetch(path, opts);
  return res;
}

// --- JSON Schema helpers ---------------------------------------------------

let rootSchema = {};
function resolve(s) {
  let guard = 0;
  while (s && typeof s === 'object' && typeof s.$ref === 'string' && guard++ < 20) {
    const m = s.$ref.match(/^#\/(\$defs|definitions)\/(.+)$/);
    const target = m && rootSchema[m[1]] && rootSchema[m[1]][decodeURIComponent(m[2])];
    if (!target) break;
    const rest = Object.assign({}, s); delete rest.$ref;
    s = Object.assign({}, target, rest);
  }
  return s || {};
}

// shape reads a schema into {type, nullable, schema}: the one type a field
// edits, and whether null is allowed beside it.
function shape(s) {
  s = resolve(s);
  let nullable = false;
  let type = s.type;
  if (Array.isArray(type)) {
    nullable = type.includes('null');
    const rest = type.filter(t => t !== 'null');
    type = rest.length === 1 ? rest[0] : (rest.length ? 'any' : 'null');
  }
  const branches = s.anyOf || s.oneOf;
  if (!type && Array.isArray(branches)) {
    const nonNull = branches.map(resolve).filter(b => b.type !== 'null');
    nullable = nonNull.length < branches.length;
    if (nonNull.length === 1) {
      const inner = shape(Object.assign({}, nonNull[0], { description: s.description || nonNull[0].description, default: s.default !== undefined ? s.default : nonNull[0].default }));
      return { type: inner.type, nullable: nullable || inner.nullable, schema: inner.schema };
    }
    return { type: 'any', nullable, schema: s };
  }
  if (!type) {
    if (s.properties) type = 'object';
    else if (s.items) type = 'array';
    else if (s.enum) type = 'enum';
    else type = 'any';
  }
  if (s.enum && type !== 'boolean') type = 'enum';
  if (s.const !== undefined && !s.enum) { s = Object.assign({}, s, { enum: [s.const] }); type = 'enum'; }
  return { type, nullable, schema: s };
}

function typeText(s) {
  s = resolve(s);
  const branches = s.anyOf || s.oneOf;
  if (Array.isArray(branches)) return branches.map(typeText).join(' or ');
  if (Array.isArray(s.type)) return s.type.join(' or ');
  if (s.type === 'array' && s.items) return 'array of ' + typeText(s.items);
  return s.type || (s.properties ? 'object' : 'any');
}

function details(s) {
  s = resolve(s);
  const parts = [];
  const first = (s.anyOf || s.oneOf || []).map(resolve).find(b => b.type !== 'null');
  const d = Object.assign({}, first || {}, s);
  if (d.enum) parts.push('one of ' + d.enum.map(v => JSON.stringify(v)).join(', '));
  for (const [k, w] of [['minimum', '≥'], ['exclusiveMinimum', '>'], ['maximum', '≤'], ['exclusiveMaximum', '<'],
    ['minLength', 'min length'], ['maxLength', 'max length'], ['minItems', 'min items'], ['maxItems', 'max items'],
    ['format', 'format'], ['pattern', 'pattern'], ['default', 'default']]) {
    if (d[k] !== undefined) parts.push(w + ' ' + JSON.stringify(d[k]));
  }
  return parts.join('; ');
}

function paramTree(s, depth) {
  s = resolve(s);
  const props = s.properties || {};
  const req = new Set(s.required || []);
  const names = Object.keys(props).sort((a, b) => (req.has(b) - req.has(a)) || a.localeCompare(b));
  if (!names.length) return el('p', { class: 'muted' }, 'No parameters.');
  const ul = el('ul', { class: 'tree' });
  for (const n of names) {
    const p = resolve(props[n]);
    const det = details(p);
    const li = el('li', {},
      el('span', { class: 'pname' }, n), ' ', el('span', { class: 'muted' }, typeText(p)), ' ',
      req.has(n) ? el('span', { class: 'req' }, 'required') : el('span', { class: 'muted small' }, 'optional'),
      det ? el('span', { class: 'muted small' }, ' — ' + det) : null,
      p.description ? el('div', { class: 'small' }, p.description) : null);
    let inner = p;
    if (inner.items) inner = resolve(inner.items);
    for (const b of (p.anyOf || p.oneOf || [])) { if (resolve(b).properties) inner = resolve(b); }
    if (inner.properties && depth < 8) li.append(paramTree(inner, depth + 1));
    ul.append(li);
  }
  return ul;
}

// --- the form --------------------------------------------------------------
// Each node edits one value: get() returns {present, value}; set(v) shows
// v (undefined: left out); check() returns the problems [{path, msg}].

let fieldSeq = 0;
function fieldId() { return 'f' + (++fieldSeq); }
function onFormChange() { if (state.mode === 'form') syncRaw(); markWarnings(); }

function errorSlot(path) { return el('span', { class: 'field-error', 'data-path': path, 'aria-live': 'polite' }); }

function buildNode(schema, path, name, required, depth) {
  const sh = shape(schema);
  const s = sh.schema;
  const id = fieldId();
  const optional = !required;
  const wrap = el('div', { class: 'field', 'data-field': path });
  const include = optional ? el('input', { type: 'checkbox', 'aria-label': 'send ' + (path || 'value'), title: 'send this field', class: 'include', onchange: onFormChange }) : null;
  const nullBox = sh.nullable ? el('input', { type: 'checkbox', 'aria-label': (path || 'value') + ' is null', class: 'nullbox', onchange: () => { if (include) include.checked = true; onFormChange(); } }) : null;
  const labelParts = [
    include,
    name !== null ? el('label', { for: id, class: 'fname' }, name) : null,
    el('span', { class: 'hint' }, typeText(s) + (required ? ', required' : ', optional')),
    nullBox ? el('label', { class: 'hint' }, nullBox, ' null') : null,
  ];
  const hint = [s.description, details(s)].filter(Boolean).join(' — ');
  const touch = () => { if (include) include.checked = true; if (nullBox) nullBox.checked = false; onFormChange(); };
  let inner; // {get, set, check, el}
  switch (sh.type) {
    case 'object':
      if (s.properties && depth < 8) inner = objectEditor(s, path, depth, touch);
      else inner = jsonEditor(id, touch);
      break;
    case 'array':
      if (depth < 8) inner = arrayEditor(s, path, depth, touch);
      else inner = jsonEditor(id, touch);
      break;
    case 'enum': inner = enumEditor(s, id, touch); break;
    case 'boolean': inner = boolEditor(id, touch); break;
    case 'integer': case 'number': inner = numberEditor(s, sh.type, id, touch, path); break;
    case 'string': inner = stringEditor(s, id, touch, path); break;
    case 'null': inner = { el: el('span', { class: 'muted' }, 'null'), get: () => null, set: () => {}, check: () => [] }; break;
    default: inner = jsonEditor(id, touch);
  }
  const isBlock = sh.type === 'object' || sh.type === 'array';
  let body;
  if (path === '') {
    wrap.append(inner.el, errorSlot(path));
    body = wrap;
  } else if (isBlock && name !== null) {
    body = el('fieldset', { 'data-field': path }, el('legend', {}, ...labelParts), hint ? el('div', { class: 'hint' }, hint) : null, inner.el, errorSlot(path));
  } else {
    wrap.append(...[el('div', { class: 'label' }, ...labelParts), hint ? el('div', { class: 'hint' }, hint) : null, inner.el, errorSlot(path)].filter(Boolean));
    body = wrap;
  }
  const node = {
    el: body, path,
    get() {
      if (include && !include.checked) return { present: false };
      if (nullBox && nullBox.checked) return { present: true, value: null };
      return { present: true, value: inner.get() };
    },
    set(v) {
      if (v === undefined) { if (include) include.checked = false; return; }
      if (include) include.checked = true;
      if (v === null && nullBox) { nullBox.checked = true; return; }
      if (nullBox) nullBox.checked = false;
      inner.set(v);
    },
    check() {
      const g = node.get();
      if (!g.present) return required ? [{ path, msg: 'required' }] : [];
      if (g.value === null) return sh.nullable || sh.type === 'null' ? [] : [{ path, msg: 'may not be null' }];
      return inner.check(g.value);
    },
  };
  // Defaults are filled in; an optional field is sent only once included.
  if (s.default !== undefined) { inner.set(s.default); }
  if (include) include.checked = false;
  return node;
}

function objectEditor(s, path, depth, touch) {
  const req = new Set(s.required || []);
  const names = Object.keys(s.properties).sort((a, b) => (req.has(b) - req.has(a)) || a.localeCompare(b));
  const kids = names.map(n => [n, buildNode(s.properties[n], path ? path + '.' + n : n, n, req.has(n), depth + 1)]);
  const box = el('div', { oninput: touch }, kids.map(([, k]) => k.el));
  return {
    el: box,
    get() { const o = {}; for (const [n, k] of kids) { const g = k.get(); if (g.present) o[n] = g.value; } return o; },
    set(v) {
      if (!v || typeof v !== 'object' || Array.isArray(v)) return;
      for (const [n, k] of kids) k.set(v[n]);
    },
    check() { return kids.flatMap(([, k]) => k.check()); },
  };
}

function arrayEditor(s, path, depth, touch) {
  const itemSchema = s.items || {};
  const list = el('div', {});
  let items = [];
  const add = (v) => {
    const n = buildNode(itemSchema, path + '.' + items.length, '#' + (items.length + 1), true, depth + 1);
    const row = el('div', { class: 'array-item' }, n.el,
      el('button', { type: 'button', 'aria-label': 'remove item of ' + path, onclick: () => {
        // Built again, so that the items keep paths by their index (which
        // the server's parameter errors name).
        const rest = items.filter(x => x !== n).map(x => x.get().value);
        editor.set(rest); touch();
      } }, 'Remove'));
    items.push(n);
    list.append(row);
    if (v !== undefined) n.set(v);
  };
  const addBtn = el('button', { type: 'button', class: 'add-item', 'aria-label': 'add item to ' + path, onclick: () => { add(); touch(); } }, 'Add item');
  const editor = {
    el: el('div', {}, list, addBtn),
    get() { return items.map(n => n.get()).filter(g => g.present).map(g => g.value); },
    set(v) { list.textContent = ''; items = []; if (Array.isArray(v)) v.forEach(x => add(x)); },
    check(v) {
      const out = items.flatMap(n => n.check());
      if (s.minItems !== undefined && v.length < s.minItems) out.push({ path, msg: 'at least ' + s.minItems + ' items' });
      if (s.maxItems !== undefined && v.length > s.maxItems) out.push({ path, msg: 'at most ' + s.maxItems + ' items' });
      return out;
    },
  };
  return editor;
}

function enumEditor(s, id, touch) {
  const sel = el('select', { id, onchange: touch }, s.enum.map((v, i) => el('option', { value: String(i) }, JSON.stringify(v))));
  return {
    el: sel,
    get: () => s.enum[Number(sel.value)],
    set(v) { const i = s.enum.findIndex(x => JSON.stringify(x) === JSON.stringify(v)); if (i >= 0) sel.value = String(i); },
    check: () => [],
  };
}

function boolEditor(id, touch) {
  const box = el('input', { type: 'checkbox', id, onchange: touch });
  return { el: box, get: () => box.checked, set(v) { box.checked = !!v; }, check: () => [] };
}

function numberEditor(s, type, id, touch, path) {
  // A text field, not type=number: what the schema refuses can be typed,
  // and sent, to see the server refuse it.
  const inp = el('input', { type: 'text', id, inputmode: type === 'integer' ? 'numeric' : 'decimal', name: path, oninput: touch,
    placeholder: [s.minimum !== undefined ? '≥ ' + s.minimum : '', s.maximum !== undefined ? '≤ ' + s.maximum : ''].filter(Boolean).join(', ') || type });
  return {
    el: inp,
    get() {
      const t = inp.value.trim();
      if (t !== '' && /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) return Number(t);
      return inp.value;
    },
    set(v) { inp.value = v === undefined ? '' : String(v); },
    check(v) {
      if (typeof v !== 'number') return [{ path, msg: 'not a number' }];
      const p = [];
      if (type === 'integer' && !Number.isInteger(v)) p.push('not an integer');
      if (s.minimum !== undefined && v < s.minimum) p.push('less than ' + s.minimum);
      if (s.exclusiveMinimum !== undefined && v <= s.exclusiveMinimum) p.push('not more than ' + s.exclusiveMinimum);
      if (s.maximum !== undefined && v > s.maximum) p.push('more than ' + s.maximum);
      if (s.exclusiveMaximum !== undefined && v >= s.exclusiveMaximum) p.push('not less than ' + s.exclusiveMaximum);
      if (s.multipleOf && Math.abs(v / s.multipleOf - Math.round(v / s.multipleOf)) > 1e-9) p.push('not a multiple of ' + s.multipleOf);
      return p.map(msg => ({ path, msg }));
    },
  };
}

function stringEditor(s, id, touch, path) {
  const long = !s.maxLength || s.maxLength > 200;
  const inp = long && s.format === undefined && !s.pattern
    ? el('textarea', { id, rows: 1, name: path, oninput: touch })
    : el('input', { type: 'text', id, name: path, oninput: touch, placeholder: s.format || '' });
  return {
    el: inp,
    get: () => inp.value,
    set(v) { inp.value = typeof v === 'string' ? v : JSON.stringify(v); },
    check(v) {
      if (typeof v !== 'string') return [{ path, msg: 'not a string' }];
      const p = [];
      const n = [...v].length;
      if (s.minLength !== undefined && n < s.minLength) p.push('shorter than ' + s.minLength);
      if (s.maxLength !== undefined && n > s.maxLength) p.push('longer than ' + s.maxLength);
      if (s.pattern) { try { if (!new RegExp(s.pattern, 'u').test(v)) p.push('does not match ' + s.pattern); } catch (e) { /* a pattern JS cannot read */ } }
      return p.map(msg => ({ path, msg }));
    },
  };
}

function jsonEditor(id, touch) {
  const ta = el('textarea', { id, rows: 2, placeholder: 'JSON', oninput: touch });
  return {
    el: ta,
    get() { const t = ta.value.trim(); if (t === '') return null; try { return JSON.parse(t); } catch (e) { return ta.value; } },
    set(v) { ta.value = JSON.stringify(v, null, 2); },
    check: () => [],
  };
}

function formValue() {
  if (!state.form) return {};
  const g = state.form.get();
  return g.present ? g.value : {};
}

function syncRaw() {
  const ta = $('#raw-json');
  if (ta) ta.value = pretty(formValue());
}

// clearMarks removes the marks of kind ('warn' or 'server'), or all.
function clearMarks(kind) {
  document.querySelectorAll('.field-error').forEach(e => {
    if (!kind || e.classList.contains(kind)) { e.textContent = ''; e.classList.remove('warn', 'server'); }
  });
  document.querySelectorAll('[data-field].invalid').forEach(e => { if (!e.querySelector('.field-error.server:not(:empty)')) e.classList.remove('invalid'); });
}

function slotFor(path) {
  return [...document.querySelectorAll('#form .field-error')].find(e => e.dataset.path === path);
}

function markWarnings() {
  if (!state.form) return;
  document.querySelectorAll('.field-error.warn').forEach(e => { e.textContent = ''; e.classList.remove('warn'); e.parentElement.classList.remove('invalid'); });
  const problems = state.form.check();
  for (const p of problems) {
    const slot = slotFor(p.path);
    if (!slot || slot.classList.contains('server')) continue;
    slot.classList.add('warn');
    slot.textContent = (slot.textContent ? slot.textContent + '; ' : '') + p.msg;
    slot.parentElement.classList.add('invalid');
  }
  const n = $('#warnings');
  if (n) n.textContent = problems.length ? problems.length + ' input problem(s) marked; you can still send.' : '';
}

function normPath(p) { return String(p).replace(/^\/+/, '').replace(/\//g, '.').replace(/\[(\d+)\]/g, '.$1'); }

function markServerErrors(errs) {
  clearMarks('server');
  for (const [k, msg] of Object.entries(errs || {})) {
    const slot = slotFor(normPath(k));
    if (!slot) continue;
    slot.classList.remove('warn');
    slot.classList.add('server');
    slot.textContent = msg;
    slot.parentElement.classList.add('invalid');
  }
}

// --- catalog ---------------------------------------------------------------

async function loadInfo() {
  const res = await api('/api/info');
  if (!res.ok) { status('Refused: ' + (await res.text())); return; }
  state.info = await res.json();
  const sel = $('#server');
  for (const s of state.info.servers) sel.append(el('option', { value: s.kind }, KINDS[s.kind] + ' — ' + s.url));
  sel.addEventListener('change', () => {
    state.server = sel.value;
    // The tool stays open when the other server has it too.
    const twin = state.tool && findOn(sel.value, state.tool);
    if (twin) openTool(twin, formValue());
    else { state.tool = null; state.form = null; $('#tool').textContent = ''; $('#tool').append(el('p', { class: 'empty' }, 'Choose a tool on the left.')); }
    renderCatalog();
    askServerSearch();
  });
  state.server = state.info.servers[0].kind;
  await Promise.all(state.info.servers.map(s => loadTools(s.kind)));
  await Promise.all(state.info.servers.filter(s => s.kind === 'mcp').map(s => loadReadables(s.kind)));
  renderCatalog();
}

async function loadTools(kind) {
  status('Listing tools…');
  const res = await api('/api/tools?server=' + encodeURIComponent(kind));
  let body;
  try { body = await res.json(); } catch (e) { body = { error: { message: 'status ' + res.status } }; }
  if (!res.ok) {
    state.tools[kind] = [];
    state.toolsError = state.toolsError || {};
    state.toolsError[kind] = body.error;
    status('');
    return;
  }
  state.tools[kind] = body.tools || [];
  status('');
}

// The server's own search, when it has one: its best matches for the
// words typed, shown above the tools whose text holds them.
let searchSeq = 0;
let searchTimer = null;
function onSearchInput() {
  renderCatalog();
  clearTimeout(searchTimer);
  searchTimer = setTimeout(askServerSearch, 150);
}

async function askServerSearch() {
  const q = $('#search').value.trim();
  const kind = state.server;
  const seq = ++searchSeq;
  if (!q || (state.noSearch && state.noSearch[kind])) { state.found = null; return; }
  const res = await api('/api/search?server=' + encodeURIComponent(kind) + '&q=' + encodeURIComponent(q));
  let body = {};
  try { body = await res.json(); } catch (e) { /* left as no search */ }
  if (seq !== searchSeq) return; // typed on since
  if (res.ok && body.supported === false) { state.noSearch = state.noSearch || {}; state.noSearch[kind] = true; }
  state.found = res.ok && body.supported ? { q, kind, calls: body.calls || [] } : null;
  renderCatalog();
}

function renderCatalog() {
  const box = $('#tools');
  box.textContent = '';
  const typed = $('#search').value.trim();
  const q = typed.toLowerCase();
  const err = state.toolsError && state.toolsError[state.server];
  if (err) box.append(el('div', { class: 'box refused', role: 'alert' }, 'Could not list the tools: ', err.message, err.status ? ' (HTTP ' + err.status + ')' : ''));
  const all = state.tools[state.server] || [];
  const found = state.found && state.found.q === typed && state.found.kind === state.server
    ? state.found.calls.map(c => all.find(t => t.call === c)).filter(Boolean) : [];
  const item = t => {
    const label = state.server === 'otc' ? t.id.split('@')[0] : t.name;
    return el('button', {
      type: 'button', class: 'tool-item', 'data-tool': t.call, title: t.description,
      'aria-current': state.tool && state.tool.call === t.call ? 'true' : 'false',
      onclick: () => openTool(t),
    }, label, t.version ? el('span', { class: 'ver' }, t.version) : null);
  };
  if (found.length) {
    box.append(el('div', { class: 'toolkit', id: 'best-matches' }, 'Best matches (the server\'s search)'));
    for (const t of found) box.append(item(t));
  }
  const tools = all.filter(t => !found.includes(t) && (!q || [t.id, t.name, t.title, t.description].join(' ').toLowerCase().includes(q)));
  const groups = new Map();
  for (const t of tools) { if (!groups.has(t.toolkit)) groups.set(t.toolkit, []); groups.get(t.toolkit).push(t); }
  for (const [kit, ts] of [...groups.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    box.append(el('div', { class: 'toolkit' }, kit));
    for (const t of ts) box.append(item(t));
  }
  if (!tools.length && !found.length && !err) box.append(el('p', { class: 'muted' }, q ? 'No tool matches.' : 'No tools.'));
  renderReadables(box, q);
}

// --- a tool ----------------------------------------------------------------

function openTool(t, input) {
  state.tool = t;
  state.readable = null;
  rootSchema = t.input_schema || {};
  const main = $('#tool');
  main.textContent = '';
  const reqs = t.requirements || {};
  const secrets = reqs.secrets || [];
  // The OTC catalog has no titles or annotations; MCP lists them.
  const twin = findOn('mcp', t) || {};
  const ann = t.annotations || twin.annotations || null;
  const title = t.title || twin.title;
  main.append(...[
    el('h2', { id: 'tool-title' }, t.id.split('@')[0], ' ', t.version ? el('span', { class: 'muted small' }, 'v' + t.version) : null),
    title ? el('div', { class: 'muted' }, title) : null,
    el('div', { class: 'muted small' }, 'id ', el('code', {}, t.id), t.name !== t.id ? [' · name ', el('code', {}, t.name)] : null, ' · on ', KINDS[state.server]),
    t.upstream ? el('div', { id: 'upstream', class: 'small' }, 'served from ', el('span', { class: 'badge on' }, 'upstream ' + t.upstream.name),
      t.upstream.format ? el('span', { class: 'badge' }, t.upstream.format) : null,
      t.upstream.state ? el('span', { class: 'badge' + (t.upstream.state === 'up' ? ' on' : '') }, t.upstream.state) : null) : null,
    el('p', { id: 'tool-description' }, t.description || ''),
    ann ? el('div', { id: 'annotations' }, Object.entries(ann).map(([k, v]) => el('span', { class: 'badge' + (v === true ? ' on' : '') }, k.replace(/Hint$/, '') + ': ' + JSON.stringify(v)))) : null,
    (secrets.length || reqs.user_id || (reqs.authorization || []).length) ? el('p', {}, 'Requires: ',
      secrets.map(s => el('span', { class: 'badge on' }, 'secret ' + s.id)),
      (reqs.authorization || []).map(a => el('span', { class: 'badge on' }, 'authorization ' + a.id)),
      reqs.user_id ? el('span', { class: 'badge on' }, 'a user id') : null) : null,
    el('details', { open: true }, el('summary', {}, 'Parameters'), paramTree(rootSchema, 0)),
    t.output_schema !== undefined ? el('details', {}, el('summary', {}, 'Output schema'), el('pre', {}, t.output_schema === null ? 'null (no value)' : pretty(t.output_schema))) : null,
  ].filter(Boolean));
  // The call form.
  const form = el('form', { id: 'form', novalidate: true, onsubmit: ev => { ev.preventDefault(); send(); } });
  state.form = buildNode(rootSchema, '', null, true, 0);
  const raw = el('textarea', { id: 'raw-json', rows: 10, 'aria-label': 'Input as JSON', hidden: true, oninput: onRawInput });
  const tabs = el('div', { class: 'tabs', role: 'group', 'aria-label': 'Input editor' },
    el('button', { type: 'button', id: 'mode-form', 'aria-pressed': 'true', onclick: () => setMode('form') }, 'Form'),
    el('button', { type: 'button', id: 'mode-json', 'aria-pressed': 'false', onclick: () => setMode('json') }, 'JSON'));
  const creds = el('div', { class: 'secrets' },
    el('div', { class: 'small muted' }, 'Sent with the call, never stored.', ' ', credText()),
    secrets.map(s => el('div', { class: 'field' }, el('label', { for: 'secret-' + s.id, class: 'fname' }, 'secret ' + s.id), ' ',
      el('input', { type: 'password', id: 'secret-' + s.id, 'data-secret': s.id, autocomplete: 'off', value: state.secrets.get(s.id) || '',
        oninput: ev => state.secrets.set(s.id, ev.target.value) }))),
    el('details', { open: reqs.user_id || secrets.length ? true : false }, el('summary', {}, 'More call options'),
      el('div', { class: 'field' }, el('label', { for: 'user-id', class: 'fname' }, 'user id'), ' ', el('input', { type: 'text', id: 'user-id', autocomplete: 'off' })),
      el('div', { class: 'field' }, el('label', { for: 'extra-secrets', class: 'fname' }, 'other secrets'), ' ', el('input', { type: 'text', id: 'extra-secrets', placeholder: 'ID=value, …', autocomplete: 'off' })),
      el('div', { class: 'field' }, el('label', { for: 'call-id', class: 'fname' }, 'call id'), ' ', el('input', { type: 'text', id: 'call-id', placeholder: 'new for each call', autocomplete: 'off' }))));
  const others = (state.info.servers || []).filter(s => s.kind !== state.server && findOn(s.kind, t));
  form.append(el('h3', {}, 'Call'), tabs, el('div', { id: 'form-fields' }, state.form.el), raw, creds,
    el('div', { class: 'actions' },
      el('button', { type: 'submit', class: 'primary', id: 'call' }, 'Call'),
      others.length ? el('button', { type: 'button', id: 'compare', onclick: compare }, 'Compare wire formats') : null,
      el('span', { class: 'small muted' }, 'Ctrl+Enter calls'),
      el('span', { id: 'warnings', class: 'small', role: 'status' })));
  main.append(form, el('section', { id: 'result', 'aria-live': 'polite' }));
  if (input !== undefined) state.form.set(input);
  state.mode = 'form';
  syncRaw();
  markWarnings();
  renderCatalog();
  main.focus();
}

function credText() {
  const c = (state.info && state.info.credentials) || {};
  const on = [c.api_key && 'API key', c.bearer && 'bearer token', c.jwt && 'signed JWT'].filter(Boolean);
  return on.length ? 'otc inspect adds its ' + on.join(', ') + '.' : '';
}

function findOn(kind, t) {
  return (state.tools[kind] || []).find(x => x.name === t.name);
}

function setMode(m) {
  if (m === state.mode) return;
  if (m === 'form') {
    let v;
    try { v = JSON.parse($('#raw-json').value); } catch (e) { $('#warnings').textContent = 'The JSON does not parse: ' + e.message; return; }
    state.form.set(v);
  } else {
    syncRaw();
  }
  state.mode = m;
  $('#raw-json').hidden = m !== 'json';
  $('#form-fields').hidden = m !== 'form';
  $('#mode-form').setAttribute('aria-pressed', String(m === 'form'));
  $('#mode-json').setAttribute('aria-pressed', String(m === 'json'));
  markWarnings();
}

function onRawInput() {
  // Kept in sync: the form follows the JSON whenever it parses.
  try { const v = JSON.parse($('#raw-json').value); state.form.set(v); $('#warnings').textContent = ''; markWarnings(); } catch (e) { $('#warnings').textContent = 'The JSON does not parse yet.'; }
}

function currentInput() {
  if (state.mode === 'json') return { text: $('#raw-json').value };
  return { text: JSON.stringify(formValue()) };
}

function currentSecrets() {
  const out = [];
  document.querySelectorAll('[data-secret]').forEach(i => { if (i.value !== '') out.push({ id: i.dataset.secret, value: i.value }); });
  const extra = ($('#extra-secrets') || {}).value || '';
  for (const part of extra.split(',')) {
    const [id, ...rest] = part.split('=');
    if (id && id.trim() && rest.length) out.push({ id: id.trim(), value: rest.join('=') });
  }
  return out;
}

// --- calling ---------------------------------------------------------------

// callOnce proxies one call; onEvent gets each notification.
async function callOnce(kind, tool, inputText, onEvent) {
  try {
    return await callStream(kind, tool, inputText, onEvent);
  } catch (e) {
    return { ok: false, error: { code: 'inspector', message: 'The call to otc inspect failed: ' + e.message }, exchanges: [] };
  }
}

async function callStream(kind, tool, inputText, onEvent) {
  const secrets = currentSecrets();
  const body = '{"server":' + JSON.stringify(kind) + ',"tool":' + JSON.stringify(tool) + ',"input":' + inputText +
    ',"secrets":' + JSON.stringify(secrets) + ',"user_id":' + JSON.stringify(($('#user-id') || {}).value || '') +
    ',"call_id":' + JSON.stringify(($('#call-id') || {}).value || '') + '}';
  const res = await api('/api/call', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  if (!res.ok || !(res.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
    return { ok: false, error: { code: 'inspector', message: (await res.text()).trim(), status: res.status }, exchanges: [] };
  }
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '', outcome = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const chunk = buf.slice(0, i); buf = buf.slice(i + 2);
      let ev = 'message', data = '';
      for (const line of chunk.split('\n')) {
        if (line.startsWith('event:')) ev = line.slice(6).trim();
        else if (line.startsWith('data:')) data += line.slice(5).trim();
      }
      let parsed; try { parsed = JSON.parse(data); } catch (e) { continue; }
      if (ev === 'result') outcome = parsed; else onEvent(ev, parsed);
    }
  }
  return outcome || { ok: false, error: { code: 'inspector', message: 'the answer ended before its result' }, exchanges: [] };
}

async function send() {
  const t = state.tool;
  const kind = state.server;
  let inputText = currentInput().text;
  let input;
  try { input = JSON.parse(inputText); } catch (e) { $('#warnings').textContent = 'The input is not JSON: ' + e.message; return; }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) { $('#warnings').textContent = 'The input must be a JSON object.'; return; }
  inputText = JSON.stringify(input);
  const btn = $('#call'); if (btn) btn.disabled = true;
  const out = $('#result');
  out.textContent = '';
  const prog = el('progress', { id: 'progress', max: 1, hidden: true, 'aria-label': 'progress' });
  const progText = el('div', { id: 'progress-text', class: 'small muted' });
  const logs = el('ul', { id: 'logs' });
  out.append(el('h3', {}, 'Answer'), el('p', { class: 'muted' }, 'Calling ', t.call, ' on ', KINDS[kind], '…'), prog, progText, logs);
  const outcome = await callOnce(kind, t.call, inputText, (ev, msg) => {
    if (msg.method === 'notifications/progress') {
      const p = msg.params || {};
      prog.hidden = false;
      if (p.total) { prog.max = p.total; prog.value = p.progress; } else prog.removeAttribute('value');
      progText.textContent = 'progress ' + p.progress + (p.total ? ' / ' + p.total : '') + (p.message ? ' — ' + p.message : '');
      logs.append(el('li', { class: 'progress-event' }, '[progress] ' + p.progress + (p.total ? '/' + p.total : '') + (p.message ? ' ' + p.message : '')));
    } else if (msg.method === 'notifications/message') {
      const p = msg.params || {};
      logs.append(el('li', { class: 'log-event' }, '[' + (p.level || 'log') + '] ' + (typeof p.data === 'string' ? p.data : JSON.stringify(p.data))));
    } else if (ev === 'notification') {
      logs.append(el('li', {}, JSON.stringify(msg)));
    }
  });
  if (btn) btn.disabled = false;
  const h = { n: ++state.seq, server: kind, toolDef: t, tool: t.call, input, userId: ($('#user-id') || {}).value || '', outcome, at: new Date(),
    logLines: [...logs.children].map(li => li.textContent), secretIds: currentSecrets().map(s => s.id) };
  state.history.unshift(h);
  if (state.history.length > MAX_HISTORY) state.history.pop();
  renderHistory();
  showOutcome(h, out);
}

function statusClass(o) { return o.ok ? 'st-ok' : o.tool_error ? 'st-warn' : 'st-bad'; }
function statusWord(o) { return o.ok ? 'ok' : o.tool_error ? 'tool error' : 'refused' + (o.error && o.error.status ? ' ' + o.error.status : ''); }

function showOutcome(h, out) {
  const o = h.outcome;
  state.current = h;
  out.querySelectorAll('h3, p.muted').forEach(e => e.remove());
  out.prepend(el('h3', {}, 'Answer'));
  const meta = el('div', { class: 'meta' },
    el('span', { id: 'result-status', class: statusClass(o) }, statusWord(o)),
    el('span', {}, 'duration ', el('span', { id: 'duration' }, (o.duration_ms || 0).toFixed(1) + ' ms')),
    el('span', {}, 'call id ', el('code', { id: 'result-call-id' }, o.call_id || '—')),
    el('span', {}, KINDS[h.server], ' · ', h.tool));
  out.append(meta);
  if (o.ok) {
    const box = el('div', { class: 'box ok', id: 'result-ok' });
    const blocks = contentBlocks(o);
    // An MCP answer of content blocks alone has no value beside them; one
    // with structured content has blocks that repeat it, kept folded.
    // An otc.Content value is its blocks.
    const onlyBlocks = blocks && (!o.mcp_result || o.mcp_result.structuredContent === undefined);
    if (blocks && onlyBlocks) box.append(blocks);
    if (!onlyBlocks) box.append(el('pre', { id: 'result-value' }, o.value === undefined ? 'Done (no value).' : pretty(o.value)));
    if (blocks && !onlyBlocks) box.append(el('details', {}, el('summary', { class: 'small' }, 'Content blocks (' + blocks.childElementCount + ')'), blocks));
    out.append(box);
    markServerErrors({});
  } else if (o.tool_error) {
    const te = o.tool_error;
    out.append(el('div', { class: 'box tool-error', id: 'tool-error', role: 'alert' },
      el('strong', {}, 'Tool error: '), el('span', { id: 'tool-error-message' }, te.message),
      te.developer_message ? el('div', { class: 'small' }, 'Developer message: ', te.developer_message) : null,
      el('div', { id: 'retry-hint' }, te.can_retry ? 'Can retry' + (te.retry_after_ms ? ' after ' + te.retry_after_ms + ' ms' : '') + '.' : 'Retrying will not help.'),
      te.additional_prompt_content ? el('div', { id: 'prompt-content' }, 'Additional prompt content: ', el('code', {}, te.additional_prompt_content)) : null));
    const blocks = contentBlocks(o);
    if (blocks) out.append(blocks);
  } else {
    const e = o.error || {};
    const pe = e.parameter_errors || {};
    const mr = e.missing_requirements;
    out.append(el('div', { class: 'box refused', id: 'server-error', role: 'alert' },
      el('strong', {}, e.status ? 'Refused (HTTP ' + e.status + ', ' + e.code + '): ' : 'Failed (' + e.code + '): '), el('span', { id: 'server-error-message' }, e.message),
      e.developer_message ? el('div', { class: 'small' }, e.developer_message) : null,
      Object.keys(pe).length ? el('ul', { id: 'parameter-errors' }, Object.entries(pe).map(([k, v]) => el('li', {}, el('code', {}, k), ': ', v))) : null,
      mr ? el('div', { id: 'missing' }, 'Missing: ', [...(mr.secrets || []).map(s => 'secret ' + s.id), ...(mr.user_id ? ['a user id'] : []), ...(mr.authorization || []).map(a => 'authorization ' + a.id)].join(', ')) : null));
    markServerErrors(pe);
  }
  out.append(el('div', { class: 'actions' }, 'Copy as: ',
    el('button', { type: 'button', id: 'copy-curl', onclick: () => copyAs('curl') }, 'curl'),
    el('button', { type: 'button', id: 'copy-otc', onclick: () => copyAs('otc') }, 'otc call'),
    el('button', { type: 'button', id: 'copy-raw', onclick: () => copyAs('raw') }, 'request and response')),
  el('textarea', { id: 'copy-text', rows: 8, readonly: true, hidden: true, 'aria-label': 'Copied text' }));
  out.append(el('details', { id: 'exchanges' }, el('summary', {}, 'Raw request and response (' + (o.exchanges || []).length + ' exchange(s))'), el('pre', {}, rawText(o))));
}

function contentBlocks(o) {
  let blocks = null;
  if (o.mcp_result && Array.isArray(o.mcp_result.content)) blocks = o.mcp_result.content;
  else if (Array.isArray(o.value) && o.value.length && o.value.every(b => b && typeof b.type === 'string' && ['text', 'image', 'audio', 'resource'].includes(b.type))) blocks = o.value;
  if (!blocks) return null;
  return el('div', { id: 'content-blocks' }, blocks.map(b => {
    switch (b.type) {
      case 'text': return el('pre', { class: 'block text' }, b.text);
      case 'image': return el('img', { class: 'block', alt: 'image content (' + b.mimeType + ')', src: 'data:' + b.mimeType + ';base64,' + b.data });
      case 'audio': return el('audio', { class: 'block', controls: true, src: 'data:' + b.mimeType + ';base64,' + b.data });
      case 'resource': { const r = b.resource || {}; return el('div', { class: 'block' }, 'resource ', el('code', {}, r.uri || ''), r.text ? el('pre', {}, r.text) : null); }
      default: return el('pre', { class: 'block' }, pretty(b));
    }
  }));
}

function rawText(o) {
  return (o.exchanges || []).map(x => {
    const head = x.method + ' ' + x.url + '\n' + Object.entries(x.header || {}).map(([k, v]) => k + ': ' + v).join('\n');
    const resp = x.error ? 'error: ' + x.error : 'HTTP ' + x.status + '\n' + Object.entries(x.response_header || {}).map(([k, v]) => k + ': ' + v).join('\n');
    return head + '\n\n' + (x.body || '') + '\n\n' + resp + '\n\n' + (x.response_body || '') + (x.truncated ? '\n(truncated)' : '');
  }).join('\n\n----\n\n');
}

function shq(s) { return "'" + String(s).replace(/'/g, "'\\''") + "'"; }

function curlText(o) {
  const x = (o.exchanges || []).filter(e => e.method === 'POST').pop() || (o.exchanges || []).pop();
  if (!x) return '# no request was sent';
  const parts = ['curl', '-X', x.method, shq(x.url)];
  for (const [k, v] of Object.entries(x.header || {})) {
    if (['User-Agent', 'Accept-Encoding', 'Content-Length'].includes(k)) continue;
    if (v === '(set by otc inspect)') {
      parts.push('-H', k === 'Authorization' ? '"Authorization: Bearer $OTC_BEARER_TOKEN"' : '"' + k + ': $OTC_API_KEY"');
    } else parts.push('-H', shq(k + ': ' + v));
  }
  if (x.body) {
    // A secret's value is read from the environment variable of its id.
    const body = shq(x.body).replace(/"id":"([A-Za-z_][A-Za-z0-9_]*)","value":"\(secret\)"/g, (m, id) => '"id":"' + id + '","value":"\'"$' + id + '"\'"');
    parts.push('--data', body);
  }
  return parts.join(' ');
}

function otcCallText(h) {
  const srv = state.info.servers.find(s => s.kind === h.server);
  const parts = ['otc', 'call'];
  if (h.server !== 'otc') parts.push('--' + h.server);
  parts.push(srv.url, h.tool, shq(JSON.stringify(h.input)));
  for (const id of h.secretIds || []) parts.push('--secret', id);
  if (h.userId) parts.push('--user-id', shq(h.userId));
  if (h.outcome.call_id) parts.push('--call-id', h.outcome.call_id);
  return parts.join(' ');
}

function copyAs(kind) {
  const h = state.current;
  if (!h) return;
  const text = kind === 'curl' ? curlText(h.outcome) : kind === 'otc' ? otcCallText(h) : rawText(h.outcome);
  const ta = $('#copy-text');
  ta.hidden = false;
  ta.value = text;
  ta.dataset.kind = kind;
  ta.select();
  if (navigator.clipboard) navigator.clipboard.writeText(text).then(() => status('Copied as ' + kind + '.'), () => status('Selected; copy with Ctrl+C.'));
}

// --- history ---------------------------------------------------------------

function renderHistory() {
  const ol = $('#history');
  ol.textContent = '';
  for (const h of state.history) {
    ol.append(el('li', { 'data-n': h.n },
      el('span', { class: statusClass(h.outcome) }, statusWord(h.outcome)), ' ', el('code', {}, h.tool), ' ',
      el('span', { class: 'muted small' }, KINDS[h.server] + ' · ' + h.at.toLocaleTimeString() + ' · ' + (h.outcome.duration_ms || 0).toFixed(0) + ' ms'), el('br'),
      el('button', { type: 'button', class: 'history-open', onclick: () => reopen(h) }, 'Open'), ' ',
      el('button', { type: 'button', class: 'history-resend', onclick: () => resend(h) }, 'Re-send')));
  }
}

function showTool(h) {
  state.server = h.server;
  $('#server').value = h.server;
  openTool(h.toolDef, h.input);
  if ($('#user-id')) $('#user-id').value = h.userId;
}

function reopen(h) {
  showTool(h);
  const out = $('#result');
  if (h.logLines.length) out.append(el('ul', { id: 'logs' }, h.logLines.map(l => el('li', {}, l))));
  showOutcome(h, out);
}

function resend(h) {
  showTool(h);
  send();
}

// --- comparing wire formats -----------------------------------------------

async function compare() {
  const t = state.tool;
  let input;
  try { input = JSON.parse(currentInput().text); } catch (e) { $('#warnings').textContent = 'The input is not JSON.'; return; }
  const out = $('#result');
  out.textContent = '';
  out.append(el('h3', {}, 'The same call in each wire format'));
  const grid = el('div', { class: 'compare', id: 'compare' });
  out.append(grid);
  const kinds = state.info.servers.map(s => s.kind).filter(k => findOn(k, t));
  await Promise.all(kinds.map(async k => {
    const col = el('div', { 'data-kind': k }, el('strong', {}, KINDS[k]), el('p', { class: 'muted' }, 'calling…'));
    grid.append(col);
    const tool = findOn(k, t);
    const o = await callOnce(k, tool.call, JSON.stringify(input), () => {});
    col.querySelector('p').remove();
    const x = (o.exchanges || []).filter(e => e.method === 'POST').pop() || {};
    col.append(el('div', { class: 'meta' }, el('span', { class: statusClass(o) }, statusWord(o)), el('span', {}, (o.duration_ms || 0).toFixed(1) + ' ms')),
      el('div', { class: 'small' }, 'Request'), el('pre', {}, (x.method || '') + ' ' + (x.url || '') + '\n\n' + prettyMaybe(x.body)),
      el('div', { class: 'small' }, 'Response ', x.status ? 'HTTP ' + x.status : ''), el('pre', {}, prettyMaybe(x.response_body)));
  }));
}

function prettyMaybe(s) {
  if (!s) return '';
  try { return pretty(JSON.parse(s)); } catch (e) { return s; }
}

// --- resources, templates and prompts (MCP) ---------------------------------

async function loadReadables(kind) {
  const res = await api('/api/readables?server=' + encodeURIComponent(kind));
  if (res.ok) state.readables[kind] = await res.json();
}

function renderReadables(box, q) {
  const r = state.readables[state.server];
  if (!r) return;
  const match = x => !q || [x.uri, x.uriTemplate, x.name, x.title, x.description].join(' ').toLowerCase().includes(q);
  const resources = (r.resources || []).filter(match);
  const prompts = (r.prompts || []).filter(match);
  if (resources.length) box.append(el('div', { class: 'toolkit' }, 'Resources'));
  for (const x of resources) {
    const label = x.uri || x.uriTemplate;
    box.append(el('button', { type: 'button', class: 'tool-item', 'data-resource': label, title: x.description || '',
      'aria-current': state.readable === x ? 'true' : 'false', onclick: () => openResource(x) }, label,
      x.uriTemplate ? el('span', { class: 'ver' }, 'template') : null));
  }
  if (prompts.length) box.append(el('div', { class: 'toolkit' }, 'Prompts'));
  for (const p of prompts) {
    box.append(el('button', { type: 'button', class: 'tool-item', 'data-prompt': p.name, title: p.description || '',
      'aria-current': state.readable === p ? 'true' : 'false', onclick: () => openPrompt(p) }, p.name));
  }
}

// The variables of an RFC 6570 template, with the operator of each.
function templateVars(t) {
  const out = [];
  for (const m of t.matchAll(/\{([+#./;?&]?)([^}]*)\}/g)) {
    for (const v of m[2].split(',')) {
      const name = v.replace(/\*$/, '').replace(/:\d+$/, '');
      if (name) out.push({ op: m[1], name, explode: v.endsWith('*') });
    }
  }
  return out;
}

// expandTemplate fills a template in, as RFC 6570 does for the operators
// a resource template uses; an empty value leaves its variable out.
function expandTemplate(t, values) {
  return t.replace(/\{([+#./;?&]?)([^}]*)\}/g, (_, op, list) => {
    const vars = list.split(',').map(v => ({ name: v.replace(/\*$/, '').replace(/:\d+$/, ''), explode: v.endsWith('*') }))
      .filter(v => values[v.name] !== undefined && values[v.name] !== '');
    const enc = (v, keepSlash) => keepSlash ? encodeURI(v).replace(/[?#]/g, encodeURIComponent) : encodeURIComponent(v);
    if (!vars.length) return '';
    switch (op) {
      case '?': case '&': return (op === '?' ? '?' : '&') + vars.map(v => v.name + '=' + enc(values[v.name])).join('&');
      case '/': return vars.map(v => '/' + enc(values[v.name], v.explode)).join('');
      case '.': return vars.map(v => '.' + enc(values[v.name])).join('');
      case ';': return vars.map(v => ';' + v.name + '=' + enc(values[v.name])).join('');
      case '#': return '#' + vars.map(v => enc(values[v.name], true)).join(',');
      case '+': return vars.map(v => enc(values[v.name], true)).join(',');
      default: return vars.map(v => enc(values[v.name], v.explode)).join(',');
    }
  });
}

async function postJSON(path, body) {
  const res = await api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  let out;
  try { out = await res.json(); } catch (e) { out = { error: { message: 'status ' + res.status } }; }
  return { ok: res.ok, body: out };
}

// argumentField is a text field whose values the server completes as
// one types (completion/complete), in a datalist.
function argumentField(id, name, ref, chosen, required, description) {
  const list = el('datalist', { id: id + '-values' });
  let seq = 0;
  const input = el('input', { type: 'text', id, 'data-arg': name, list: id + '-values', autocomplete: 'off',
    oninput: async () => {
      const mine = ++seq;
      const { ok, body } = await postJSON('/api/complete', { server: state.server, ref, argument: name, value: input.value, chosen: chosen() });
      if (!ok || mine !== seq) return;
      list.textContent = '';
      for (const v of body.values || []) list.append(el('option', { value: v }));
    } });
  return el('div', { class: 'field' }, el('label', { for: id, class: 'fname' }, name, required ? el('span', { class: 'req' }, ' *') : null), ' ', input, list,
    description ? el('div', { class: 'small muted' }, description) : null);
}

function fieldValues(root) {
  const out = {};
  for (const i of root.querySelectorAll('input[data-arg]')) if (i.value !== '') out[i.dataset.arg] = i.value;
  return out;
}

function openResource(x) {
  state.tool = null;
  state.readable = x;
  const main = $('#tool');
  main.textContent = '';
  const result = el('section', { id: 'result', 'aria-live': 'polite' });
  const uri = el('input', { type: 'text', id: 'resource-uri', value: x.uri || '', 'aria-label': 'URI to read', size: 60 });
  const form = el('form', { id: 'form', novalidate: true, onsubmit: async ev => {
    ev.preventDefault();
    result.textContent = '';
    status('Reading…');
    const { ok, body } = await postJSON('/api/read', { server: state.server, uri: uri.value });
    status('');
    result.append(ok ? readContents(body.contents || []) : failureBox(body));
  } });
  if (x.uriTemplate) {
    const fields = el('div', { id: 'form-fields' });
    const update = () => { uri.value = expandTemplate(x.uriTemplate, fieldValues(fields)); };
    for (const v of templateVars(x.uriTemplate)) {
      fields.append(argumentField('var-' + v.name, v.name, { type: 'ref/resource', uri: x.uriTemplate }, () => fieldValues(fields), false, ''));
    }
    fields.addEventListener('input', update);
    form.append(el('h3', {}, 'Variables'), fields);
  }
  form.append(el('div', { class: 'field' }, el('label', { for: 'resource-uri', class: 'fname' }, 'URI'), ' ', uri),
    el('div', { class: 'actions' }, el('button', { type: 'submit', class: 'primary', id: 'read' }, 'Read')));
  main.append(el('h2', { id: 'tool-title' }, x.title || x.name), el('div', { class: 'muted small' },
    x.uriTemplate ? ['template ', el('code', {}, x.uriTemplate)] : ['resource ', el('code', {}, x.uri)], x.mimeType ? ' · ' + x.mimeType : null, ' · on ', KINDS[state.server]),
    el('p', { id: 'tool-description' }, x.description || ''), form, result);
  renderCatalog();
  main.focus();
}

function readContents(contents) {
  return el('div', { id: 'contents' }, contents.map(c => c.blob !== undefined
    ? (String(c.mimeType || '').startsWith('image/') ? el('img', { class: 'block', alt: c.uri, src: 'data:' + c.mimeType + ';base64,' + c.blob })
      : el('p', { class: 'block muted' }, c.uri + ': ' + Math.floor(c.blob.length * 3 / 4) + ' bytes of ' + (c.mimeType || 'binary data')))
    : el('div', { class: 'block' }, el('div', { class: 'small muted' }, c.uri, c.mimeType ? ' · ' + c.mimeType : ''), el('pre', { class: 'text' }, c.text || ''))));
}

function failureBox(body) {
  const e = body.error || {};
  const params = e.parameter_errors ? Object.entries(e.parameter_errors).map(([k, v]) => el('div', {}, el('code', {}, k), ': ', v)) : null;
  return el('div', { class: 'box refused', role: 'alert' }, e.message || 'refused', e.status ? ' (HTTP ' + e.status + ')' : '', params);
}

function openPrompt(p) {
  state.tool = null;
  state.readable = p;
  const main = $('#tool');
  main.textContent = '';
  const result = el('section', { id: 'result', 'aria-live': 'polite' });
  const fields = el('div', { id: 'form-fields' });
  for (const a of p.arguments || []) fields.append(argumentField('arg-' + a.name, a.name, { type: 'ref/prompt', name: p.name }, () => fieldValues(fields), a.required, a.description));
  const form = el('form', { id: 'form', novalidate: true, onsubmit: async ev => {
    ev.preventDefault();
    result.textContent = '';
    status('Rendering…');
    const { ok, body } = await postJSON('/api/prompt', { server: state.server, name: p.name, arguments: fieldValues(fields) });
    status('');
    result.append(ok ? el('div', { id: 'messages' }, (body.result.messages || []).map(m => el('div', { class: 'block message' },
      el('strong', {}, m.role), ' ', contentBlocks({ value: [m.content] }) || el('pre', {}, pretty(m.content))))) : failureBox(body));
  } });
  form.append(el('h3', {}, 'Arguments'), fields, el('div', { class: 'actions' }, el('button', { type: 'submit', class: 'primary', id: 'get-prompt' }, 'Get')));
  main.append(el('h2', { id: 'tool-title' }, p.title || p.name), el('div', { class: 'muted small' }, 'prompt ', el('code', {}, p.name), ' · on ', KINDS[state.server]),
    el('p', { id: 'tool-description' }, p.description || ''), form, result);
  renderCatalog();
  main.focus();
}

// --- start -----------------------------------------------------------------

$('#search').addEventListener('input', onSearchInput);
let slashFocused = false;
document.addEventListener('keydown', ev => {
  if (ev.key === '/' && !['INPUT', 'TEXTAREA', 'SELECT'].includes(document.activeElement.tagName)) { ev.preventDefault(); slashFocused = true; $('#search').focus(); }
  if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey) && state.tool) { ev.preventDefault(); send(); }
});
// A keypress that follows its keydown anyway (synthetic key events do)
// does not type the "/" that moved the focus.
document.addEventListener('keypress', ev => { if (slashFocused && ev.key === '/') ev.preventDefault(); slashFocused = false; });
loadInfo().catch(e => status('Could not load: ' + e.message));
