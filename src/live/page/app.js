// The live view's page: draws the frames a heartwave run sends over its WebSocket and sends
// the controls back (docs/live.md). Plain browser code, no build step, nothing fetched but
// this page's own files and the socket; WebGL2 draws the field where the browser has it
// (add ?2d to the address to force the canvas 2D path), else canvas 2D.
'use strict';

const $ = (id) => document.getElementById(id);
const hw = (window.hw = { frames: 0, header: null, status: null, hello: null, replies: [], errors: [], renderer: '' });
let nextId = 1;
let layout = null; // {panels, width, height, offsets}
let probeSeries = [], ecgSeries = [];
const kWindowMs = 1000;

// ---- the socket ----
const wsUrl = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + location.pathname.replace(/[^/]*$/, '') + 'ws';
let socket = null;
function connect() {
  socket = new WebSocket(wsUrl);
  socket.binaryType = 'arraybuffer';
  socket.onopen = () => setState('connected');
  socket.onclose = () => { setState('disconnected (the run ended or the network dropped)'); };
  socket.onmessage = (ev) => {
    if (typeof ev.data === 'string') onText(JSON.parse(ev.data));
    else onFrame(ev.data);
  };
}
hw.send = function (msg) {
  const id = String(nextId++);
  msg.id = id;
  socket.send(JSON.stringify(msg));
  return id;
};
hw.sendRaw = (text) => socket.send(text); // tests: bad input as the page could send it
hw.reply = (id) => hw.replies.find((r) => r.id === id);

function setState(s) { $('state').textContent = s; }

function onText(m) {
  if (m.type === 'hello') onHello(m);
  else if (m.type === 'status') onStatus(m);
  else if (m.type === 'reply') onReply(m);
}

function message(text, ok) {
  const d = document.createElement('div');
  d.className = ok ? 'ok' : 'error';
  d.textContent = text;
  const box = $('messages');
  box.prepend(d);
  while (box.children.length > 50) box.lastChild.remove();
}

function onReply(m) {
  hw.replies.push(m);
  if (hw.replies.length > 200) hw.replies.shift();
  if (!m.ok) { hw.errors.push(m.message); message(m.message, false); }
  else if (m.message) message(m.message, true);
  else if (m.op === 'probe') message(`${m.variable} = ${m.value} at t = ${m.t} ms`, true);
  else message(`${m.op}: done`, true);
}

// ---- the hello: grid, panels, controls ----
function onHello(m) {
  hw.hello = m;
  $('case').textContent = `heartwave live — ${m.case}`;
  let x = 0, h = 0, samples = 0;
  const offsets = [];
  const slices = m.panels.filter((p) => !p.volume);
  for (const p of slices) { offsets.push(x); x += p.width + 2; h = Math.max(h, p.height); samples += p.width * p.height; }
  layout = { panels: slices, width: Math.max(1, x - 2), height: h, offsets, samples };
  volume.setup(m.panels.find((p) => p.volume), m);
  const field = $('field');
  field.width = layout.width; field.height = layout.height;
  const scale = Math.max(1, Math.min(720 / layout.width, 512 / layout.height));
  field.style.width = `${Math.round(layout.width * scale)}px`;
  field.style.height = `${Math.round(layout.height * scale)}px`;
  $('colourbar').style.height = `${Math.max(300, Math.round(layout.height * scale))}px`;
  const act = $('activation');
  act.width = layout.width; act.height = layout.height;
  act.style.width = `${Math.round(layout.width * scale / 2)}px`;
  act.style.height = `${Math.round(layout.height * scale / 2)}px`;
  renderer.resize(layout.width, layout.height);
  const st = m.stimulus;
  for (const [k, v] of [['amplitude', st.amplitude], ['radius', st.radius], ['duration', st.duration]])
    if (!$(k).value) $(k).value = +v.toPrecision(4);
  $('amplitude-unit').textContent = `${st.unit} (|a| ≤ ${+st.amplitude_max.toPrecision(4)})`;
  fillSelect($('parameter'), m.parameters.map((p) => p.name), m.parameters.map((p) => p.label));
  showParameter();
  fillSelect($('variable'), m.variables, m.variables, m.variable);
  $('probe-caption').textContent = `probes: ${m.probes.join(', ')}`;
  $('ecg-caption').textContent = `pseudo-ECG: ${m.electrodes.join(', ')}`;
  $('activation-caption').textContent = m.activation
    ? 'activation time (ms) as it fills; grey: not yet'
    : 'no activation map: the case does not ask for one (output.activation_map = true)';
  probeSeries = []; ecgSeries = [];
}

