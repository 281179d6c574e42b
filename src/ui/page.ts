/**
 * The dashboard: one self-contained page (no external scripts, styles or fonts: it works offline),
 * compiled into the build as this module. It holds no data: everything it shows it asks of the API
 * with the bearer token the user gives it (kept in sessionStorage), so it is authorized as the API is.
 */
const STYLE = `
body{font:14px system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f8fa}
header{background:#24292f;color:#fff;padding:.6em 1em;display:flex;gap:1em;align-items:center;flex-wrap:wrap}
header h1{font-size:1.1em;margin:0}
main{padding:1em;display:grid;gap:1em;grid-template-columns:repeat(auto-fit,minmax(320px,1fr))}
section{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:.6em;overflow:auto}
h2{font-size:1em;margin:.2em 0 .5em}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.2em .4em;border-bottom:1px solid #eaeef2;white-space:nowrap}
.Bound,.Running,.attached,.Succeeded{color:#1a7f37}.Pending,.detached{color:#9a6700}.Lost,.Failed{color:#cf222e}
a{color:#0969da;cursor:pointer}#detail{grid-column:1/-1}pre{white-space:pre-wrap;margin:0}
.err{color:#cf222e}form{display:flex;gap:.5em}input{flex:1;min-width:12em}
`;

const SCRIPT = `
const api = (p, o = {}) => fetch(p, { ...o, headers: { Authorization: 'Bearer ' + token() } });
const token = () => sessionStorage.getItem('stowage-token') || '';
const h = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag); const { dataset, ...rest } = attrs;
  Object.assign(e, rest); Object.assign(e.dataset, dataset || {}); e.append(...kids); return e;
};
const kinds = {
  storageclasses: { path: '/apis/storage.k8s.io/v1/storageclasses', cols: (o) => [o.metadata.name, o.provisioner, o.volumeBindingMode] },
  persistentvolumeclaims: { path: '/api/v1/persistentvolumeclaims', cols: (o) => [claimLink(o), h('span', { className: o.status?.phase || 'Pending', textContent: o.status?.phase || 'Pending' }), o.spec.volumeName || '', o.spec.storageClassName || ''] },
  persistentvolumes: { path: '/api/v1/persistentvolumes', cols: (o) => [o.metadata.name, h('span', { className: o.status?.phase || '', textContent: o.status?.phase || '' }), o.spec.claimRef ? o.spec.claimRef.namespace + '/' + o.spec.claimRef.name : '', o.spec.capacity?.storage || ''] },
  volumeattachments: { path: '/apis/storage.k8s.io/v1/volumeattachments', cols: (o) => [o.spec.source.persistentVolumeName || '', o.spec.nodeName, h('span', { className: o.status?.attached ? 'attached' : 'detached', textContent: o.status?.attached ? 'attached' : 'detached' })] },
  pods: { path: '/api/v1/pods', cols: (o) => [o.metadata.namespace + '/' + o.metadata.name, h('span', { className: o.status?.phase || 'Pending', textContent: o.status?.phase || 'Pending' }), o.spec.nodeName || '', (o.spec.volumes || []).filter((v) => v.persistentVolumeClaim).map((v) => v.persistentVolumeClaim.claimName).join(',')] },
  csinodes: { path: '/apis/storage.k8s.io/v1/csinodes', cols: (o) => [o.metadata.name, (o.spec.drivers || []).map((d) => d.name).join(',')] },
  nodes: { path: '/api/v1/nodes', cols: (o) => [o.metadata.name, (o.status?.conditions || []).find((c) => c.type === 'Ready')?.status === 'True' ? 'Ready' : 'NotReady'] },
};
const state = {};
function claimLink(o) { const k = o.metadata.namespace + '/' + o.metadata.name; return h('a', { textContent: k, href: '#claim=' + k }); }
function render(kind) {
  const rows = [...state[kind].values()].sort((a, b) => (a.metadata.namespace || '').localeCompare(b.metadata.namespace || '') || a.metadata.name.localeCompare(b.metadata.name));
  const body = document.querySelector('#' + kind + ' tbody');
  body.replaceChildren(...rows.map((o) => h('tr', { dataset: { name: o.metadata.name } }, ...kinds[kind].cols(o).map((c) => h('td', {}, c)))));
  if (kind === 'persistentvolumeclaims' || kind === 'pods' || kind === 'volumeattachments') void showDetail();
}
// A browser keeps at most six HTTP/1.1 connections to one origin: four kinds are watched, the
// slow-changing rest are re-listed every few seconds, leaving connections for the detail view.
const WATCHED = ['persistentvolumeclaims', 'persistentvolumes', 'volumeattachments', 'pods'];
async function poll(kind) {
  for (;;) {
    try {
      const r = await api(kinds[kind].path);
      if (r.ok) { state[kind] = new Map((await r.json()).items.map((o) => [(o.metadata.namespace || '') + '/' + o.metadata.name, o])); render(kind); }
    } catch (e) { /* retried below */ }
    await new Promise((r) => setTimeout(r, 3000));
  }
}
async function follow(kind) {
  const k = kinds[kind];
  for (;;) {
    try {
      const r = await api(k.path);
      if (r.status === 401 || r.status === 403) { login('Access refused (' + r.status + '): give a token allowed to read this.'); return; }
      const list = await r.json();
      state[kind] = new Map(list.items.map((o) => [(o.metadata.namespace || '') + '/' + o.metadata.name, o]));
      render(kind);
      const w = await api(k.path + '?watch=true&allowWatchBookmarks=true&resourceVersion=' + list.metadata.resourceVersion);
      const reader = w.body.getReader(); const dec = new TextDecoder(); let buf = '';
      for (;;) {
        const { value, done } = await reader.read(); if (done) break;
        buf += dec.decode(value, { stream: true }); let i;
        while ((i = buf.indexOf('\\n')) >= 0) {
          const ev = JSON.parse(buf.slice(0, i)); buf = buf.slice(i + 1);
          if (ev.type === 'ERROR') throw new Error('watch expired');
          if (ev.type === 'BOOKMARK') continue;
          const key = (ev.object.metadata.namespace || '') + '/' + ev.object.metadata.name;
          if (ev.type === 'DELETED') state[kind].delete(key); else state[kind].set(key, ev.object);
          render(kind);
        }
      }
    } catch (e) { await new Promise((r) => setTimeout(r, 1000)); }
  }
}
let detailSeq = 0;
async function showDetail() {
  const m = /claim=([^/&]+)\\/([^&]+)/.exec(location.hash); const el = document.getElementById('detail');
  if (!m) { el.hidden = true; return; }
  el.hidden = false; const seq = ++detailSeq; const [, ns, name] = m;
  const X = '/apis/explain.stowage.io/v1alpha1';
  const [why, calls, events] = await Promise.all([
    api(X + '/namespaces/' + ns + '/persistentvolumeclaims/' + name).then((r) => r.json()),
    api(X + '/csicalls?claim=' + name + '&namespace=' + ns).then((r) => r.json()),
    api('/api/v1/namespaces/' + ns + '/events?fieldSelector=involvedObject.kind%3DPersistentVolumeClaim%2CinvolvedObject.name%3D' + name).then((r) => r.json()),
  ]);
  const when = (e) => e.lastTimestamp || e.eventTime || e.metadata.creationTimestamp || '';
  const timeline = (events.items || []).slice().sort((a, b) => when(a).localeCompare(when(b)));
  const paths = (method, field) => [...new Set((calls.items || []).filter((x) => x.method.endsWith('/' + method) && x.code === 'OK').map((x) => x.request[field]).filter(Boolean))];
  const staging = paths('NodeStageVolume', 'stagingTargetPath');
  const publish = paths('NodePublishVolume', 'targetPath');
  if (seq !== detailSeq) return;
  const c = state.persistentvolumeclaims?.get(ns + '/' + name);
  const pv = c?.spec.volumeName ? state.persistentvolumes?.get('/' + c.spec.volumeName) : undefined;
  const vas = [...(state.volumeattachments?.values() || [])].filter((a) => pv && a.spec.source.persistentVolumeName === pv.metadata.name);
  el.replaceChildren(
    h('h2', { textContent: 'Claim ' + ns + '/' + name }),
    h('p', { id: 'why', className: why.ready ? 'Bound' : 'Pending', textContent: why.summary || why.message || '' }),
    h('ul', {}, ...(why.findings || []).map((f) => h('li', { textContent: f.message }))),
    h('p', { textContent: 'Volume: ' + (pv ? pv.metadata.name + ' (' + (pv.spec.csi?.driver || '') + ' ' + (pv.spec.csi?.volumeHandle || '') + ')' : 'none yet') + (vas.length ? ' · attached to ' + vas.map((a) => a.spec.nodeName + (a.status?.attached ? '' : ' (pending)')).join(', ') : '') }),
    h('p', { id: 'paths', textContent: 'Staged at: ' + (staging.join(', ') || '-') + ' · published at: ' + (publish.join(', ') || '-') }),
    h('h2', { textContent: 'Timeline' }),
    h('table', { id: 'timeline' }, h('tbody', {}, ...timeline.map((e) => h('tr', {},
      h('td', { textContent: when(e).replace('T', ' ').replace('Z', '') }), h('td', { className: e.type === 'Warning' ? 'Lost' : '', textContent: e.reason || '' }),
      h('td', { textContent: (e.message || '') + (e.count > 1 ? ' (x' + e.count + ')' : '') }))))),
    h('h2', { textContent: 'CSI calls' }),
    h('table', { id: 'calls' }, h('tbody', {}, ...(calls.items || []).map((x) => h('tr', {},
      h('td', { textContent: x.time.slice(11, 23) }), h('td', { textContent: x.caller }), h('td', { textContent: x.method.split('/')[2] }),
      h('td', { className: x.code === 'OK' ? 'Bound' : 'Lost', textContent: x.code + (x.error ? ': ' + x.error : '') }), h('td', { textContent: Math.round(x.durationSeconds * 1000) + ' ms' }))))),
  );
}
function login(msg) {
  const f = h('form', {}, h('input', { type: 'password', placeholder: 'bearer token (the kubeconfig\\'s)', id: 'token' }), h('button', { textContent: 'Log in' }));
  f.onsubmit = (e) => { e.preventDefault(); sessionStorage.setItem('stowage-token', f.querySelector('input').value); location.reload(); };
  document.querySelector('main').replaceChildren(h('section', {}, h('p', { className: 'err', textContent: msg }), f));
}
const fromHash = /token=([^&]+)/.exec(location.hash);
if (fromHash) { sessionStorage.setItem('stowage-token', decodeURIComponent(fromHash[1])); location.hash = location.hash.replace(/token=[^&]+&?/, ''); }
window.addEventListener('hashchange', () => void showDetail());
if (!token()) login('Log in with a bearer token.');
else for (const kind of Object.keys(kinds)) void (WATCHED.includes(kind) ? follow(kind) : poll(kind));
`;

const SECTIONS: ReadonlyArray<[string, string, readonly string[]]> = [
  ['persistentvolumeclaims', 'Claims', ['claim', 'phase', 'volume', 'class']],
  ['persistentvolumes', 'Volumes', ['name', 'phase', 'claim', 'capacity']],
  ['volumeattachments', 'Attachments', ['volume', 'node', 'state']],
  ['pods', 'Pods', ['pod', 'phase', 'node', 'claims']],
  ['storageclasses', 'Storage classes', ['name', 'provisioner', 'binding']],
  ['csinodes', 'CSI nodes', ['node', 'drivers']],
  ['nodes', 'Nodes', ['name', 'ready']],
];

export const DASHBOARD_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Stowage</title><style>${STYLE}</style></head>
<body><header><h1>Stowage</h1><span>storage, live</span></header>
<main><section id="detail" hidden></section>
${SECTIONS.map(
  ([id, title, cols]) =>
    `<section id="${id}"><h2>${title}</h2><table><thead><tr>${cols.map((c) => `<th>${c}</th>`).join('')}</tr></thead><tbody></tbody></table></section>`,
).join('\n')}
</main><script>${SCRIPT}</script></body></html>
`;
