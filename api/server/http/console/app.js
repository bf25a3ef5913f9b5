// The Reckon console: one page over the JSON API of docs/HTTP_API.md, served by `reckon server
// --http` with the CSP "script-src 'self'; style-src 'self'".
//
// Rules this file keeps:
// - Every value that comes from the server or a person is put into the page as text
//   (textContent, text nodes, attribute values through setAttribute). No innerHTML anywhere.
// - The session's CSRF token lives in this script's memory only; every POST and DELETE carries
//   it in X-CSRF-Token. The session cookie is HttpOnly and never touched here. A reload asks
//   GET /api/v1/session for the token again. Any 401 goes back to the login view.
// - Views are chosen by the URL's hash (#/runs, #/runs/ID, #/inbox, #/people, #/contracts,
//   #/login). Each view gets a ViewScope; leaving the view stops its timers and aborts its
//   requests, so nothing of an old view keeps running.
// - Buttons for what the principal's permissions (GET /api/v1/whoami) lack are not drawn.
// - Elements a test looks for have an id or a data-test attribute.
'use strict';

(function () {
  const API = '/api/v1';
  const REFRESH_MS = 2000;       // runs list, inbox and needs-a-person: re-polled this often
  const COUNTS_MS = 5000;        // the nav's counts of what waits for a person
  const WATCH_WAIT_MS = 20000;   // one long poll of /watch
  const STATES_WAITING = { awaiting_approval: 'inbox', needs_human: 'people' };

  // --- state -------------------------------------------------------------------------------

  const session = { csrf: null, me: null };  // memory only; see the top of this file
  let scope = null;                          // the current view's ViewScope
  let wantedHash = null;                     // where to go after logging in
  let countsTimer = null;

  // --- DOM helpers: text only ----------------------------------------------------------------

  const PROPS = new Set(['value', 'checked', 'disabled', 'hidden', 'selected', 'open',
                         'type', 'name', 'placeholder', 'rows', 'htmlFor', 'required']);

  // h('a', {class: 'x', href: '#/runs', test: 'run-link'}, 'text', node, [more]):
  // an element with attributes set as attributes (or as properties for PROPS), `test` as
  // data-test, `data` as data-* attributes, `on*` as listeners, and children appended as
  // nodes or text nodes.
  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    if (props) {
      for (const [key, value] of Object.entries(props)) {
        if (value === undefined || value === null || value === false) continue;
        if (key === 'class') el.className = value;
        else if (key === 'test') el.setAttribute('data-test', value);
        else if (key === 'data') {
          for (const [k, v] of Object.entries(value)) el.setAttribute('data-' + k, String(v));
        } else if (key.startsWith('on') && typeof value === 'function') {
          el.addEventListener(key.slice(2), value);
        } else if (PROPS.has(key)) el[key] = value;
        else el.setAttribute(key, value === true ? '' : String(value));
      }
    }
    put(el, children);
    return el;
  }

  // Appends `children` (a node, a string, or nested arrays of them) to `el`, strings as text.
  function put(el, children) {
    const list = Array.isArray(children) ? children.flat(Infinity) : [children];
    for (const child of list) {
      if (child === undefined || child === null || child === false) continue;
      el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  function clear(el) {
    while (el.firstChild) el.removeChild(el.firstChild);
    return el;
  }

  function replace(el, ...children) {
    return put(clear(el), children);
  }

  function code(text, test) {
    return h('code', { test }, text);
  }

  function $(id) {
    return document.getElementById(id);
  }

  // --- formatting ----------------------------------------------------------------------------

  function num(value) {
    if (value === undefined || value === null || value === '') return 0;
    const n = Number(value);  // 64-bit integers may arrive as strings
    return Number.isFinite(n) ? n : 0;
  }

  function pad(n, width) {
    return String(n).padStart(width || 2, '0');
  }

  // Microseconds since the epoch -> "2025-01-02 03:04:05 UTC"; "—" for 0.
  function timeText(us) {
    const n = num(us);
    if (n <= 0) return '—';
    const d = new Date(n / 1000);
    return d.getUTCFullYear() + '-' + pad(d.getUTCMonth() + 1) + '-' + pad(d.getUTCDate()) +
           ' ' + pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes()) + ':' +
           pad(d.getUTCSeconds()) + ' UTC';
  }

  // "12:03:04.123" (UTC), for timeline lines.
  function clockText(us) {
    const n = num(us);
    if (n <= 0) return '';
    const d = new Date(n / 1000);
    return pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes()) + ':' + pad(d.getUTCSeconds()) +
           '.' + pad(d.getUTCMilliseconds(), 3);
  }

  function spanText(seconds) {
    const s = Math.round(Math.abs(seconds));
    if (s < 60) return s + ' s';
    if (s < 3600) return Math.floor(s / 60) + ' min';
    if (s < 86400) {
      const m = Math.floor((s % 3600) / 60);
      return Math.floor(s / 3600) + ' h' + (m ? ' ' + m + ' min' : '');
    }
    return Math.floor(s / 86400) + ' d ' + Math.floor((s % 86400) / 3600) + ' h';
  }

  // "in 23 h 59 min" / "4 min ago".
  function relativeText(us) {
    const n = num(us);
    if (n <= 0) return '';
    const seconds = (n / 1000 - Date.now()) / 1000;
    return seconds >= 0 ? 'in ' + spanText(seconds) : spanText(seconds) + ' ago';
  }

  // A JSON value for reading; a string that holds JSON text is shown as that JSON.
  function prettyJson(value) {
    if (value === undefined) return '';
    if (typeof value === 'string') {
      try {
        return JSON.stringify(JSON.parse(value), null, 2);
      } catch (e) {
        return value;
      }
    }
    return JSON.stringify(value, null, 2);
  }

  function compactJson(value) {
    if (typeof value === 'string') {
      try {
        return JSON.stringify(JSON.parse(value));
      } catch (e) {
        return value;
      }
    }
    return JSON.stringify(value);
  }

  function shortId(id) {
    const s = String(id || '');
    return s.length > 18 ? s.slice(0, 16) + '…' : s;
  }

  const STATE_LABELS = {
    awaiting_approval: 'awaiting approval', needs_human: 'needs a person',
    outcome_unknown: 'outcome unknown', retry_scheduled: 'retry scheduled',
    in_flight: 'in flight',
  };

  function badge(state, test) {
    const s = String(state || 'unknown');
    return h('span', { class: 'badge state-' + s.replace(/[^a-z_]/g, ''), test, data: { state: s } },
             STATE_LABELS[s] || s.replace(/_/g, ' '));
  }

  function can(permission) {
    return !!(session.me && Array.isArray(session.me.permissions) &&
              session.me.permissions.includes(permission));
  }

  // --- notices -------------------------------------------------------------------------------

  // A message at the top of the page until it is closed or the view changes (`sticky`: until
  // closed). kind: info | success | error.
  function notify(kind, ...parts) {
    const close = h('button', { type: 'button', class: 'notice-close', 'aria-label': 'Close' }, '×');
    const note = h('div', { class: 'notice ' + kind, role: kind === 'error' ? 'alert' : 'status',
                            test: 'notice-' + kind },
                   h('div', { class: 'notice-text' }, parts), close);
    close.addEventListener('click', () => note.remove());
    $('notices').appendChild(note);
    return note;
  }

  function clearNotices() {
    clear($('notices'));
  }

  // --- the API -------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  function isAbort(error) {
    return error && error.name === 'AbortError';
  }

  // One request to /api/v1; resolves to the parsed body, rejects with ApiError (or an
  // AbortError when `options.signal` aborts). A 401 ends the session and shows the login view
  // unless options.quiet401.
  async function api(method, path, body, options) {
    const opts = options || {};
    const headers = { Accept: 'application/json' };
    const init = { method, headers, credentials: 'same-origin', cache: 'no-store',
                   redirect: 'error' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    if (method !== 'GET' && session.csrf) headers['X-CSRF-Token'] = session.csrf;
    if (opts.signal) init.signal = opts.signal;
    let response;
    try {
      response = await fetch(API + path, init);
    } catch (error) {
      if (isAbort(error)) throw error;
      throw new ApiError(0, 'unavailable',
                         'The server did not answer (' + error.message + '). Is it running?');
    }
    const text = await response.text();
    let data = null;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch (e) {
        data = null;
      }
    }
    if (!response.ok) {
      const err = (data && data.error) || {};
      const failure = new ApiError(response.status, err.code || 'http_' + response.status,
                                   err.message || response.statusText || 'the request failed');
      if (response.status === 401 && !opts.quiet401) sessionEnded();
      throw failure;
    }
    return data || {};
  }

  function q(params) {
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
      if (v !== undefined && v !== null && v !== '' && v !== false) search.set(k, String(v));
    }
    const s = search.toString();
    return s ? '?' + s : '';
  }

  function runPath(workflowId) {
    return '/runs/' + encodeURIComponent(workflowId);
  }

  function runHash(workflowId) {
    return '#/runs/' + encodeURIComponent(workflowId);
  }

  // --- session -------------------------------------------------------------------------------

  function sessionEnded() {
    const wasIn = session.csrf !== null;
    session.csrf = null;
    session.me = null;
    stopCounts();
    if (location.hash !== '#/login') {
      wantedHash = location.hash;
      location.hash = '#/login';
      if (wasIn) notify('info', 'Your session ended. Log in again to continue.');
    }
  }

  async function loadMe() {
    session.me = await api('GET', '/whoami');
  }

  async function logIn(token) {
    const started = await api('POST', '/session', { token }, { quiet401: true });
    session.csrf = started.csrf_token;
    await loadMe();
    startCounts();
  }

  async function logOut() {
    if (scope) scope.stop();  // nothing of the view may ask the server after the session ends
    stopCounts();
    try {
      await api('DELETE', '/session', undefined, { quiet401: true });
    } catch (e) {
      // The session may be gone already; either way the page forgets it.
    }
    session.csrf = null;
    session.me = null;
    stopCounts();
    wantedHash = null;
    location.hash = '#/login';
  }

  // The nav's counts of operations waiting for a person.
  async function refreshCounts() {
    if (!session.csrf) return;
    try {
      const inbox = await api('GET', '/inbox');
      setCounts(inbox.items || []);
    } catch (e) {
      // Counts are a convenience; the views report errors.
    }
  }

  function setCounts(items) {
    const approvals = items.filter((i) => i.operation && i.operation.state === 'awaiting_approval');
    const people = items.filter((i) => i.operation && i.operation.state === 'needs_human');
    for (const [id, n] of [['count-inbox', approvals.length], ['count-people', people.length]]) {
      const el = $(id);
      el.textContent = String(n);
      el.hidden = n === 0;
    }
  }

  function startCounts() {
    stopCounts();
    refreshCounts();
    countsTimer = setInterval(refreshCounts, COUNTS_MS);
  }

  function stopCounts() {
    if (countsTimer !== null) clearInterval(countsTimer);
    countsTimer = null;
  }

  // --- views and routing ---------------------------------------------------------------------

  // What one view owns while it is shown: its timers and in-flight requests.
  class ViewScope {
    constructor() {
      this.alive = true;
      this.timers = new Set();
      this.controllers = new Set();
    }

    stop() {
      this.alive = false;
      for (const t of this.timers) clearTimeout(t);
      for (const c of this.controllers) c.abort();
      this.timers.clear();
      this.controllers.clear();
    }

    later(ms, fn) {
      const t = setTimeout(() => {
        this.timers.delete(t);
        if (this.alive) fn();
      }, ms);
      this.timers.add(t);
    }

    // An AbortSignal that aborts when the view ends.
    signal() {
      const c = new AbortController();
      this.controllers.add(c);
      return c.signal;
    }

    // Runs `fn` now and again `ms` after each run ends, while the view lives. An error other
    // than an abort goes to `onError` (default: shown in `errorBox`).
    poll(ms, fn, onError) {
      const tick = async () => {
        if (!this.alive) return;
        try {
          await fn();
        } catch (error) {
          if (!isAbort(error) && this.alive && onError) onError(error);
        }
        this.later(ms, tick);
      };
      tick();
    }
  }

  function parseHash() {
    const raw = location.hash.replace(/^#/, '') || '/runs';
    const at = raw.indexOf('?');
    const path = at < 0 ? raw : raw.slice(0, at);
    const params = new URLSearchParams(at < 0 ? '' : raw.slice(at + 1));
    const parts = path.split('/').filter((p) => p.length > 0).map((p) => {
      try {
        return decodeURIComponent(p);
      } catch (e) {
        return p;
      }
    });
    return { parts, params };
  }

  function route() {
    if (scope) scope.stop();
    scope = new ViewScope();
    clearNotices();
    const { parts, params } = parseHash();
    const name = parts[0] || 'runs';
    const main = $('main');
    if (name !== 'login' && !session.csrf) {
      wantedHash = location.hash;
      location.hash = '#/login';
      return;
    }
    drawChrome(name);
    if (name !== 'login') refreshCounts();
    clear(main);
    main.setAttribute('data-view', name);
    if (name === 'login') return loginView(main);
    if (name === 'runs' && parts.length > 1) return runView(main, scope, parts.slice(1).join('/'));
    if (name === 'runs') return runsView(main, scope, params);
    if (name === 'inbox') return waitingView(main, scope, 'awaiting_approval');
    if (name === 'people') return waitingView(main, scope, 'needs_human');
    if (name === 'contracts') return contractsView(main, scope);
    put(main, [h('h1', null, 'Not found'),
               h('p', { class: 'muted' }, 'There is no page here. ',
                 h('a', { href: '#/runs' }, 'Go to the runs.'))]);
  }

  function drawChrome(name) {
    const bar = $('topbar');
    bar.hidden = name === 'login' || !session.me;
    document.body.classList.toggle('is-login', name === 'login');
    for (const link of document.querySelectorAll('[data-nav]')) {
      link.classList.toggle('active', link.getAttribute('data-nav') === name);
    }
    if (session.me) {
      $('who-name').textContent = session.me.name || '';
      $('who-roles').textContent = (session.me.roles || []).join(', ');
    }
  }

  // An error inside a view: the server's message, as text.
  function errorBox(error) {
    const text = error instanceof ApiError ? error.message : String(error && error.message || error);
    return h('div', { class: 'callout error', role: 'alert', test: 'error' },
             h('strong', null, error && error.code ? error.code.replace(/_/g, ' ') + ': ' : 'Error: '),
             text);
  }

  function section(title, ...children) {
    return h('section', { class: 'panel' }, h('h2', { class: 'panel-title' }, title), children);
  }

  // --- login ---------------------------------------------------------------------------------

  function loginView(main) {
    const token = h('input', { type: 'password', id: 'login-token', name: 'token',
                               class: 'input wide', autocomplete: 'off', spellcheck: 'false',
                               placeholder: 'rk1_…', required: true });
    const error = h('p', { class: 'form-error', id: 'login-error', role: 'alert' });
    const submit = h('button', { type: 'submit', class: 'button primary', id: 'login-submit' },
                     'Log in');
    const form = h('form', { class: 'login-form', id: 'login-form', autocomplete: 'off' },
                   h('label', { htmlFor: 'login-token', class: 'label' }, 'API token'),
                   token, error, submit);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      error.textContent = '';
      const value = token.value.trim();
      if (!value) {
        error.textContent = 'Paste a token first.';
        return;
      }
      submit.disabled = true;
      try {
        await logIn(value);
        token.value = '';
        const next = wantedHash && wantedHash !== '#/login' ? wantedHash : '#/runs';
        wantedHash = null;
        location.hash = next;
      } catch (failure) {
        error.textContent = failure.status === 401
          ? 'That token was not accepted: ' + failure.message
          : failure.message;
        submit.disabled = false;
        token.focus();
      }
    });
    put(main, h('div', { class: 'login' },
      h('div', { class: 'login-card' },
        h('div', { class: 'login-brand' }, h('span', { class: 'brand-mark large' }, 'R'),
          h('div', null, h('h1', null, 'Reckon console'),
            h('p', { class: 'muted' }, 'Runs, approvals and the operations that need a person.'))),
        form,
        h('p', { class: 'fine' },
          'Paste a token made with ', code('reckon auth token create'),
          '. The server keeps it for this session; the page never stores it.'))));
    token.focus();
  }

  // --- runs ----------------------------------------------------------------------------------

  const RUN_STATUSES = ['running', 'completed', 'failed', 'cancelled', 'continued_as_new'];

  function runsView(main, view, params) {
    const filters = {
      status: RUN_STATUSES.includes(params.get('status')) ? params.get('status') : '',
      type: params.get('type') || '',
      tool: params.get('tool') || '',
      needs_human: params.get('needs_human') === '1',
      id_prefix: params.get('id_prefix') || '',
      limit: Math.min(500, Math.max(1, parseInt(params.get('limit'), 10) || 50)),
    };
    let cursors = [null];     // the `after` of each page seen; the last is the current page's
    let nextCursor = null;
    let lastBody = null;
    let generation = 0;       // a filter change makes answers to older requests stale

    const status = h('select', { id: 'runs-filter-status', class: 'input', test: 'filter-status' },
      h('option', { value: '' }, 'Any status'),
      RUN_STATUSES.map((s) => h('option', { value: s, selected: s === filters.status }, s)));
    const type = h('input', { id: 'runs-filter-type', class: 'input', placeholder: 'Workflow type',
                              value: filters.type, test: 'filter-type', spellcheck: 'false' });
    const tool = h('input', { id: 'runs-filter-tool', class: 'input', placeholder: 'Tool',
                              value: filters.tool, test: 'filter-tool', spellcheck: 'false' });
    const person = h('input', { type: 'checkbox', id: 'runs-filter-needs-human',
                                checked: filters.needs_human, test: 'filter-needs-human' });
    const search = h('input', { id: 'runs-search', class: 'input search', type: 'search',
                                placeholder: 'Workflow id starts with…', value: filters.id_prefix,
                                test: 'filter-id-prefix', spellcheck: 'false' });
    const prev = h('button', { type: 'button', class: 'button small', id: 'runs-prev',
                               disabled: true }, '← First page');
    const next = h('button', { type: 'button', class: 'button small', id: 'runs-next',
                               disabled: true }, 'Next page →');
    const pageInfo = h('span', { class: 'muted', id: 'runs-page' });
    const live = h('span', { class: 'live', id: 'runs-live', title: 'Refreshed every 2 s' },
                   h('span', { class: 'live-dot' }), h('span', { class: 'live-text' }, 'Live'));
    const body = h('tbody', { id: 'runs-body' });
    const empty = h('p', { class: 'empty', id: 'runs-empty', hidden: true });
    const failure = h('div', { id: 'runs-error' });

    put(main, [
      h('div', { class: 'page-head' }, h('h1', null, 'Runs'), live),
      h('form', { class: 'filters', id: 'runs-filters', onsubmit: (e) => e.preventDefault() },
        search, status, type, tool,
        h('label', { class: 'check', htmlFor: 'runs-filter-needs-human' }, person,
          ' Waiting for a person')),
      failure,
      h('div', { class: 'table-wrap' },
        h('table', { class: 'table', id: 'runs-table' },
          h('thead', null, h('tr', null, ['Workflow', 'Type', 'Status', 'Operations',
            'Waits on', 'Updated'].map((c) => h('th', null, c)))),
          body)),
      empty,
      h('div', { class: 'pager' }, prev, pageInfo, next),
    ]);

    function syncHash() {
      const query = q({ status: filters.status, type: filters.type, tool: filters.tool,
                        needs_human: filters.needs_human ? '1' : '', id_prefix: filters.id_prefix,
                        limit: filters.limit === 50 ? '' : filters.limit });
      history.replaceState(null, '', '#/runs' + query);
    }

    function changed() {
      generation += 1;
      cursors = [null];
      lastBody = null;
      syncHash();
      refresh().catch(show);
    }

    let typing = null;
    function typed() {
      if (typing !== null) clearTimeout(typing);
      typing = setTimeout(() => {
        typing = null;
        filters.type = type.value.trim();
        filters.tool = tool.value.trim();
        filters.id_prefix = search.value.trim();
        changed();
      }, 250);
    }
    for (const input of [type, tool, search]) input.addEventListener('input', typed);
    status.addEventListener('change', () => {
      filters.status = status.value;
      changed();
    });
    person.addEventListener('change', () => {
      filters.needs_human = person.checked;
      changed();
    });
    next.addEventListener('click', () => {
      if (!nextCursor) return;
      cursors.push(nextCursor);
      generation += 1;
      lastBody = null;
      refresh().catch(show);
    });
    prev.addEventListener('click', () => {
      cursors = [null];
      generation += 1;
      lastBody = null;
      refresh().catch(show);
    });

    function show(error) {
      if (isAbort(error)) return;
      replace(failure, errorBox(error));
      live.classList.add('stale');
    }

    async function refresh() {
      const mine = generation;
      const after = cursors[cursors.length - 1];
      const page = await api('GET', '/runs' + q({
        status: filters.status, type: filters.type, tool: filters.tool,
        needs_human: filters.needs_human ? '1' : '', id_prefix: filters.id_prefix,
        after, limit: filters.limit }), undefined, { signal: view.signal() });
      if (!view.alive || mine !== generation) return;
      clear(failure);
      live.classList.remove('stale');
      live.lastChild.textContent = 'Live · ' + clockText(Date.now() * 1000).slice(0, 8) + ' UTC';
      nextCursor = page.next_cursor || null;
      next.disabled = !nextCursor;
      prev.disabled = cursors.length <= 1;
      const runs = page.runs || [];
      pageInfo.textContent = 'Page ' + cursors.length + (runs.length ? ' · ' + runs.length + ' run' +
                             (runs.length === 1 ? '' : 's') : '');
      const text = JSON.stringify(runs);
      if (text === lastBody) return;  // nothing changed: leave the rows alone
      lastBody = text;
      replace(body, runs.map(runRow));
      empty.hidden = runs.length > 0;
      empty.textContent = cursors.length > 1 ? 'No more runs.' : 'No run matches these filters.';
    }

    view.poll(REFRESH_MS, refresh, show);
  }

  function waitsOnText(s) {
    const kind = s.waits_on || '';
    const detail = s.wait_detail || '';
    if (kind === 'signal') return detail ? "signal '" + detail + "'" : 'a signal';
    if (kind === 'timer') return 'timer, ' + relativeText(s.wait_until_us);
    if (kind === 'approval') return 'approval of ' + shortId(detail);
    if (kind === 'person') return 'a person to resolve ' + shortId(detail);
    if (kind === 'child') return 'child workflow ' + detail;
    if (kind === 'worker') return 'a worker of build ' + detail;
    if (kind === 'nothing' || kind === '') return '—';
    return kind;
  }

  function runRow(s) {
    const waiting = num(s.waiting_for_person);
    return h('tr', { test: 'run-row', data: { 'workflow-id': s.workflow_id, status: s.status } },
      h('td', null, h('a', { href: runHash(s.workflow_id), class: 'mono link', test: 'run-link' },
                      s.workflow_id)),
      h('td', null, s.workflow_type),
      h('td', null, badge(s.status, 'run-status'),
        s.stuck_reason ? h('span', { class: 'badge state-stuck', title: s.stuck_reason }, 'stuck')
                       : null),
      h('td', { class: 'num' }, num(s.committed_operations) + ' / ' + num(s.operations) +
        ' committed'),
      h('td', null, waiting > 0 ? h('span', { class: 'badge state-awaiting_approval' },
                                    waiting + ' waiting') : null, ' ', waitsOnText(s)),
      h('td', { class: 'muted nowrap', title: timeText(s.updated_at_us) },
        relativeText(s.updated_at_us)));
  }

  // --- run detail ----------------------------------------------------------------------------

  function runView(main, view, workflowId) {
    const head = h('div', { class: 'page-head' });
    const facts = h('div', { id: 'run-facts' });
    const actions = h('div', { id: 'run-actions' });
    const ops = h('div', { id: 'run-operations' });
    const io = h('div', { class: 'columns', id: 'run-io' });
    const timeline = h('ol', { class: 'timeline', id: 'timeline', test: 'timeline' });
    const live = h('span', { class: 'live', id: 'run-live' }, h('span', { class: 'live-dot' }),
                   h('span', { class: 'live-text' }, 'Following'));
    const failure = h('div', { id: 'run-error' });
    put(main, [
      h('p', { class: 'crumbs' }, h('a', { href: '#/runs', class: 'link' }, '← Runs')),
      head, failure, facts, actions, io,
      section('Operations', ops),
      h('section', { class: 'panel' },
        h('div', { class: 'panel-head' }, h('h2', { class: 'panel-title' }, 'Timeline'), live),
        timeline),
    ]);

    const steps = new Map();  // operation id -> step id, for readable lines
    let lastSeq = 0;
    let detailText = null;
    let actionsFor = null;    // the status the action forms were drawn for

    async function loadDetail() {
      const detail = await api('GET', runPath(workflowId), undefined, { signal: view.signal() });
      if (!view.alive) return;
      clear(failure);
      for (const op of detail.operations || []) steps.set(op.operation_id, op.step_id);
      const text = JSON.stringify(detail);
      if (text === detailText) return;
      detailText = text;
      drawDetail(detail);
    }

    function drawDetail(detail) {
      const s = detail.summary || {};
      replace(head, h('div', null,
        h('h1', { class: 'mono title-id', id: 'run-id', test: 'run-id' }, s.workflow_id || workflowId),
        h('div', { class: 'subtitle' }, badge(s.status, 'run-status'),
          s.stuck_reason ? h('span', { class: 'badge state-stuck' }, 'stuck') : null,
          h('span', { class: 'muted' }, ' ', s.workflow_type, ' · run ', h('span', { class: 'mono' }, s.run_id)))));
      const rows = [
        ['Started', timeText(s.created_at_us) + (detail.started_by ? ' by ' + detail.started_by : '')],
        ['Updated', timeText(s.updated_at_us) + ' (' + relativeText(s.updated_at_us) + ')'],
        ['Waits on', waitsOnText(s)],
        ['Operations', num(s.committed_operations) + ' of ' + num(s.operations) + ' committed'],
      ];
      if (s.stuck_reason) rows.push(['Stuck', s.stuck_reason]);
      if (detail.cancel_requested) {
        rows.push(['Cancel', 'requested' + (detail.cancel_requested.reason
          ? ' (' + detail.cancel_requested.reason + ')' : '') + '; the workflow code is cleaning up']);
      }
      replace(facts, h('dl', { class: 'facts' }, rows.map(([k, v]) =>
        [h('dt', null, k), h('dd', { test: 'fact-' + k.toLowerCase().replace(/ /g, '-') }, v)])));
      replace(io,
        section('Input', h('pre', { class: 'json', id: 'run-input', test: 'run-input' },
                           prettyJson(detail.input))),
        section('Result', detail.result === null || detail.result === undefined
          ? h('p', { class: 'muted', id: 'run-result', test: 'run-result' }, {
              running: 'Not finished yet.',
              failed: 'No result: the run failed; the timeline says why.',
              cancelled: 'No result: the run was cancelled.',
              continued_as_new: 'No result: the run continued as new; the workflow goes on in the next run.',
            }[s.status] || 'No result.')
          : h('pre', { class: 'json', id: 'run-result', test: 'run-result' },
              prettyJson(detail.result))));
      drawOperations(detail);
      if (actionsFor !== s.status) drawActions(s);  // keeps what a person is typing
      actionsFor = s.status;
    }

    function drawOperations(detail) {
      const list = detail.operations || [];
      if (!list.length) {
        replace(ops, h('p', { class: 'muted' }, 'No operation yet.'));
        return;
      }
      replace(ops, h('div', { class: 'table-wrap' }, h('table', { class: 'table', id: 'operations' },
        h('thead', null, h('tr', null, ['Step', 'Tool', 'Side effect', 'State', 'Attempts',
          'Operation', 'Detail'].map((c) => h('th', null, c)))),
        h('tbody', null, list.map((op) => {
          const waiting = STATES_WAITING[op.state];
          let detailCell = [];
          if (op.provider_ref) detailCell.push('provider ref ', code(op.provider_ref));
          if (op.failure_code && op.state !== 'committed') {
            detailCell = [code(op.failure_code), ' ', op.failure_message || ''];
          }
          if (waiting) {
            detailCell.push(' ', h('a', { href: '#/' + waiting, class: 'link',
              test: 'decide-link' }, waiting === 'inbox' ? 'Decide in Approvals →' : 'Resolve →'));
          }
          return h('tr', { test: 'operation-row', data: { step: op.step_id, state: op.state } },
            h('td', { class: 'mono' }, op.step_id),
            h('td', null, op.tool),
            h('td', null, h('span', { class: 'effect' }, (op.side_effect || '').replace(/_/g, ' '))),
            h('td', null, badge(op.state, 'operation-state')),
            h('td', { class: 'num' }, num(op.attempt)),
            h('td', { class: 'mono small', title: op.operation_id }, shortId(op.operation_id)),
            h('td', { class: 'small' }, detailCell));
        })))));
    }

    function drawActions(s) {
      clear(actions);
      if (s.status !== 'running' || !(can('signal') || can('cancel'))) return;
      const forms = [];
      if (can('signal')) {
        const name = h('input', { class: 'input', id: 'signal-name', placeholder: 'Signal name',
                                  spellcheck: 'false', value: s.waits_on === 'signal' ? s.wait_detail || '' : '' });
        const payload = h('input', { class: 'input wide mono', id: 'signal-payload',
                                     placeholder: 'Payload (JSON), e.g. {"ok": true}', spellcheck: 'false' });
        const out = h('span', { class: 'form-note', id: 'signal-result' });
        const send = h('button', { type: 'submit', class: 'button', id: 'signal-send' }, 'Send signal');
        forms.push(h('form', { class: 'inline-form', id: 'signal-form', onsubmit: async (e) => {
          e.preventDefault();
          let value = null;
          if (payload.value.trim()) {
            try {
              value = JSON.parse(payload.value);
            } catch (error) {
              out.textContent = 'The payload is not JSON: ' + error.message;
              out.className = 'form-note error';
              return;
            }
          }
          send.disabled = true;
          try {
            await api('POST', runPath(workflowId) + '/signal', { name: name.value.trim(), payload: value });
            out.textContent = 'Signal sent.';
            out.className = 'form-note ok';
          } catch (error) {
            out.textContent = error.message;
            out.className = 'form-note error';
          }
          send.disabled = false;
        } }, name, payload, send, out));
      }
      if (can('cancel')) {
        const reason = h('input', { class: 'input wide', id: 'cancel-reason', placeholder: 'Why cancel?' });
        const out = h('span', { class: 'form-note', id: 'cancel-result' });
        const cancel = h('button', { type: 'submit', class: 'button danger', id: 'cancel-run' }, 'Cancel run…');
        let armed = false;
        forms.push(h('form', { class: 'inline-form', id: 'cancel-form', onsubmit: async (e) => {
          e.preventDefault();
          if (!armed) {
            armed = true;
            cancel.textContent = 'Confirm: cancel this run';
            out.textContent = 'Cancelling stops the run; operations already committed stay committed.';
            out.className = 'form-note';
            return;
          }
          cancel.disabled = true;
          try {
            await api('POST', runPath(workflowId) + '/cancel', { reason: reason.value });
            out.textContent = 'Cancel requested.';
            out.className = 'form-note ok';
          } catch (error) {
            out.textContent = error.message;
            out.className = 'form-note error';
            cancel.disabled = false;
          }
        } }, reason, cancel, out));
      }
      put(actions, section('Act on this run', forms));
    }

    function addEvents(events) {
      for (const e of events) {
        const seq = num(e.seq);
        if (seq <= lastSeq) continue;
        lastSeq = seq;
        const type = String(e.type || '');
        const ev = e.event || {};
        if (eventKey(type) === 'operationprepared') {
          steps.set(field(ev, 'operationId'), field(ev, 'stepId'));
        }
        const line = describeEvent(type, ev, (id) => steps.get(id) || shortId(id));
        if (!line) continue;
        timeline.appendChild(h('li', { class: 'event kind-' + line.kind, test: 'event',
                                       data: { type: eventKey(type), seq } },
          h('span', { class: 'event-time', title: timeText(e.recorded_at_us) },
            clockText(e.recorded_at_us)),
          h('span', { class: 'event-kind' }, line.label),
          h('span', { class: 'event-text' }, line.text)));
      }
    }

    async function follow() {
      for (;;) {
        if (!view.alive) return;
        let batch;
        try {
          batch = await api('GET', runPath(workflowId) + '/watch' +
                            q({ after_seq: lastSeq, wait_ms: WATCH_WAIT_MS }), undefined,
                            { signal: view.signal() });
        } catch (error) {
          if (isAbort(error) || !view.alive) return;
          live.classList.add('stale');
          live.lastChild.textContent = 'Reconnecting…';
          await new Promise((resolve) => view.later(REFRESH_MS, resolve));
          continue;
        }
        live.classList.remove('stale');
        live.lastChild.textContent = 'Following';
        const events = batch.events || [];
        if (events.length) {
          addEvents(events);
          try {
            await loadDetail();
          } catch (error) {
            if (isAbort(error)) return;
          }
        }
      }
    }

    (async () => {
      try {
        await loadDetail();
        const history = await api('GET', runPath(workflowId) + '/history', undefined,
                                  { signal: view.signal() });
        if (!view.alive) return;
        addEvents(history.events || []);
        if (!timeline.firstChild) timeline.appendChild(h('li', { class: 'muted' }, 'No event yet.'));
      } catch (error) {
        if (isAbort(error)) return;
        replace(failure, errorBox(error));
        if (error.status === 404) {
          put(head, h('h1', { class: 'mono title-id' }, workflowId));
          live.hidden = true;
          return;
        }
      }
      follow();
    })();
  }

  // --- the timeline: journal events as readable lines ----------------------------------------

  // "ApprovalGranted", "approval_granted", "approvalGranted" -> "approvalgranted".
  function eventKey(type) {
    return String(type).replace(/[_\s-]/g, '').toLowerCase();
  }

  // A field of an event by its camelCase name, or its snake_case spelling.
  function field(ev, name) {
    if (!ev || typeof ev !== 'object') return undefined;
    if (name in ev) return ev[name];
    return ev[name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())];
  }

  function quoted(text) {
    return text ? ['“', text, '”'] : [];
  }

  // {kind, label, text: [nodes]} for one journal event; null for bookkeeping events not shown.
  // `step(operationId)` names an operation by its step.
  function describeEvent(type, ev, step) {
    const f = (name) => field(ev, name);
    const op = () => code(step(f('operationId')));
    const by = (who) => (who ? [' by ', h('strong', null, who)] : []);
    switch (eventKey(type)) {
      case 'workflowstarted':
        return { kind: 'workflow', label: 'started',
                 text: ['Run started as ', code(f('workflowType')), by(f('startedBy'))] };
      case 'workflowcompleted':
        return { kind: 'done', label: 'completed',
                 text: ['Run completed with ', code(compactJson(f('resultJson')))] };
      case 'workflowfailed':
        return { kind: 'bad', label: 'failed',
                 text: ['Run failed: ', code(f('code')), ' ', f('message')] };
      case 'workflowcancelrequested':
        return { kind: 'bad', label: 'cancel',
                 text: ['Cancel requested', by(f('requestedBy')), f('reason') ? ': ' : '', quoted(f('reason'))] };
      case 'workflowcancelled':
        return { kind: 'bad', label: 'cancelled', text: ['Run cancelled'] };
      case 'workflowcontinuedasnew':
        return { kind: 'good', label: 'continued',
                 text: ['Run continued as new in ', code(f('nextRunId')), ' with ',
                        code(compactJson(f('inputJson')))] };
      case 'childworkflowinitiated':
        return f('childRunId')
          ? { kind: 'good', label: 'child',
              text: ['Started child ', code(f('childWorkflowId')), ' (', code(f('workflowType')),
                     ') at ', code(f('stepId')), ', policy ', code(f('parentClosePolicy'))] }
          : { kind: 'quiet', label: 'child',
              text: ['Asked for child ', code(f('childWorkflowId')), ' at ', code(f('stepId'))] };
      case 'childworkflowclosed':
        return f('status') === 'completed'
          ? { kind: 'done', label: 'child',
              text: ['Child ', code(f('childWorkflowId')), ' completed with ',
                     code(compactJson(f('resultJson')))] }
          : { kind: 'bad', label: 'child',
              text: ['Child ', code(f('childWorkflowId')), ' ', f('status'), ': ', code(f('code')),
                     ' ', f('message')] };
      case 'childpolicyapplied':
        return { kind: 'quiet', label: 'child',
                 text: ['Parent closed: child ', code(f('childWorkflowId')), ' ',
                        f('policy') === 'cancel' ? 'asked to cancel' : 'abandoned'] };
      case 'workflowtaskscheduled':
      case 'workflowtaskcompleted':
        return null;
      case 'workflowtaskstarted':
        return { kind: 'quiet', label: 'code',
                 text: ['Workflow code ran', f('worker') ? [' on ', code(f('worker'))] : []] };
      case 'operationprepared': {
        const extra = [];
        if (num(f('maxAttempts')) > 0) extra.push(', at most ' + num(f('maxAttempts')) + ' attempts');
        if (f('requireApproval')) extra.push(', approval required by the plan');
        return { kind: 'op', label: 'prepared',
                 text: [code(f('stepId')), ' prepared: ', code(f('tool')), ' (',
                        String(f('sideEffect') || '').replace(/_/g, ' '), '), intent ',
                        code(shortId(f('intentHash'))), extra] };
      }
      case 'approvalrequested':
        return { kind: 'wait', label: 'approval',
                 text: [op(), ' waits for approval of intent ', code(shortId(f('intentHash'))),
                        num(f('deadlineUs')) ? ', until ' + timeText(f('deadlineUs')) : ', with no deadline'] };
      case 'approvalgranted':
        return { kind: 'good', label: 'approved',
                 text: [op(), ' approved', by(f('approvedBy')), f('note') ? ': ' : '', quoted(f('note')),
                        num(f('expiresAtUs')) ? ' (grant valid until ' + timeText(f('expiresAtUs')) + ')' : ''] };
      case 'approvaldenied':
        return { kind: 'bad', label: 'denied',
                 text: [op(), ' denied', by(f('deniedBy')), f('reason') ? ': ' : '', quoted(f('reason'))] };
      case 'attemptstarted':
        return { kind: 'op', label: 'attempt',
                 text: [op(), ' attempt ', String(num(f('attempt'))), ' started',
                        f('worker') ? [' on ', code(f('worker'))] : [],
                        num(f('deadlineUs')) ? ', deadline ' + clockText(f('deadlineUs')) : ''] };
      case 'operationcommitted':
        return { kind: 'good', label: 'committed',
                 text: [op(), ' committed', f('source') ? ' (' + String(f('source')).replace(/_/g, ' ') + ')' : '',
                        f('providerRef') ? [', provider ref ', code(f('providerRef'))] : [],
                        ', attempt ' + num(f('attempt'))] };
      case 'operationrejected':
        return { kind: 'bad', label: 'rejected',
                 text: [op(), ' rejected on attempt ' + num(f('attempt')) + ': ', code(f('code')), ' ',
                        f('message')] };
      case 'attemptfailedretryable':
        return { kind: 'warn', label: 'retryable',
                 text: [op(), ' attempt ' + num(f('attempt')) + ' failed: ', code(f('code')), ' ',
                        f('message'), num(f('retryAtUs')) ? '; retry at ' + clockText(f('retryAtUs')) : ''] };
      case 'outcomeunknown':
        return { kind: 'warn', label: 'unknown',
                 text: [op(), ' outcome unknown after attempt ' + num(f('attempt')) + ': ',
                        code(f('reason') || 'no reason'),
                        num(f('reconcileAtUs')) ? '; reconcile from ' + clockText(f('reconcileAtUs')) : ''] };
      case 'reconciliationstarted':
        return { kind: 'warn', label: 'reconcile',
                 text: [op(), ' reconciliation round ' + num(f('round')) + ' started'] };
      case 'reconciliationresult': {
        const result = String(f('result') || '');
        const kind = result === 'committed' ? 'good' : 'warn';
        return { kind, label: 'reconcile',
                 text: [op(), ' reconciliation round ' + num(f('round')) + ': ',
                        h('strong', null, result.replace(/_/g, ' ')),
                        f('providerRef') ? [', provider ref ', code(f('providerRef'))] : [],
                        num(f('nextAtUs')) ? '; ask again at ' + clockText(f('nextAtUs')) : ''] };
      }
      case 'needshuman':
        return { kind: 'wait', label: 'person',
                 text: [op(), ' needs a person: ', f('reason')] };
      case 'humanresolved':
        return { kind: f('committed') ? 'good' : 'warn', label: 'resolved',
                 text: [op(), ' resolved', by(f('resolvedBy')), ' as ',
                        h('strong', null, f('committed') ? 'committed' : 'not committed'),
                        f('providerRef') ? [', provider ref ', code(f('providerRef'))] : [],
                        f('note') ? ': ' : '', quoted(f('note'))] };
      case 'timerstarted':
        return { kind: 'quiet', label: 'timer',
                 text: ['Timer ', code(f('timerId')), ' set for ', timeText(f('fireAtUs'))] };
      case 'timerfired':
        return { kind: 'quiet', label: 'timer', text: ['Timer ', code(f('timerId')), ' fired'] };
      case 'signalreceived':
        return { kind: 'signal', label: 'signal',
                 text: ['Signal ', code(f('name')), ' received', by(f('sentBy')),
                        f('payloadJson') ? [' with ', code(compactJson(f('payloadJson')))] : []] };
      case 'markerrecorded':
        return { kind: 'quiet', label: 'marker',
                 text: ['Recorded ', code(f('kind')), ' for ', code(f('stepId'))] };
      case 'retryscheduled':
        return { kind: 'warn', label: 'retry',
                 text: [op(), ' attempt ' + num(f('nextAttempt')) + ' scheduled for ',
                        clockText(f('retryAtUs')), f('reason') ? ' (' + String(f('reason')).replace(/_/g, ' ') + ')' : ''] };
      case 'sealed':
        return { kind: 'quiet', label: 'sealed', text: ['An event sealed with the journal key'] };
      default:
        return { kind: 'quiet', label: 'event', text: [code(type), ' ', compactJson(ev)] };
    }
  }

  // --- approvals and needs-a-person ----------------------------------------------------------

  // The contract card's answers by question number, from its text ("1. What ...?\n   answer").
  function cardAnswers(card) {
    const answers = new Map();
    let current = null;
    for (const line of String(card || '').split('\n')) {
      const m = /^(\d+)\. /.exec(line);
      if (m) {
        current = Number(m[1]);
        answers.set(current, []);
      } else if (current !== null && line.trim()) {
        answers.get(current).push(line.trim().replace(/^- /, '• '));
      }
    }
    const joined = new Map();
    for (const [n, lines] of answers) {
      joined.set(n, lines.join(' ').replace(/ • /g, '\n• '));
    }
    return joined;
  }

  function itemKey(item) {
    const op = item.operation || {};
    return [item.workflow_id, op.operation_id, op.intent_hash, op.state].join('\u0000');
  }

  // The inbox (state awaiting_approval) or the needs-a-person queue (needs_human): cards keyed
  // by operation and intent, refreshed in place so a half-written note survives a refresh.
  function waitingView(main, view, state) {
    const approvals = state === 'awaiting_approval';
    const list = h('div', { class: 'cards', id: approvals ? 'inbox' : 'people' });
    const empty = h('div', { class: 'empty-state', id: approvals ? 'inbox-empty' : 'people-empty', hidden: true },
      h('div', { class: 'empty-mark' }, '✓'),
      h('p', null, approvals ? 'Nothing waits for approval.' : 'No operation needs a person.'));
    const failure = h('div');
    const live = h('span', { class: 'live' }, h('span', { class: 'live-dot' }),
                   h('span', { class: 'live-text' }, 'Live'));
    put(main, [
      h('div', { class: 'page-head' },
        h('div', null, h('h1', null, approvals ? 'Approvals' : 'Needs a person'),
          h('p', { class: 'lead' }, approvals
            ? 'Operations whose contract asks a person before they run. Each decision binds to one operation and one exact intent.'
            : 'Operations whose outcome nobody could establish. Check the provider, then say what you found.')),
        live),
      failure, empty, list,
    ]);
    const cards = new Map();  // itemKey -> {el, busy}

    async function refresh() {
      const inbox = await api('GET', '/inbox', undefined, { signal: view.signal() });
      if (!view.alive) return;
      clear(failure);
      live.classList.remove('stale');
      const items = (inbox.items || []).filter((i) => i.operation && i.operation.state === state);
      setCounts(inbox.items || []);
      const seen = new Set();
      let previous = null;
      for (const item of items) {
        const key = itemKey(item);
        seen.add(key);
        let card = cards.get(key);
        if (!card) {
          card = { el: approvals ? approvalCard(item) : resolveCard(item) };
          cards.set(key, card);
        }
        if (card.el.expiry) card.el.expiry();
        const where = previous ? previous.nextSibling : list.firstChild;
        if (where !== card.el) list.insertBefore(card.el, where);
        previous = card.el;
      }
      for (const [key, card] of cards) {
        if (seen.has(key) || card.el.busy) continue;
        card.el.remove();
        cards.delete(key);
      }
      empty.hidden = cards.size > 0;
    }

    view.poll(REFRESH_MS, refresh, (error) => {
      replace(failure, errorBox(error));
      live.classList.add('stale');
    });
  }

  // The lines every waiting card starts with: tool, run, who started it.
  function cardHead(item, label) {
    const op = item.operation || {};
    return [
      h('div', { class: 'card-head' },
        h('div', null,
          h('div', { class: 'card-title' }, h('span', { class: 'tool', test: 'tool' }, op.tool),
            h('span', { class: 'muted' }, ' · step '), h('span', { class: 'mono' }, op.step_id)),
          h('div', { class: 'card-sub muted' }, 'Run ',
            h('a', { href: runHash(item.workflow_id), class: 'link mono', test: 'run-link' }, item.workflow_id),
            ' (', item.workflow_type, ')', item.started_by ? [', started by ', h('strong', null, item.started_by)] : [],
            num(op.attempt) > 0 ? ' · ' + num(op.attempt) + (num(op.attempt) === 1 ? ' attempt' : ' attempts') : '')),
        badge(op.state, 'state'), label ? h('span', { class: 'effect' }, label) : null),
    ];
  }

  // Why this principal cannot decide the item here, or null.
  function cannotDecide(item, permission) {
    if (!can(permission)) return 'Your role cannot ' + permission + ' operations; this page is read-only for you.';
    const me = session.me || {};
    if (item.started_by && me.name && item.started_by === me.name) {
      return 'You started this run, so separation of duties keeps you from deciding it.';
    }
    const tools = Array.isArray(me.tools) ? me.tools : [];
    if (tools.length && !tools.includes((item.operation || {}).tool)) {
      return 'Your token is limited to the tools ' + tools.join(', ') + '.';
    }
    return null;
  }

  function intentBlock(op) {
    return h('div', { class: 'intent' },
      h('div', { class: 'label' }, 'Intent (secret fields removed)'),
      h('pre', { class: 'json', test: 'intent' }, prettyJson(op.input)));
  }

  function approvalCard(item) {
    const op = item.operation || {};
    const answers = cardAnswers(item.card);
    const hash = h('code', { class: 'hash', test: 'intent-hash' }, op.intent_hash);
    const expiry = h('span', { test: 'expiry' });
    const result = h('div', { class: 'decision-result', test: 'decision-result', 'aria-live': 'polite' });
    const el = h('article', { class: 'card approval', test: 'approval-card',
                              data: { 'workflow-id': item.workflow_id, 'operation-id': op.operation_id } },
      cardHead(item, (item.side_effect || op.side_effect || '').replace(/_/g, ' ')),
      h('div', { class: 'card-body' },
        h('div', { class: 'card-main' },
          answers.get(1) ? h('p', { class: 'summary', test: 'card-summary' }, answers.get(1)) : null,
          intentBlock(op),
          h('dl', { class: 'facts compact' },
            h('dt', null, 'Intent hash'), h('dd', null, hash),
            h('dt', null, 'Operation'), h('dd', null, code(op.operation_id, 'operation-id')),
            h('dt', null, 'Approval expires'), h('dd', null, expiry))),
        h('div', { class: 'card-side' },
          h('div', { class: 'binding', test: 'binding' },
            'Approving authorizes exactly this operation (', code(op.operation_id), ') with exactly this intent (',
            code(op.intent_hash), '); if the intent changes, the approval does not apply.'),
          answers.get(6) ? h('details', { class: 'card-full' }, h('summary', null, 'What invalidates this approval'),
                             h('p', { class: 'fine' }, answers.get(6))) : null,
          decisionForm(item, hash, result, el_ref),
          result)),
      item.card ? h('details', { class: 'card-full' }, h('summary', null, 'Contract card'),
                    h('pre', { class: 'card-text', test: 'card-text' }, item.card)) : null);
    function el_ref() {
      return el;
    }
    el.expiry = () => {
      const deadline = num(op.approval_deadline_us);
      expiry.textContent = deadline ? timeText(deadline) + ' (' + relativeText(deadline) + ')'
                                    : 'no deadline: it waits until someone decides';
    };
    return el;
  }

  // Approve / Deny with a note; posts the intent hash shown in `hashEl` at the moment of the
  // click (what the person saw), and shows the server's refusal when the intent changed.
  function decisionForm(item, hashEl, result, cardEl) {
    const why = cannotDecide(item, 'approve');
    if (why) return h('p', { class: 'callout muted', test: 'read-only' }, why);
    const op = item.operation || {};
    const note = h('textarea', { class: 'input wide', rows: 2, test: 'decision-note',
                                 placeholder: 'Note for the journal (for a denial: the reason)' });
    const approve = h('button', { type: 'button', class: 'button primary', test: 'approve' }, 'Approve');
    const deny = h('button', { type: 'button', class: 'button danger', test: 'deny' }, 'Deny');
    async function decide(verb) {
      approve.disabled = true;
      deny.disabled = true;
      const card = cardEl();
      card.busy = true;
      result.className = 'decision-result';
      result.textContent = verb === 'approve' ? 'Approving…' : 'Denying…';
      try {
        await api('POST', runPath(item.workflow_id) + '/operations/' +
                  encodeURIComponent(op.operation_id) + '/' + verb,
                  // A denial's text is its reason: sent as both (the server reads "reason").
                  verb === 'approve' ? { intent_hash: hashEl.textContent, note: note.value }
                                     : { intent_hash: hashEl.textContent, note: note.value,
                                         reason: note.value });
        result.className = 'decision-result ok';
        result.textContent = verb === 'approve'
          ? 'Approved. The operation runs now.'
          : 'Denied. The operation will not run.';
        card.classList.add('decided');
        refreshCounts();
        notify('success', verb === 'approve' ? 'Approved ' : 'Denied ', code(op.step_id), ' of ',
               h('a', { href: runHash(item.workflow_id), class: 'link' }, item.workflow_id), '.');
        card.busy = false;
      } catch (error) {
        card.busy = false;
        result.className = 'decision-result error';
        // docs/HTTP_API.md: a stale intent hash is 403 permission_denied with a message about
        // the intent; 409 means the operation no longer waits for a decision.
        let why = null;
        if (error.status === 403 && /\bintent\b/.test(error.message)) {
          why = 'The intent changed since this page showed it, so nothing was decided. ' +
                'Read the current intent before deciding again.';
        } else if (error.status === 409) {
          why = 'This operation no longer waits for a decision: someone decided it, or its ' +
                'wait ended. Nothing was changed by this click.';
        }
        replace(result, h('strong', null, 'The server refused: '), error.message,
          why ? h('p', null, why) : null);
        result.setAttribute('data-code', error.code || '');
        approve.disabled = false;
        deny.disabled = false;
      }
    }
    approve.addEventListener('click', () => decide('approve'));
    deny.addEventListener('click', () => decide('deny'));
    return h('div', { class: 'decision' }, note, h('div', { class: 'buttons' }, approve, deny));
  }

  function resolveCard(item) {
    const op = item.operation || {};
    const result = h('div', { class: 'decision-result', test: 'resolve-result', 'aria-live': 'polite' });
    const why = [];
    if (op.failure_code || op.failure_message) {
      why.push(h('p', { class: 'why' }, h('strong', null, 'Why: '),
                 op.failure_code ? code(op.failure_code) : null, ' ', op.failure_message || ''));
    }
    const el = h('article', { class: 'card person', test: 'person-card',
                              data: { 'workflow-id': item.workflow_id, 'operation-id': op.operation_id } },
      cardHead(item, (item.side_effect || op.side_effect || '').replace(/_/g, ' ')),
      h('div', { class: 'card-body' },
        h('div', { class: 'card-main' },
          why,
          intentBlock(op),
          h('dl', { class: 'facts compact' },
            h('dt', null, 'Operation'), h('dd', null, code(op.operation_id, 'operation-id')),
            h('dt', null, 'Intent hash'), h('dd', null, h('code', { class: 'hash' }, op.intent_hash)))),
        h('div', { class: 'card-side' },
          h('div', { class: 'evidence', test: 'evidence' },
            h('div', { class: 'label' }, 'Evidence the contract names'),
            item.evidence || 'The contract names no evidence.'),
          resolveForm(item, result, () => el),
          result)));
    return el;
  }

  // Committed (with the provider's reference) or not committed, a note, then a confirmation
  // step that says exactly what will be journaled.
  function resolveForm(item, result, cardEl) {
    const why = cannotDecide(item, 'resolve');
    if (why) return h('p', { class: 'callout muted', test: 'read-only' }, why);
    const op = item.operation || {};
    const group = 'resolve-' + op.operation_id;
    const yes = h('input', { type: 'radio', name: group, value: 'committed', test: 'resolve-committed' });
    const no = h('input', { type: 'radio', name: group, value: 'not_committed', test: 'resolve-not-committed' });
    const ref = h('input', { class: 'input wide mono', test: 'provider-ref', placeholder: 'Provider reference',
                             spellcheck: 'false', disabled: true });
    const note = h('textarea', { class: 'input wide', rows: 2, test: 'resolve-note',
                                 placeholder: 'What you checked, for the journal' });
    const error = h('p', { class: 'form-error', test: 'resolve-error' });
    const review = h('button', { type: 'submit', class: 'button primary', test: 'resolve-review' }, 'Review…');
    const form = h('form', { class: 'resolve-form', test: 'resolve-form' },
      h('label', { class: 'choice' }, yes, h('span', null, h('strong', null, 'Committed'),
        ' — the effect happened; its provider reference:')),
      ref,
      h('label', { class: 'choice' }, no, h('span', null, h('strong', null, 'Not committed'),
        ' — the effect did not happen; the contract decides whether it is tried again.')),
      note, error, h('div', { class: 'buttons' }, review));
    const statement = h('p', { class: 'confirm-text', test: 'confirm-text' });
    const confirm = h('button', { type: 'button', class: 'button primary', test: 'resolve-confirm' }, 'Confirm resolution');
    const back = h('button', { type: 'button', class: 'button ghost', test: 'resolve-back' }, 'Back');
    const confirmBox = h('div', { class: 'confirm', test: 'resolve-confirmation', hidden: true },
      statement, h('div', { class: 'buttons' }, confirm, back));
    for (const radio of [yes, no]) {
      radio.addEventListener('change', () => {
        ref.disabled = !yes.checked;
        if (yes.checked) ref.focus();
      });
    }
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      error.textContent = '';
      if (!yes.checked && !no.checked) {
        error.textContent = 'Say what you found: committed or not committed.';
        return;
      }
      if (yes.checked && !ref.value.trim()) {
        error.textContent = 'A committed effect needs the provider reference that proves it.';
        ref.focus();
        return;
      }
      const me = (session.me && session.me.name) || 'you';
      replace(statement, 'Record that operation ', code(op.operation_id), ' (', code(op.step_id), ' of ',
        code(item.workflow_id), ') ',
        yes.checked ? ['was ', h('strong', null, 'committed'), ' with provider reference ', code(ref.value.trim())]
                    : ['was ', h('strong', null, 'not committed')],
        '? This is journaled under your name (', h('strong', null, me), ') and cannot be undone.');
      form.hidden = true;
      confirmBox.hidden = false;
      cardEl().busy = true;
      confirm.focus();
    });
    back.addEventListener('click', () => {
      confirmBox.hidden = true;
      form.hidden = false;
      cardEl().busy = false;
    });
    confirm.addEventListener('click', async () => {
      confirm.disabled = true;
      back.disabled = true;
      const body = yes.checked ? { committed: true, provider_ref: ref.value.trim(), note: note.value }
                               : { committed: false, note: note.value };
      try {
        await api('POST', runPath(item.workflow_id) + '/operations/' +
                  encodeURIComponent(op.operation_id) + '/resolve', body);
        result.className = 'decision-result ok';
        result.textContent = 'Resolved as ' + (body.committed ? 'committed.' : 'not committed.');
        confirmBox.hidden = true;
        cardEl().classList.add('decided');
        refreshCounts();
        notify('success', 'Resolved ', code(op.step_id), ' of ',
               h('a', { href: runHash(item.workflow_id), class: 'link' }, item.workflow_id),
               body.committed ? ' as committed.' : ' as not committed.');
        cardEl().busy = false;
      } catch (failure) {
        result.className = 'decision-result error';
        replace(result, h('strong', null, 'The server refused: '), failure.message);
        confirm.disabled = false;
        back.disabled = false;
      }
    });
    return h('div', null, form, confirmBox);
  }

  // --- contracts -----------------------------------------------------------------------------

  function contractsView(main, view) {
    const grid = h('div', { class: 'contract-grid', id: 'contracts' });
    const failure = h('div');
    const input = h('textarea', { class: 'input wide mono', id: 'mcp-input', rows: 8, spellcheck: 'false',
                                  placeholder: '{"tools": [...]}  — the result of an MCP server\'s tools/list' });
    const check = h('button', { type: 'submit', class: 'button primary', id: 'mcp-check' }, 'Check catalog');
    const error = h('p', { class: 'form-error', id: 'mcp-error' });
    const report = h('div', { id: 'mcp-report' });
    put(main, [
      h('div', { class: 'page-head' }, h('div', null, h('h1', null, 'Contracts'),
        h('p', { class: 'lead' }, 'What each tool declares: its side-effect class, retries, reconciliation, approval and evidence.'))),
      failure, grid,
      h('section', { class: 'panel', id: 'mcp' },
        h('h2', { class: 'panel-title' }, 'MCP catalog check'),
        h('p', { class: 'muted' }, 'Paste what an MCP server answers to tools/list. Each tool\'s annotations are set against the contract declared here; the declared contract always governs.'),
        h('form', { id: 'mcp-form', class: 'stack', onsubmit: (e) => {
          e.preventDefault();
          runCheck();
        } }, input, error, h('div', { class: 'buttons' }, check)),
        report),
    ]);

    async function runCheck() {
      error.textContent = '';
      let catalog;
      try {
        catalog = JSON.parse(input.value);
      } catch (e) {
        error.textContent = 'That is not JSON: ' + e.message;
        return;
      }
      check.disabled = true;
      try {
        const answer = await api('POST', '/contracts/check-mcp', catalog, { signal: view.signal() });
        replace(report, mcpReport(answer));
      } catch (e) {
        if (!isAbort(e)) replace(report, errorBox(e));
      }
      check.disabled = false;
    }

    (async () => {
      try {
        const answer = await api('GET', '/contracts', undefined, { signal: view.signal() });
        const list = answer.contracts || [];
        if (!list.length) put(grid, h('p', { class: 'muted' }, 'No contract is declared yet: they arrive with the first worker.'));
        for (const c of list) put(grid, contractCard(c));
      } catch (e) {
        if (!isAbort(e)) replace(failure, errorBox(e));
      }
    })();
  }

  function contractCard(c) {
    const contract = c.contract && typeof c.contract === 'object' ? c.contract : {};
    const approval = contract.approval || {};
    const rule = approval.kind === 'when' && Array.isArray(approval.when)
      ? 'when ' + approval.when.map((w) => w.field + ' ' + w.op + ' ' + JSON.stringify(w.value)).join(' and ')
      : approval.kind || 'none';
    const answers = cardAnswers(c.card);
    return h('article', { class: 'card contract', test: 'contract-card', data: { name: c.name } },
      h('div', { class: 'card-head' },
        h('div', null, h('div', { class: 'card-title' }, h('span', { class: 'tool' }, c.name)),
          h('div', { class: 'card-sub muted mono', title: c.hash }, shortId(c.hash))),
        h('span', { class: 'badge effect-' + String(c.side_effect || '').replace(/[^a-z_]/g, '') },
          String(c.side_effect || '').replace(/_/g, ' '))),
      contract.description ? h('p', { class: 'summary' }, contract.description) : null,
      h('dl', { class: 'facts compact' },
        h('dt', null, 'Approval'), h('dd', null, rule),
        contract.retry ? [h('dt', null, 'Attempts'), h('dd', null, String(num(contract.retry.max_attempts)))] : null,
        contract.reconcile && contract.reconcile.mode && contract.reconcile.mode !== 'unset'
          ? [h('dt', null, 'Reconcile'), h('dd', null, contract.reconcile.mode)] : null,
        contract.evidence ? [h('dt', null, 'Evidence'), h('dd', null, contract.evidence)] : null),
      c.card ? h('details', { class: 'card-full' }, h('summary', null, 'Contract card'),
                 h('pre', { class: 'card-text' }, c.card)) : null,
      h('details', { class: 'card-full' }, h('summary', null, 'Contract JSON'),
        h('pre', { class: 'json' }, prettyJson(c.contract))));
  }

  function mcpReport(r) {
    const summary = r.summary || {};
    const tools = r.tools || [];
    return h('div', { class: 'report', test: 'mcp-report' },
      h('div', { class: 'chips' }, ['consistent', 'stricter_than_hints', 'conflict', 'no_contract'].map((k) =>
        h('span', { class: 'chip verdict-' + k, test: 'summary-' + k }, num(summary[k]) + ' ' + k.replace(/_/g, ' ')))),
      h('div', { class: 'table-wrap' }, h('table', { class: 'table' },
        h('thead', null, h('tr', null, ['Tool', 'Hints suggest', 'Declared', 'Verdict', 'Applied'].map((c) => h('th', null, c)))),
        h('tbody', null, tools.map((t) => [
          h('tr', { class: 'main', test: 'mcp-row', data: { tool: t.name, verdict: t.verdict } },
            h('td', null, h('span', { class: 'mono' }, t.name), t.title ? h('div', { class: 'muted small' }, t.title) : null),
            h('td', null, String(t.suggested_class || '').replace(/_/g, ' ')),
            h('td', null, t.declared_class ? String(t.declared_class).replace(/_/g, ' ') : h('span', { class: 'muted' }, 'no contract')),
            h('td', null, h('span', { class: 'chip verdict-' + String(t.verdict || '').replace(/[^a-z_]/g, '') },
              String(t.verdict || '').replace(/_/g, ' '))),
            h('td', null, t.effective ? [String(t.effective.side_effect || '').replace(/_/g, ' '),
              h('div', { class: 'muted small' }, 'approval: ', t.effective.approval)] : null)),
          h('tr', { class: 'sub' }, h('td', { colspan: 5 },
            h('p', { class: 'small' }, t.reason),
            (t.notes || []).length ? h('ul', { class: 'notes small' }, t.notes.map((n) => h('li', null, n))) : null)),
        ])))),
      (r.declared_not_in_catalog || []).length
        ? h('p', { class: 'muted small' }, 'Declared here but not in this catalog: ',
            r.declared_not_in_catalog.map((n, i) => [i ? ', ' : '', code(n)]))
        : null,
      r.next_cursor ? h('p', { class: 'muted small' }, 'This catalog is one page of several (nextCursor is set).') : null);
  }

  // --- start ---------------------------------------------------------------------------------

  async function boot() {
    $('logout').addEventListener('click', logOut);
    try {
      const existing = await api('GET', '/session', undefined, { quiet401: true });
      session.csrf = existing.csrf_token || null;
      if (session.csrf) {
        await loadMe();
        startCounts();
      }
    } catch (e) {
      session.csrf = null;  // not logged in: the login view
      session.me = null;
    }
    window.addEventListener('hashchange', route);
    route();
  }

  boot();
}());