function fillSelect(sel, values, labels, chosen) {
  const keep = chosen ?? sel.value;
  sel.textContent = '';
  values.forEach((v, i) => {
    const o = document.createElement('option');
    o.value = v; o.textContent = labels[i];
    sel.append(o);
  });
  if (values.includes(keep)) sel.value = keep;
}

function showParameter() {
  const p = hw.hello.parameters.find((q) => q.name === $('parameter').value);
  if (!p) return;
  $('parameter-value').value = p.value;
  const n = (x) => +x.toPrecision(4);
  $('parameter-range').textContent = `${p.label}: now ${n(p.value)} ${p.unit}, accepted ${n(p.min)} to ${n(p.max)}`;
}

// ---- the status: time, rates, plots ----
function onStatus(s) {
  hw.status = s;
  $('clock').textContent = `t = ${s.t.toFixed(2)} ms (step ${s.step}, dt ${s.dt} ms)`;
  $('rates').textContent = `${Math.round(s.steps_per_s)} steps/s, ${s.realtime.toPrecision(3)}× real time`;
  setState(s.failure ? 'failed: ' + s.failure : s.paused ? 'paused' : 'running');
  for (const p of s.probes) probeSeries.push(p);
  for (const e of s.ecg) ecgSeries.push(e);
  const cut = s.t - kWindowMs;
  probeSeries = probeSeries.filter((p) => p[0] >= cut && p[0] <= s.t);
  ecgSeries = ecgSeries.filter((p) => p[0] >= cut && p[0] <= s.t);
  plot($('probes'), probeSeries, cut, s.t);
  plot($('ecg'), ecgSeries, cut, s.t);
}

const lineColours = ['#4cf', '#fc4', '#f6a', '#7e7', '#c9f', '#fa7'];
function plot(canvas, series, t0, t1) {
  const g = canvas.getContext('2d');
  g.fillStyle = '#000'; g.fillRect(0, 0, canvas.width, canvas.height);
  if (!series.length) return;
  let lo = Infinity, hi = -Infinity;
  for (const s of series) for (let i = 1; i < s.length; ++i) if (s[i] !== null) { lo = Math.min(lo, s[i]); hi = Math.max(hi, s[i]); }
  if (!(hi > lo)) { hi = lo + 1; lo -= 1; }
  const X = (t) => ((t - t0) / (t1 - t0 || 1)) * (canvas.width - 50) + 45;
  const Y = (v) => canvas.height - 8 - ((v - lo) / (hi - lo)) * (canvas.height - 16);
  g.fillStyle = '#888'; g.font = '10px sans-serif';
  g.fillText(hi.toPrecision(3), 2, 12); g.fillText(lo.toPrecision(3), 2, canvas.height - 4);
  for (let k = 1; k < series[0].length; ++k) {
    g.strokeStyle = lineColours[(k - 1) % lineColours.length];
    g.beginPath();
    series.forEach((s, i) => { if (s[k] === null) return; i ? g.lineTo(X(s[0]), Y(s[k])) : g.moveTo(X(s[0]), Y(s[k])); });
    g.stroke();
  }
}

