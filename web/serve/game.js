// The Hues and Cues game (docs/serve.md "Game"): consent, onboarding, the optional colour-vision
// screen, N words (and one attention check) answered by clicking a cell or typing its coordinate,
// the reveal of earlier players' answers, and the completion code. Everything the participant
// types is sent as JSON and shown only as text.
import { api, ApiError, clear, clientId, drawBoard, el, loadBoard, showError } from './common.js';

const STRINGS = {
  en: {
    title: 'Hues and Cues', agree: 'I agree to take part', disagree: 'I do not agree',
    declined: 'Thank you. Nothing was recorded; you may close this page.',
    about: 'About you', language: 'Language', age: 'Age', gender: 'Gender', cvd: 'Do you have a colour-vision deficiency (colour blindness)?',
    yes: 'Yes', no: 'No', start: 'Start', choose: 'Choose…',
    genders: { female: 'Female', male: 'Male', other: 'Other', 'prefer-not-to-say': 'Prefer not to say' },
    screen: 'Colour-vision check', screenHelp: 'Which number do you see in the circle?', noNumber: 'No number',
    plate: (i, n) => `Plate ${i} of ${n}`,
    item: (i, n) => `Word ${i} of ${n}`, check: (n) => `A quick check (not one of the ${n} words)`, category: 'Category',
    prompt: 'Pick the colour on the board that best matches the word: click or tap a cell, or type its coordinate (for example C12).',
    attention: (cell) => `Attention check: please select cell ${cell}.`,
    coordinate: 'Coordinate', submit: 'Answer', next: 'Next', picked: (c) => `Selected: ${c}`,
    zoom: 'Tap the colour you mean', closeZoom: 'Close',
    reveal: (n) => `Dots show where ${n} players answered this word (darker and larger: more players). Your answer is outlined.`,
    badCell: 'Type a cell from A1 to P30.', done: 'Thank you! You have finished.', code: 'Your completion code:',
    redirecting: 'Taking you back…', back: 'Continue',
  },
  es: {
    title: 'Hues and Cues', agree: 'Acepto participar', disagree: 'No acepto',
    declined: 'Gracias. No se ha guardado nada; puede cerrar esta página.',
    about: 'Sobre usted', language: 'Idioma', age: 'Edad', gender: 'Género', cvd: '¿Tiene alguna alteración de la visión del color (daltonismo)?',
    yes: 'Sí', no: 'No', start: 'Empezar', choose: 'Elija…',
    genders: { female: 'Mujer', male: 'Hombre', other: 'Otro', 'prefer-not-to-say': 'Prefiero no decirlo' },
    screen: 'Prueba de visión del color', screenHelp: '¿Qué número ve en el círculo?', noNumber: 'Ningún número',
    plate: (i, n) => `Lámina ${i} de ${n}`,
    item: (i, n) => `Palabra ${i} de ${n}`, check: (n) => `Una comprobación rápida (no es una de las ${n} palabras)`, category: 'Categoría',
    prompt: 'Elija el color del tablero que mejor encaja con la palabra: pulse una casilla o escriba su coordenada (por ejemplo C12).',
    attention: (cell) => `Control de atención: seleccione la casilla ${cell}.`,
    coordinate: 'Coordenada', submit: 'Responder', next: 'Siguiente', picked: (c) => `Seleccionada: ${c}`,
    zoom: 'Toque el color que quiere elegir', closeZoom: 'Cerrar',
    reveal: (n) => `Los puntos muestran dónde respondieron ${n} jugadores (más oscuro y grande: más jugadores). Su respuesta está marcada.`,
    badCell: 'Escriba una casilla de A1 a P30.', done: '¡Gracias! Ha terminado.', code: 'Su código de finalización:',
    redirecting: 'Volviendo…', back: 'Continuar',
  },
};
const LANGUAGE_NAMES = { es: 'Español', en: 'English' };
const AGE_RANGES = ['-10', '10-19', '20-29', '30-39', '40-49', '50-59', '60-69', '70'];
const URL_PARAMS = ['PROLIFIC_PID', 'STUDY_ID', 'SESSION_ID', 'workerId', 'assignmentId', 'hitId'];
const CELL = /^\s*([A-Pa-p])\s*([1-9]|[12][0-9]|30)\s*$/;

const app = document.getElementById('app');
let study = null;
let board = null;
let lang = 'en';
const t = () => STRINGS[lang] || STRINGS.en;

