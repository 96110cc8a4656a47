// The ACVA rating page (docs/serve.md "ACVA rating"): after consent, a rater sees one image at a time
// (the one with the fewest ratings so far) with the concept's rubric questions in Chinese or English,
// answers each on the judge's scale, and submits; then the next image comes.
import { api, clear, clientId, el, showConsent, showError } from './common.js';

const app = document.getElementById('app');
let study = null;
let language = 'en';

function page(...children) {
  clear(app);
  app.append(el('h1', {}, 'Rate images'), ...children);
}

function consent() {
  showConsent(page, study.rate_consent_text, next);
}

function languagePicker() {
  return el('label', { for: 'language' }, 'Questions in ',
    el('select', { id: 'language', onchange: (e) => { language = e.target.value; next(); } },
      el('option', { value: 'en', selected: language === 'en' }, 'English'),
      el('option', { value: 'zh', selected: language === 'zh' }, '中文')));
}

function question(q, i, scale) {
  const name = `q${i}`;
  return el('fieldset', { class: 'question', 'data-question': q.id },
    el('legend', {}, q.text),
    el('div', { class: 'row' }, ...scale.levels.map((level) => el('label', { class: 'level' },
      el('input', { type: 'radio', name, value: level, required: true }), String(level)))));
}

async function submit(event, form) {
  event.preventDefault();
  const answers = {};
  for (const [i, q] of form.questions.entries()) {
    const checked = app.querySelector(`input[name="q${i}"]:checked`);
    if (!checked) return showError(app, new Error('Answer every question.'));
    answers[q.id] = Number(checked.value);
  }
  try {
    await api('/api/acva/rating', { method: 'POST', body: { client_id: clientId(), image: form.image, language, answers } });
    await next();
  } catch (e) { showError(app, e); }
}

async function next() {
  const reply = await api(`/api/acva/next?language=${language}`);
  const progress = el('p', { id: 'progress', class: 'muted' }, `You have rated ${reply.progress.rated} of ${reply.progress.images} images.`);
  if (reply.done) return page(languagePicker(), progress, el('p', { id: 'done' }, 'Thank you! You have rated every image.'));
  const form = reply.form;
  const scale = form.scale;
  const node = el('form', { id: 'rating', 'data-image': form.image, 'data-language': form.language },
    el('p', {}, `Scale: ${scale.levels.join(', ')} — 0 = ${scale.low}, 1 = ${scale.high}.`),
    ...form.questions.map((q, i) => question(q, i, scale)),
    el('button', { type: 'submit', class: 'primary', id: 'submit' }, 'Submit'));
  node.addEventListener('submit', (e) => submit(e, form));
  page(languagePicker(), progress,
    el('div', { class: 'rate' },
      el('figure', { class: 'panel' }, el('img', { id: 'image', src: reply.image_url, alt: `Image ${form.image}` }),
        el('figcaption', {}, el('strong', {}, form.concept.word), ` (${form.concept.gloss})`)),
      el('div', { class: 'panel' }, node)));
}

(async () => {
  try {
    study = await api('/api/study');
    const me = await api('/api/me');
    if (!me.session) return consent();
    await next();
  } catch (e) {
    showError(app, e);
  }
})();