// ---- frames ----
function onFrame(buf) {
  if (!layout) return;
  const bytes = new Uint8Array(buf);
  if (String.fromCharCode(...bytes.subarray(0, 4)) !== 'HWF1') return;
  const n = new DataView(buf).getUint32(4, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const values = new Float32Array(buf, 8 + n, header.samples);
  hw.frames += 1;
  hw.header = header;
  renderer.draw(compose(values), header.lo, header.hi);
  volume.draw(values.subarray(layout.samples), header.lo, header.hi);
  colourBar(header);
  movie.add(header);
  if (header.act) drawActivation(new Float32Array(buf, 8 + n + 4 * header.samples, header.samples), header.t);
}

// The panels side by side in one image, row 0 at the bottom (y up); NaN where no tissue.
function compose(values) {
  const img = new Float32Array(layout.width * layout.height).fill(NaN);
  let at = 0;
  layout.panels.forEach((p, q) => {
    const x0 = layout.offsets[q];
    for (let y = 0; y < p.height; ++y)
      for (let x = 0; x < p.width; ++x) img[(layout.height - 1 - y) * layout.width + x0 + x] = values[at++];
  });
  return img;
}

// Viridis, sampled: the colour of t in [0, 1].
const viridis = [[68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142], [31, 158, 137],
  [53, 183, 121], [110, 206, 88], [181, 222, 43], [253, 231, 37]];
function colourOf(t) {
  const x = Math.min(1, Math.max(0, t)) * (viridis.length - 1), i = Math.min(viridis.length - 2, Math.floor(x)), f = x - i;
  return viridis[i].map((c, k) => Math.round(c + f * (viridis[i + 1][k] - c)));
}

function colourBar(h) {
  const c = $('colourbar'), g = c.getContext('2d');
  g.fillStyle = '#111'; g.fillRect(0, 0, c.width, c.height);
  for (let y = 20; y < c.height - 20; ++y) {
    const [r, gg, b] = colourOf(1 - (y - 20) / (c.height - 40));
    g.fillStyle = `rgb(${r},${gg},${b})`; g.fillRect(0, y, 14, 1);
  }
  g.fillStyle = '#ddd'; g.font = '11px sans-serif';
  g.fillText(h.hi.toPrecision(3), 16, 24);
  g.fillText(h.lo.toPrecision(3), 16, c.height - 20);
  g.fillText(`${h.variable}`, 16, c.height / 2 - 6);
  g.fillText(`(${h.unit})`, 16, c.height / 2 + 8);
  g.fillText(`${h.t.toFixed(1)} ms`, 0, 12);
}

function drawActivation(act, t) {
  const c = $('activation'), g = c.getContext('2d');
  const img = compose(act), data = g.createImageData(c.width, c.height);
  let hi = 0;
  for (const v of img) if (v === v) hi = Math.max(hi, v);
  img.forEach((v, i) => {
    const [r, gg, b] = v === v ? colourOf(v / (hi || 1)) : [60, 60, 60];
    data.data.set([r, gg, b, 255], 4 * i);
  });
  g.putImageData(data, 0, 0);
}

// ---- renderers: WebGL2, else canvas 2D ----
function canvas2d(canvas) {
  const g = canvas.getContext('2d');
  let data = null;
  const lut = Array.from({ length: 256 }, (_, i) => colourOf(i / 255));
  return {
    name: 'canvas2d',
    resize(w, h) { data = g.createImageData(w, h); },
    draw(img, lo, hi) {
      const s = 255 / (hi - lo || 1);
      for (let i = 0; i < img.length; ++i) {
        const v = img[i];
        const c = v === v ? lut[Math.max(0, Math.min(255, Math.round((v - lo) * s)))] : [60, 60, 60];
        data.data[4 * i] = c[0]; data.data[4 * i + 1] = c[1]; data.data[4 * i + 2] = c[2]; data.data[4 * i + 3] = 255;
      }
      g.putImageData(data, 0, 0);
    },
  };
}

// A WebGL2 program of a vertex and a fragment shader drawing one quad over the canvas (its
// attribute p, -1..1), in use; null with the compiler's words in why.why when it fails.
function quadProgram(gl, vs, fs, why) {
  const prog = gl.createProgram();
  for (const [type, src] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]]) {
    const s = gl.createShader(type);
    gl.shaderSource(s, src); gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) { why.why = gl.getShaderInfoLog(s); return null; }
    gl.attachShader(prog, s);
  }
  gl.linkProgram(prog);
  if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) { why.why = gl.getProgramInfoLog(prog); return null; }
  gl.useProgram(prog);
  const buf = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, buf);
  gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 1, -1, -1, 1, 1, 1]), gl.STATIC_DRAW);
  const loc = gl.getAttribLocation(prog, 'p');
  gl.enableVertexAttribArray(loc);
  gl.vertexAttribPointer(loc, 2, gl.FLOAT, false, 0, 0);
  gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
  return prog;
}