// Tab blur/focus and visibility changes, sent in batches.
const pending = [];
const started = performance.now();
function note(type) { pending.push({ type, t: Math.round(performance.now() - started) }); }
async function flushEvents() {
  if (!pending.length) return;
  const events = pending.splice(0, 100);
  try { await api('/api/events', { method: 'POST', body: { events } }); } catch (e) { if (!(e instanceof ApiError)) pending.unshift(...events); }
}
window.addEventListener('blur', () => note('blur'));
window.addEventListener('focus', () => note('focus'));
document.addEventListener('visibilitychange', () => note(document.visibilityState === 'hidden' ? 'hidden' : 'visible'));

function screenMetadata() {
  const media = (q) => window.matchMedia(q).matches;
  const gamut = ['rec2020', 'p3', 'srgb'].find((g) => media(`(color-gamut: ${g})`)) || 'unknown';
  return {
    user_agent: navigator.userAgent,
    viewport: [window.innerWidth, window.innerHeight],
    screen: [window.screen.width, window.screen.height],
    device_pixel_ratio: window.devicePixelRatio,
    color_gamut: gamut,
    dynamic_range: media('(dynamic-range: high)') ? 'high' : 'standard',
    language: navigator.language,
  };
}

function page(...children) {
  clear(app);
  app.append(el('h1', {}, t().title), ...children);
  const focus = app.querySelector('[data-autofocus]');
  if (focus) focus.focus();
}

function consent() {
  page(
    el('section', { class: 'panel' }, el('p', { id: 'consent-text' }, study.consent_text)),
    el('div', { class: 'row' },
      el('button', { class: 'primary', id: 'agree', type: 'button', 'data-autofocus': true, onclick: agree }, t().agree),
      el('button', { id: 'disagree', type: 'button', onclick: () => page(el('p', { id: 'declined' }, t().declined)) }, t().disagree)));
}

async function agree() {
  const search = new URLSearchParams(window.location.search);
  const params = {};
  for (const name of URL_PARAMS) if (search.has(name)) params[name] = search.get(name).slice(0, 200);
  try {
    await api('/api/session', { method: 'POST', body: { consent: true, params } });
    onboarding();
  } catch (e) { showError(app, e); }
}

function select(id, label, options) {
  return [el('label', { for: id }, label),
    el('select', { id, required: true }, el('option', { value: '' }, t().choose),
      ...options.map(([value, text]) => el('option', { value }, text)))];
}

function onboarding() {
  const languages = study.languages.map((code) => [code, LANGUAGE_NAMES[code] || code]);
  const form = el('form', { class: 'panel', id: 'profile' },
    el('h2', {}, t().about),
    ...select('language', t().language, languages),
    ...select('age_range', t().age, AGE_RANGES.map((a) => [a, a === '-10' ? '<10' : a === '70' ? '70+' : a])),
    ...select('gender', t().gender, Object.entries(t().genders)),
    el('fieldset', { id: 'colorblind' }, el('legend', {}, t().cvd),
      el('label', {}, el('input', { type: 'radio', name: 'colorblind', value: 'no', required: true }), ' ', t().no),
      el('label', {}, el('input', { type: 'radio', name: 'colorblind', value: 'yes' }), ' ', t().yes)),
    el('p', {}, el('button', { class: 'primary', type: 'submit', id: 'start' }, t().start)));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const value = (id) => form.querySelector(`#${id}`).value;
    const checked = form.querySelector('input[name="colorblind"]:checked');
    lang = value('language');
    try {
      const res = await api('/api/profile', { method: 'POST', body: {
        language: value('language'), age_range: value('age_range'), gender: value('gender'),
        colorblind: checked ? checked.value : '', metadata: screenMetadata() } });
      if (res.cvd_screen) await screen(); else await next();
    } catch (err) { showError(app, err); }
  });
  form.querySelector('#language').addEventListener('change', (e) => { if (STRINGS[e.target.value]) lang = e.target.value; });
  page(form);
  form.querySelector('#language').focus();
}

async function screen() {
  const { plates, choices } = await api('/api/screen');
  const answers = [];
  const show = (i) => {
    if (i === plates.length) {
      api('/api/screen', { method: 'POST', body: { answers } }).then(() => next(), showError);
      return;
    }
    const canvas = el('canvas', { width: 320, height: 320, class: 'plate', role: 'img', 'aria-label': t().screenHelp });
    const ctx = canvas.getContext('2d');
    for (const [x, y, r, R, G, B] of plates[i].dots) {
      ctx.fillStyle = `rgb(${R}, ${G}, ${B})`;
      ctx.beginPath();
      ctx.arc(160 + x * 155, 160 + y * 155, r * 155, 0, 2 * Math.PI);
      ctx.fill();
    }
    const pick = (c) => { answers.push(c === 'none' ? null : c); show(i + 1); };
    page(el('section', { class: 'panel', id: 'screen', 'data-plate': i },
      el('h2', {}, t().screen), el('p', {}, t().plate(i + 1, plates.length), ' — ', t().screenHelp), canvas,
      el('div', { class: 'row choices' }, choices.map((c, k) => el('button', {
        type: 'button', class: 'choice', 'data-choice': c, 'data-autofocus': k === 0, onclick: () => pick(c) },
      c === 'none' ? t().noNumber : c)))));
  };
  show(0);
}