function webgl2(canvas) {
  const gl = canvas.getContext('webgl2', { antialias: false });
  if (!gl) return null;
  const vs = `#version 300 es
    in vec2 p; out vec2 uv;
    void main() { uv = vec2(p.x * 0.5 + 0.5, 0.5 - p.y * 0.5); gl_Position = vec4(p, 0.0, 1.0); }`;
  const stops = viridis.map((c) => `vec3(${c.map((x) => (x / 255).toFixed(4)).join(',')})`).join(',');
  const fs = `#version 300 es
    precision highp float;
    uniform highp sampler2D field; uniform float lo, hi; in vec2 uv; out vec4 colour;
    const vec3 stops[${viridis.length}] = vec3[](${stops});
    void main() {
      float v = texture(field, uv).r;
      if (v < -1e29) { colour = vec4(0.235, 0.235, 0.235, 1.0); return; }
      float x = clamp((v - lo) / max(hi - lo, 1e-30), 0.0, 1.0) * float(${viridis.length - 1});
      int i = min(int(floor(x)), ${viridis.length - 2});
      colour = vec4(mix(stops[i], stops[i + 1], x - float(i)), 1.0);
    }`;
  const prog = quadProgram(gl, vs, fs, {});
  if (!prog) return null;
  const tex = gl.createTexture();
  gl.bindTexture(gl.TEXTURE_2D, tex);
  for (const k of [gl.TEXTURE_MIN_FILTER, gl.TEXTURE_MAG_FILTER]) gl.texParameteri(gl.TEXTURE_2D, k, gl.NEAREST);
  for (const k of [gl.TEXTURE_WRAP_S, gl.TEXTURE_WRAP_T]) gl.texParameteri(gl.TEXTURE_2D, k, gl.CLAMP_TO_EDGE);
  const uLo = gl.getUniformLocation(prog, 'lo'), uHi = gl.getUniformLocation(prog, 'hi');
  let w = 1, h = 1;
  return {
    name: 'webgl2',
    resize(nw, nh) { w = nw; h = nh; gl.viewport(0, 0, w, h); },
    draw(img, lo, hi) {
      for (let i = 0; i < img.length; ++i) if (img[i] !== img[i]) img[i] = -1e30;
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.R32F, w, h, 0, gl.RED, gl.FLOAT, img);
      gl.uniform1f(uLo, lo); gl.uniform1f(uHi, hi);
      gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    },
  };
}

const renderer = (!location.search.includes('2d') && webgl2($('field'))) || canvas2d($('field'));
hw.renderer = renderer.name;

// ---- the volume: the heart's surface, rotated and zoomed in the page ----
// The frame's volume samples (a coarse block of the grid) go into a 3D texture; each pixel
// marches an orthographic ray through the box to the first tissue sample and shades it by
// the field's colour and the surface's normal. Ctrl-click marches the same ray here and
// stimulates at the cell it hits. Without WebGL2 the same march runs in JavaScript.
const volume = (() => {
  let canvas = $('volume');
  const st = (hw.volume = { drawn: 0, yaw: 0.6, pitch: 0.35, zoom: 1, renderer: '', pick: null, ctrlClicks: 0 });
  // What a Ctrl-click at (px, py) in [-1, 1] would hit: {v, idx} or null (tests aim with it).
  st.hit = (px, py) => (data ? march(px, py) : null);
  let panel = null, hello = null, half = [1, 1, 1], data = null, gl = null, prog = null, tex = null, uni = {};
  let lastDraw = 0;
  const kSpan = 1.45;  // half the view's width in box units at zoom 1 (the box's longest half-side is 1)
  // View axes: screen x = grid x, screen up = grid z, depth = grid y (the heart's long axis
  // is usually z). rotate() takes a point of the box (grid axes) to the view's.
  function rotation() {
    const cy = Math.cos(st.yaw), sy = Math.sin(st.yaw), cp = Math.cos(st.pitch), sp = Math.sin(st.pitch);
    // rows: view x (right), view y (up), view z (towards the viewer: x × y), in grid coordinates
    return [[cy, sy, 0], [-sp * sy, sp * cy, cp], [cp * sy, -cp * cy, sp]].map((r) => [r[0], r[1], r[2]]);
  }
  function ray(px, py) {  // px, py in [-1, 1]: origin and direction in box coordinates [-half, half]
    const R = rotation(), s = kSpan / st.zoom;
    const o = [0, 1, 2].map((a) => R[0][a] * px * s + R[1][a] * py * s + R[2][a] * 4);
    return { o, d: [-R[2][0], -R[2][1], -R[2][2]] };
  }
  function sample(p) {  // the value at box point p, or null off tissue / outside
    const idx = [0, 1, 2].map((a) => Math.floor(((p[a] + half[a]) / (2 * half[a])) * dims[a]));
    if (idx.some((v, a) => v < 0 || v >= dims[a])) return null;
    const v = data[(idx[2] * dims[1] + idx[1]) * dims[0] + idx[0]];
    return v === v && v > -1e29 ? { v, idx } : null;
  }
  let dims = [1, 1, 1];
  function march(px, py) {
    const { o, d } = ray(px, py);
    let t0 = -Infinity, t1 = Infinity;
    for (let a = 0; a < 3; ++a) {
      const ta = (-half[a] - o[a]) / d[a], tb = (half[a] - o[a]) / d[a];
      t0 = Math.max(t0, Math.min(ta, tb)); t1 = Math.min(t1, Math.max(ta, tb));
    }
    if (!(t1 > t0)) return null;
    const step = Math.min(...half.map((h, a) => (2 * h) / dims[a])) / 2;
    for (let t = t0; t <= t1; t += step) {
      const hit = sample([o[0] + t * d[0], o[1] + t * d[1], o[2] + t * d[2]]);
      if (hit) return hit;
    }
    return null;
  }
  // On a canvas of its own: a canvas that once gave a WebGL2 context gives no 2D one, so a
  // failed set-up must leave the page's canvas untouched for the JavaScript path.
  function setupGl() {
    const c = document.createElement('canvas');
    c.width = canvas.width; c.height = canvas.height; c.id = canvas.id; c.title = canvas.title;
    gl = c.getContext('webgl2', { antialias: false, preserveDrawingBuffer: true });
    if (!gl) return false;
    const vs = `#version 300 es
      in vec2 p; out vec2 px; void main() { px = p; gl_Position = vec4(p, 0.0, 1.0); }`;
    const stops = viridis.map((c) => `vec3(${c.map((x) => (x / 255).toFixed(4)).join(',')})`).join(',');
    const fs = `#version 300 es
      precision highp float; precision highp sampler3D;
      uniform sampler3D vol; uniform vec3 halfSize, dims; uniform mat3 R; uniform float scale, lo, hi;
      in vec2 px; out vec4 colour;
      const vec3 stops[${viridis.length}] = vec3[](${stops});
      float at(vec3 p) { vec3 u = (p + halfSize) / (2.0 * halfSize); if (any(lessThan(u, vec3(0))) || any(greaterThanEqual(u, vec3(1)))) return -1e30; return texture(vol, u).r; }
      bool tissue(vec3 p) { return at(p) > -1e29; }
      void main() {
        vec3 o = R[0] * px.x * scale + R[1] * px.y * scale + R[2] * 4.0, d = -R[2];
        vec3 ta = (-halfSize - o) / d, tb = (halfSize - o) / d;
        float t0 = max(max(min(ta.x, tb.x), min(ta.y, tb.y)), min(ta.z, tb.z));
        float t1 = min(min(max(ta.x, tb.x), max(ta.y, tb.y)), max(ta.z, tb.z));
        colour = vec4(0.07, 0.07, 0.07, 1.0);
        if (t1 <= t0) return;
        vec3 cell = 2.0 * halfSize / dims; float step = min(min(cell.x, cell.y), cell.z) * 0.5;
        for (int i = 0; i < 2048; ++i) {
          float t = t0 + float(i) * step; if (t > t1) break;
          vec3 p = o + t * d; float v = at(p);
          if (v > -1e29) {
            vec3 n = vec3(float(tissue(p - vec3(cell.x, 0, 0))) - float(tissue(p + vec3(cell.x, 0, 0))),
                          float(tissue(p - vec3(0, cell.y, 0))) - float(tissue(p + vec3(0, cell.y, 0))),
                          float(tissue(p - vec3(0, 0, cell.z))) - float(tissue(p + vec3(0, 0, cell.z))));
            float shade = length(n) > 0.0 ? 0.35 + 0.65 * abs(dot(normalize(n), d)) : 1.0;
            float x = clamp((v - lo) / max(hi - lo, 1e-30), 0.0, 1.0) * float(${viridis.length - 1});
            int k = min(int(floor(x)), ${viridis.length - 2});
            colour = vec4(mix(stops[k], stops[k + 1], x - float(k)) * shade, 1.0);
            return;
          }
        }
      }`;
    prog = quadProgram(gl, vs, fs, st);
    if (!prog) { gl = null; return false; }
    tex = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_3D, tex);
    for (const k of [gl.TEXTURE_MIN_FILTER, gl.TEXTURE_MAG_FILTER]) gl.texParameteri(gl.TEXTURE_3D, k, gl.NEAREST);
    for (const k of [gl.TEXTURE_WRAP_S, gl.TEXTURE_WRAP_T, gl.TEXTURE_WRAP_R]) gl.texParameteri(gl.TEXTURE_3D, k, gl.CLAMP_TO_EDGE);
    for (const n of ['halfSize', 'dims', 'R', 'scale', 'lo', 'hi']) uni[n] = gl.getUniformLocation(prog, n);
    gl.viewport(0, 0, c.width, c.height);
    canvas.replaceWith(c);
    canvas = c;
    return true;
  }
  let range = [0, 1];
  function render() {
    if (!data) return;
    const [lo, hi] = range;
    if (gl) {
      const R = rotation();
      gl.uniformMatrix3fv(uni.R, false, new Float32Array([...R[0], ...R[1], ...R[2]]));
      gl.uniform3fv(uni.halfSize, half); gl.uniform3fv(uni.dims, dims);
      gl.uniform1f(uni.scale, kSpan / st.zoom); gl.uniform1f(uni.lo, lo); gl.uniform1f(uni.hi, hi);
      gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    } else {
      const g = canvas.getContext('2d'), n = 120, img = g.createImageData(n, n);
      for (let y = 0; y < n; ++y)
        for (let x = 0; x < n; ++x) {
          const hit = march((2 * x + 1) / n - 1, 1 - (2 * y + 1) / n);
          const c = hit ? colourOf((hit.v - lo) / (hi - lo || 1)) : [18, 18, 18];
          img.data.set([c[0], c[1], c[2], 255], 4 * (y * n + x));
        }
      const tmp = document.createElement('canvas');
      tmp.width = tmp.height = n; tmp.getContext('2d').putImageData(img, 0, 0);
      g.imageSmoothingEnabled = false; g.drawImage(tmp, 0, 0, canvas.width, canvas.height);
    }
    st.drawn += 1;
  }
  function setup(p, m) {
    panel = p || null; hello = m;
    $('volume-figure').hidden = !panel;
    if (!panel) return;
    dims = [panel.width, panel.height, panel.depth];
    const ext = [0, 1, 2].map((a) => dims[a] * panel.stride * m.h[a]);
    const big = Math.max(...ext);
    half = ext.map((e) => e / big);
    if (!st.renderer) {
      st.renderer = setupGl() ? 'webgl2' : 'canvas2d';
      listen();
    }
  }
  function draw(values, lo, hi) {
    if (!panel || values.length < dims[0] * dims[1] * dims[2]) return;
    const now = performance.now();
    if (now - lastDraw < 50 && st.drawn > 0) return;  // 20 pictures a second at most
    lastDraw = now;
    data = new Float32Array(values.subarray(0, dims[0] * dims[1] * dims[2]));
    for (let i = 0; i < data.length; ++i) if (data[i] !== data[i]) data[i] = -1e30;
    range = [lo, hi];
    if (gl) gl.texImage3D(gl.TEXTURE_3D, 0, gl.R32F, dims[0], dims[1], dims[2], 0, gl.RED, gl.FLOAT, data);
    render();
  }
  // Drag: rotate; wheel: zoom; Ctrl-click: stimulate at the surface under the pointer.
  let drag = null;
  function listen() {
    canvas.addEventListener('mousedown', (ev) => { if (!ev.ctrlKey) drag = [ev.clientX, ev.clientY, st.yaw, st.pitch]; });
    window.addEventListener('mouseup', () => { drag = null; });
    canvas.addEventListener('mousemove', (ev) => {
      if (!drag) return;
      st.yaw = drag[2] + (ev.clientX - drag[0]) * 0.01;
      st.pitch = Math.max(-1.5, Math.min(1.5, drag[3] + (ev.clientY - drag[1]) * 0.01));
      render();
    });
    canvas.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      st.zoom = Math.max(0.5, Math.min(8, st.zoom * Math.exp(-ev.deltaY * 0.001)));
      render();
    }, { passive: false });
    canvas.addEventListener('click', (ev) => {
      if (!ev.ctrlKey || !panel || !data) return;
      st.ctrlClicks += 1;
      const r = canvas.getBoundingClientRect();
      const hit = march(((ev.clientX - r.left) / r.width) * 2 - 1, 1 - ((ev.clientY - r.top) / r.height) * 2);
      st.pick = hit ? hit.idx : null;
      if (!hit) { message('no tissue under the pointer', false); return; }
      const at = [0, 1, 2].map((a) => Math.min((hit.idx[a] * panel.stride + Math.floor(panel.stride / 2) + 0.5) * hello.h[a], hello.extent[a]));
      hw.send({ op: 'stimulate', x: at[0], y: at[1], z: at[2], amplitude: numberOf('amplitude'), radius: numberOf('radius'),
        duration: numberOf('duration') });
    });
  }
  return { setup, draw };
})();