async function next(item) {
  try {
    const current = item || await api('/api/next');
    if (current.done) return finish(current);
    play(current);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return consent();
    if (e instanceof ApiError && e.status === 409) return onboarding();
    showError(app, e);
  }
}

function play(item) {
  let picked = null;
  const status = el('p', { id: 'picked', class: 'muted', 'aria-live': 'polite' });
  const input = el('input', { type: 'text', id: 'coordinate', autocomplete: 'off', inputmode: 'text', maxlength: 4, size: 5,
    'aria-describedby': 'prompt', placeholder: 'C12' });
  const submit = el('button', { class: 'primary', type: 'submit', id: 'submit' }, t().submit);
  const form = el('form', { class: 'row answer', id: 'answer' }, el('label', { for: 'coordinate' }, t().coordinate), input, submit);
  const holder = el('div', { class: 'board-holder' });
  const heading = item.kind === 'attention'
    ? el('p', { class: 'word', id: 'word', 'data-kind': 'attention', 'data-index': item.index }, t().attention(item.cell))
    : el('p', { class: 'word', id: 'word', 'data-kind': 'word', 'data-index': item.index }, el('strong', {}, item.word),
      el('span', { class: 'muted' }, ` · ${t().category}: ${item.category}`));
  const progress = item.kind === 'attention' ? t().check(item.words) : t().item(item.word_number, item.words);
  page(el('p', { class: 'muted', id: 'progress' }, progress), heading,
    el('p', { id: 'prompt', class: 'muted' }, t().prompt), holder, form, status);
  const view = drawBoard(holder, board, {
    zoom: { label: t().zoom, close: t().closeZoom },
    onPick(cell) {
      picked = cell;
      input.value = cell;
      view.setMarks({ [cell]: '✓' });
      status.textContent = t().picked(cell);
      submit.focus();
    },
  });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const m = CELL.exec(input.value || picked || '');
    if (!m) { status.textContent = t().badCell; input.focus(); return; }
    const coordinate = `${m[1].toUpperCase()}${m[2]}`;
    submit.disabled = true;
    try {
      const res = await api('/api/answer', { method: 'POST', body: {
        index: item.index, clue_id: item.clue_id, coordinate, client_id: clientId() } });
      flushEvents();
      if (res.reveal) return reveal(view, form, status, coordinate, res);
      next(res);
    } catch (err) {
      submit.disabled = false;
      if (err instanceof ApiError && err.status === 409) return next();
      showError(app, err);
    }
  });
  view.focus();
}

function reveal(view, form, status, coordinate, res) {
  view.setHeat(res.reveal.counts);
  view.setMarks({ [coordinate]: '✓' });
  status.textContent = t().reveal(res.reveal.answers);
  status.id = 'reveal';
  const go = el('button', { class: 'primary', type: 'button', id: 'next', onclick: () => next(res) }, t().next);
  form.replaceWith(el('div', { class: 'row' }, go));
  go.focus();
}

function finish(done) {
  flushEvents();
  const parts = [el('p', { id: 'done' }, t().done)];
  if (done.code) parts.push(el('p', {}, t().code, ' ', el('strong', { id: 'code' }, done.code)));
  if (done.redirect) {
    parts.push(el('p', {}, el('a', { href: done.redirect, id: 'continue' }, t().back)), el('p', { class: 'muted' }, t().redirecting));
    setTimeout(() => window.location.assign(done.redirect), 1500);
  }
  page(el('section', { class: 'panel' }, ...parts));
}

(async () => {
  try {
    [study, board] = await Promise.all([api('/api/study'), loadBoard()]);
    const preferred = (navigator.language || 'en').slice(0, 2);
    lang = study.languages.includes(preferred) ? preferred : study.languages[0];
    setInterval(flushEvents, 5000);
    // A returning participant (a reload) carries on where they were.
    const me = await api('/api/me');
    if (!me.session) return consent();
    if (!me.onboarded) return onboarding();
    lang = me.language;
    next();
  } catch (e) {
    showError(app, e);
  }
})();