// ---- the movie: the view as WebM, made in the browser ----
// Each frame drawn is copied (field, colour bar, time) into a canvas of the movie's own, whose
// stream MediaRecorder encodes: one video frame per frame the run sent, nothing asked of the
// run, and the file is saved by the browser (a download) when the recording stops.
const movie = (() => {
  let canvas = null, g = null, track = null, recorder = null, chunks = [], scale = 1, name = '';
  hw.movie = { frames: 0, bytes: 0, type: '', recording: false };
  const types = ['video/webm;codecs=vp9', 'video/webm;codecs=vp8', 'video/webm', 'video/mp4'];
  function start() {
    if (recorder || !layout) return;
    const type = types.find((t) => window.MediaRecorder && MediaRecorder.isTypeSupported(t));
    if (!type) { message('movie: this browser cannot record a canvas (MediaRecorder with WebM or MP4)', false); return; }
    const f = $('field'), bar = $('colourbar');
    scale = Math.max(1, Math.floor(480 / f.height));
    canvas = document.createElement('canvas');
    canvas.width = 2 * Math.ceil((f.width * scale + bar.width) / 2);
    canvas.height = 2 * Math.ceil(Math.max(f.height * scale, 240) / 2);
    g = canvas.getContext('2d');
    const stream = canvas.captureStream(0);
    track = stream.getVideoTracks()[0];
    recorder = new MediaRecorder(stream, { mimeType: type, videoBitsPerSecond: 4e6 });
    chunks = [];
    recorder.ondataavailable = (e) => { if (e.data.size) chunks.push(e.data); };
    recorder.onstop = save;
    recorder.start(500);
    hw.movie = { frames: 0, bytes: 0, type, recording: true };
    name = `heartwave-${(hw.hello && hw.hello.case) || 'live'}-t${hw.status ? Math.round(hw.status.t) : 0}` +
      (type.startsWith('video/mp4') ? '.mp4' : '.webm');
    $('record').disabled = true; $('record-stop').disabled = false;
    $('record-state').textContent = 'recording…';
  }
  function add(header) {
    if (!recorder) return;
    const f = $('field');
    g.fillStyle = '#111'; g.fillRect(0, 0, canvas.width, canvas.height);
    g.imageSmoothingEnabled = false;
    g.drawImage(f, 0, 0, f.width * scale, f.height * scale);
    g.drawImage($('colourbar'), f.width * scale, 0);
    g.fillStyle = '#ddd'; g.font = '14px sans-serif';
    g.fillText(`t = ${header.t.toFixed(1)} ms`, 8, canvas.height - 8);
    track.requestFrame();
    hw.movie.frames += 1;
    $('record-state').textContent = `recording… ${hw.movie.frames} frames`;
  }
  function stop() {
    if (recorder && recorder.state !== 'inactive') recorder.stop();
  }
  function save() {
    const blob = new Blob(chunks, { type: hw.movie.type });
    hw.movie.bytes = blob.size;
    hw.movie.recording = false;
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    message(`movie: ${hw.movie.frames} frames, ${Math.round(blob.size / 1024)} KB, saved as ${name}`, true);
    $('record-state').textContent = '';
    $('record').disabled = false; $('record-stop').disabled = true;
    recorder = null; track = null; chunks = [];
  }
  return { start, add, stop };
})();

// ---- controls ----
function numberOf(id) { return Number($(id).value); }

$('field').addEventListener('click', (ev) => {
  if (!layout || !hw.hello) return;
  const r = ev.target.getBoundingClientRect();
  const px = ((ev.clientX - r.left) / r.width) * layout.width;
  const py = layout.height - 1 - ((ev.clientY - r.top) / r.height) * layout.height;
  layout.panels.forEach((p, q) => {
    const x = px - layout.offsets[q];
    if (x < 0 || x >= p.width || py < 0 || py >= p.height) return;
    const at = [0, 0, 0], H = hw.hello.h;
    at[p.u] = (Math.floor(x) * p.stride + Math.floor(p.stride / 2) + 0.5) * H[p.u];
    at[p.v] = (Math.floor(py) * p.stride + Math.floor(p.stride / 2) + 0.5) * H[p.v];
    at[p.normal] = (p.index + 0.5) * H[p.normal];
    for (let d = 0; d < 3; ++d) at[d] = Math.min(at[d], hw.hello.extent[d]);
    hw.send({ op: 'stimulate', x: at[0], y: at[1], z: at[2], amplitude: numberOf('amplitude'), radius: numberOf('radius'),
      duration: numberOf('duration') });
  });
});
$('pause').onclick = () => hw.send({ op: 'pause' });
$('resume').onclick = () => hw.send({ op: 'resume' });
$('step').onclick = () => hw.send({ op: 'step', count: numberOf('step-count') });
$('speed-set').onclick = () => hw.send({ op: 'speed', value: numberOf('speed') });
$('parameter').onchange = showParameter;
$('parameter-set').onclick = () => hw.send({ op: 'set', name: $('parameter').value, value: numberOf('parameter-value') });
$('variable-set').onclick = () => hw.send({ op: 'view', name: $('variable').value });
$('save').onclick = () => hw.send({ op: 'save', name: $('checkpoint').value });
$('restore').onclick = () => hw.send({ op: 'restore', name: $('checkpoint').value });
$('record').onclick = () => movie.start();
$('record-stop').onclick = () => movie.stop();

connect();
