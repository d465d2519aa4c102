import { createHash } from 'node:crypto';
import type { Exchange } from '../core/exchange.ts';
import { byWeight, isOutcome, OUTCOMES } from '../core/outcomes.ts';
import { clip, scrub } from '../core/redact.ts';
import { AREAS, TAGS } from '../suites/catalogue/clauses.ts';
import { SCRIPT } from './html/script.ts';
import { STYLE } from './html/style.ts';
import { exposureFindings, type ResultsClause, type ResultsDocument, type ResultsTest } from './results-json.ts';

interface OutcomeInfo {
  label: string;
  meaning: string;
  problem: boolean;
  className: string;
}

// Outcomes come from core/outcomes.ts; the two expectation statuses that older documents carry
// as outcome strings, and any outcome this report does not know, are shown here.
const EXPECTATION_AS_OUTCOME: Record<string, OutcomeInfo> = {
  'stale-expectation': {
    label: 'stale expectation',
    meaning: 'the expectations file no longer matches this result',
    problem: true,
    className: 'o-stale-expectation',
  },
  'expected-failure': { label: 'expected failure', meaning: 'fails as the expectations file says', problem: false, className: 'o-expected-failure' },
};
const ORDER = [...byWeight().filter((o) => OUTCOMES[o].problem), ...Object.keys(EXPECTATION_AS_OUTCOME), ...byWeight().filter((o) => !OUTCOMES[o].problem)];

/** Decision: bodies above this many characters are cut in the page; results.json keeps them whole. */
const BODY_LIMIT = 64 * 1024;

/**
 * Every piece of text from the document goes through here: scrubbed of registered secrets, then
 * escaped. Control characters other than tab and line breaks show as their Unicode pictures (␀, ␛),
 * C1 controls (which HTML forbids even as references) as \\xNN.
 */
function esc(value: unknown): string {
  return scrub(String(value ?? ''))
    .replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
    .replace(/[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]/g, (c) => String.fromCharCode(c === '\x7F' ? 0x2421 : 0x2400 + c.charCodeAt(0)))
    .replace(/[\x80-\x9F]/g, (c) => `\\x${c.charCodeAt(0).toString(16)}`);
}

function info(outcome: string): OutcomeInfo {
  if (isOutcome(outcome)) {
    const { label, meaning, problem, html } = OUTCOMES[outcome];
    return { label, meaning, problem, className: html.className };
  }
  return (
    (Object.hasOwn(EXPECTATION_AS_OUTCOME, outcome) ? EXPECTATION_AS_OUTCOME[outcome] : undefined) ?? {
      label: outcome,
      meaning: 'an outcome this report does not know',
      problem: true,
      className: 'o-other',
    }
  );
}

function outcomeClass(outcome: string): string {
  return info(outcome).className;
}

function badge(outcome: string): string {
  return `<span class="badge ${outcomeClass(outcome)}" title="${esc(info(outcome).meaning)}">${esc(info(outcome).label)}</span>`;
}

function anchor(id: string): string {
  return `clause-${id.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

function compact(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function timestamp(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function duration(startIso: string, endIso: string): string {
  const ms = Date.parse(endIso) - Date.parse(startIso);
  if (!Number.isFinite(ms) || ms < 0) return '';
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

function outcomesIn(doc: ResultsDocument): string[] {
  const seen = new Set<string>();
  for (const c of doc.clauses) {
    seen.add(String(c.outcome));
    for (const t of c.tests) seen.add(String(t.outcome));
  }
  const unknown = [...seen].filter((o) => !ORDER.includes(o));
  return [...ORDER.filter((o) => seen.has(o)), ...unknown];
}

function clauseCounts(doc: ResultsDocument): Map<string, number> {
  const counts = new Map<string, number>();
  for (const c of doc.clauses) counts.set(String(c.outcome), (counts.get(String(c.outcome)) ?? 0) + 1);
  return counts;
}

const EXPECTATION_STATUS: Record<string, { label: string; meaning: string; cls: string; mark: string }> = {
  'expected-failure': {
    label: 'expected failure',
    meaning: 'a known deviation listed in the expectations file; it does not fail the run',
    cls: 'o-expected-failure',
    mark: 'x-expected',
  },
  'stale-expectation': {
    label: 'stale expectation',
    meaning: 'listed as a known deviation, but it passed: remove the entry (fails the run under --strict)',
    cls: 'o-stale-expectation',
    mark: 'x-stale',
  },
  unconfirmed: {
    label: 'unconfirmed',
    meaning: 'listed as a known deviation; this run could neither confirm nor refute it',
    cls: 'o-other',
    mark: 'x-unconfirmed',
  },
};

function statusInfo(status: string): { label: string; meaning: string; cls: string; mark: string } {
  return EXPECTATION_STATUS[status] ?? { label: status, meaning: 'an expectation status this report does not know', cls: 'o-other', mark: 'x-unconfirmed' };
}

/** The expectation of a clause; an `expected-failure` / `stale-expectation` outcome string counts as one too. */
function expectationOf(c: ResultsClause): { status: string; reason: string } | undefined {
  if (c.expectation) return { status: String(c.expectation.status), reason: c.expectation.reason };
  const o = String(c.outcome);
  return Object.hasOwn(EXPECTATION_AS_OUTCOME, o) ? { status: o, reason: '' } : undefined;
}

function expectationBadge(status: string): string {
  const s = statusInfo(status);
  return `<span class="badge ${s.cls}" title="${esc(s.meaning)}">${esc(s.label)}</span>`;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function summary(doc: ResultsDocument): string {
  const label = String(doc.verdict.label);
  const verdictClass = `v-${label.toLowerCase().replace(/[^a-z]+/g, '-')}`;
  const counts = clauseCounts(doc);
  const testCount = doc.clauses.reduce((n, c) => n + c.tests.length, 0);
  const took = Number.isFinite(doc.durationMs) ? `${(doc.durationMs / 1000).toFixed(1)} s` : duration(doc.startedAt, doc.finishedAt);
  const facts: [string, string][] = [
    ['Target', doc.target.url],
    ['Target version answer', compact(doc.target.version) || 'not recorded'],
    ['pmv6', doc.pmv6],
    ['Run ID', doc.runId],
    ['Seed', String(doc.seed)],
    ['Started', timestamp(doc.startedAt)],
    ['Finished', `${timestamp(doc.finishedAt)}${took ? ` (${took})` : ''}`],
    ['Exit code', `${doc.verdict.exitCode}${doc.verdict.strict ? ' (--strict)' : ''}`],
  ];
  const cfg = doc.config;
  const config: [string, string][] = [
    ['user', cfg.user],
    ['password', cfg.password],
    ['HMAC keys', cfg.hmac ? 'given (redacted)' : 'none'],
    ['control protocol', cfg.control ? cfg.control.url : 'none'],
    ['read-only', cfg.readOnly ? 'yes' : 'no'],
    ['timeout', `${cfg.timeoutMs} ms`],
    ['strict', doc.verdict.strict ? 'yes' : 'no'],
    ...(cfg.selection?.only.length ? [['--only', cfg.selection.only.join(', ')] as [string, string]] : []),
    ...(cfg.selection?.skip.length ? [['--skip', cfg.selection.skip.join(', ')] as [string, string]] : []),
    ...(doc.hostname ? [['run on host', doc.hostname] as [string, string]] : []),
  ];
  const known = new Set(doc.verdict.expectedFailures ?? []);
  const attention = doc.clauses.filter((c) => info(String(c.outcome)).problem && !known.has(c.id)).length;
  const line = [
    `${counts.get('pass') ?? 0} of ${doc.clauses.length} clauses passed`,
    ...(counts.get('info') ? [`${counts.get('info')} INFO clauses ${OUTCOMES.info.label}`] : []),
    `${attention} need attention`,
    ...(known.size ? [plural(known.size, 'known deviation')] : []),
    ...(doc.verdict.staleExpectations?.length ? [plural(doc.verdict.staleExpectations.length, 'stale expectation')] : []),
    plural(testCount, 'test'),
  ];
  return `<header class="top"><div class="wrap">
<p class="brand">pmv6 conformance report · Password Manager Service REST API v6</p>
<div class="verdict ${verdictClass}" id="verdict">${esc(label)}</div>
<p class="verdict-line">${line.map(esc).join(' · ')}</p>
<dl class="facts">${facts.map(([k, v]) => `<div><dt>${esc(k)}</dt><dd>${esc(v)}</dd></div>`).join('')}</dl>
<details class="config"><summary>Run configuration</summary><dl>${config.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl></details>
</div></header>`;
}

function legend(doc: ResultsDocument): string {
  const counts = clauseCounts(doc);
  const items = outcomesIn(doc).map(
    (o) => `<li title="${esc(info(o).meaning)}"><span class="swatch ${outcomeClass(o)}"></span>${esc(info(o).label)} <b>${counts.get(o) ?? 0}</b></li>`,
  );
  const statuses = new Map<string, number>();
  for (const c of doc.clauses) {
    const e = expectationOf(c);
    if (e) statuses.set(e.status, (statuses.get(e.status) ?? 0) + 1);
  }
  for (const [status, n] of statuses) {
    const s = statusInfo(status);
    items.push(`<li title="${esc(s.meaning)}"><span class="swatch o-other ${s.mark}"></span>${esc(s.label)} <b>${n}</b></li>`);
  }
  return `<ul class="counts" id="legend" aria-label="Clauses by outcome">${items.join('')}</ul>`;
}

function matrix(doc: ResultsDocument): string {
  const byArea = new Map<string, ResultsClause[]>();
  for (const c of doc.clauses) byArea.set(c.area, [...(byArea.get(c.area) ?? []), c]);
  const rows = [...byArea].map(([area, clauses]) => {
    const name = (AREAS as Record<string, string>)[area];
    const cells = clauses.map((c) => {
      const o = String(c.outcome);
      const e = expectationOf(c);
      const mark = e ? ` ${statusInfo(e.status).mark}` : '';
      const title = `${c.id} ${c.level}: ${info(o).label}${e ? ` (${statusInfo(e.status).label})` : ''}`;
      return `<a class="cell ${outcomeClass(o)}${mark}" data-outcome="${esc(o)}" href="#${anchor(c.id)}" title="${esc(title)}">${esc(c.id)}</a>`;
    });
    return `<div class="area"><div class="area-name">${esc(area)}${name ? ` <span>${esc(name)}</span>` : ''}</div><div class="cells">${cells.join('')}</div></div>`;
  });
  return `<section class="wrap" id="matrix"><h2>Clauses by area</h2>${legend(doc)}<div class="matrix">${rows.join('')}</div></section>`;
}

function expectations(doc: ResultsDocument): string {
  const listed = doc.clauses.flatMap((c) => {
    const e = expectationOf(c);
    return e ? [{ c, e }] : [];
  });
  if (listed.length === 0) return '';
  const rows = listed.map(
    ({ c, e }) =>
      `<tr><td><a class="mono" href="#${anchor(c.id)}">${esc(c.id)}</a></td><td>${esc(c.level)}</td><td>${badge(String(c.outcome))}</td><td class="exp-col">${expectationBadge(e.status)}</td><td>${esc(e.reason)}</td></tr>`,
  );
  return `<section class="wrap" id="expectations"><h2>Known deviations (expectations file)</h2>
<div class="table-box"><table class="exp-table"><thead><tr><th>Clause</th><th>Level</th><th>Outcome</th><th>Expectation</th><th>Reason</th></tr></thead><tbody>${rows.join('')}</tbody></table></div></section>`;
}

function cleanup(doc: ResultsDocument): string {
  if (!doc.cleanup) return '';
  const { deleted, leftovers } = doc.cleanup;
  const items = leftovers.map((l) => `<li><span class="mono">${esc(`${l.kind} ${l.id} ${l.name}`)}</span>: ${esc(l.reason)}</li>`);
  return `<section class="wrap" id="cleanup"><h2>Cleanup</h2><p>${esc(`${deleted} objects created by the run were deleted; ${leftovers.length} left over.`)} Cleanup is reported apart from the verdict.</p>${
    items.length ? `<ul class="leftovers">${items.join('')}</ul>` : ''
  }</section>`;
}

function filter(doc: ResultsDocument): string {
  const counts = clauseCounts(doc);
  const boxes = outcomesIn(doc)
    .filter((o) => counts.has(o))
    .map(
      (o) =>
        `<label><input type="checkbox" value="${esc(o)}" checked${info(o).problem ? ' data-problem' : ''}><span class="swatch ${outcomeClass(o)}"></span>${esc(info(o).label)}</label>`,
    );
  return `<div class="filter" id="filter"><fieldset><legend>Show</legend>${boxes.join('')}</fieldset>
<div class="presets"><button type="button" data-preset="all">All</button><button type="button" data-preset="problems">Problems only</button></div>
<span class="shown"><span id="shown">${doc.clauses.length}</span> of ${doc.clauses.length} clauses</span></div>`;
}

function truncated(text: string): string {
  if (text.length <= BODY_LIMIT) return esc(text);
  return `${esc(clip(text, BODY_LIMIT))}<span class="cut">… (cut at ${BODY_LIMIT} characters of ${text.length}; results.json has it whole)</span>`;
}

function headerLines(headers: Record<string, string | string[]>): string {
  const lines: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    for (const one of Array.isArray(value) ? value : [value]) lines.push(`<span class="hn">${esc(name)}</span>: ${esc(one)}`);
  }
  return lines.join('\n');
}

function message(first: string, headers: string, notes: string[], body: string | undefined): string {
  const lines = [first, ...(headers ? [headers] : []), ...notes];
  if (body !== undefined && body !== '') lines.push('', truncated(body));
  return lines.join('\n');
}

function exchangeBlock(ex: Exchange): string {
  const req = ex.request;
  const reqText = message(`<span class="rl request-line">${esc(`${req.method} ${req.url}`)}</span>`, headerLines(req.headers), [], req.body);
  let resHead = 'Response';
  let resText = `<span class="rl">no response</span>\n${esc(ex.error ?? 'unknown transport error')}`;
  if (ex.response) {
    const res = ex.response;
    resHead = `Response · ${res.status} · ${ex.durationMs} ms`;
    const notes = res.validUtf8 === false ? ['<span class="cut">(body is not valid UTF-8; invalid bytes shown as U+FFFD)</span>'] : [];
    resText = message(`<span class="rl status-line">HTTP ${esc(res.status)}</span>`, headerLines(res.headers), notes, res.body);
  }
  return `<div class="exchange"><div class="request"><div class="box-h">Request</div><pre>${reqText}</pre></div><div class="response"><div class="box-h">${esc(resHead)}</div><pre>${resText}</pre></div></div>`;
}

function failureBlock(t: ResultsTest, key: string, open: boolean): string {
  const f = t.failure;
  if (!f) return '';
  const kind = { violation: 'Violation', setup: 'Setup failure', harness: 'Harness error' }[f.kind] ?? String(f.kind);
  const parts: string[] = [];
  if (f.expected !== undefined || f.actual !== undefined) {
    parts.push(
      `<dl class="ea"><dt>expected</dt><dd class="expected"><pre>${esc(f.expected ?? '')}</pre></dd><dt>actual</dt><dd class="actual"><pre>${esc(f.actual ?? '')}</pre></dd></dl>`,
    );
  } else {
    parts.push(`<pre class="message">${truncated(f.message)}</pre>`);
  }
  if (f.exchange) parts.push(exchangeBlock(f.exchange));
  if (f.curl) {
    const id = `curl-${key}`;
    parts.push(
      `<div class="curl"><div class="box-h">Reproduce<button type="button" class="copy" data-target="${id}" hidden>Copy</button></div><pre id="${id}">${esc(f.curl)}</pre></div>`,
    );
  }
  return `<details class="failure"${open ? ' open' : ''}><summary>${esc(kind)}</summary>${parts.join('')}</details>`;
}

function testItem(t: ResultsTest, key: string, open: boolean): string {
  const o = String(t.outcome);
  const observed = t.observed
    ? `<div class="observations"><div class="box-h">Observed</div><pre>${esc(JSON.stringify(t.observed, null, 2))}</pre></div>`
    : o === 'info'
      ? '<p class="note">Observed: nothing recorded; the test ran to its end.</p>'
      : '';
  const note = t.note ? `<p class="note">${esc(t.note)}</p>` : '';
  return `<li class="test ${outcomeClass(o)}" data-outcome="${esc(o)}"><div class="test-h">${badge(o)}<span class="t-title">${esc(t.title)}</span><span class="t-meta mono">${esc(t.file)} · ${esc(t.durationMs)} ms</span></div>${note}${observed}${failureBlock(t, key, open)}</li>`;
}

function clauseCard(c: ResultsClause, index: number): string {
  const o = String(c.outcome);
  const e = expectationOf(c);
  const open = info(o).problem;
  const tests = c.tests.length
    ? `<ul class="tests">${c.tests.map((t, i) => testItem(t, `${index}-${i}`, open)).join('')}</ul>`
    : '<p class="note">No test ran for this clause.</p>';
  const facts = [
    ...(c.dependsOn?.length ? [`depends on ${c.dependsOn.map((d) => `<a class="mono" href="#${anchor(d)}">${esc(d)}</a>`).join(', ')}`] : []),
    ...(c.needsControl ? ['needs the control protocol'] : []),
  ];
  return `<article class="clause ${outcomeClass(o)}" id="${anchor(c.id)}" data-outcome="${esc(o)}">
<div class="clause-h"><a class="clause-id" href="#${anchor(c.id)}">${esc(c.id)}</a><span class="level l-${esc(String(c.level).toLowerCase())}">${esc(c.level)}</span>${badge(o)}${e ? expectationBadge(e.status) : ''}<span class="behaviour">${esc(c.behaviour ?? '')}</span><a class="up" href="#matrix">matrix ↑</a></div>
<blockquote class="quote">${esc(c.quote)}<footer>${esc(c.section)}</footer></blockquote>
${e ? `<p class="expectation"><b>Known deviation:</b> ${esc(e.reason || statusInfo(e.status).meaning)}</p>` : ''}
${c.note ? `<p class="note">${esc(c.note)}</p>` : ''}
${facts.length ? `<p class="clause-facts">${facts.join(' · ')}</p>` : ''}
${tests}
</article>`;
}

function harnessErrors(doc: ResultsDocument): string {
  if (doc.harnessErrors.length === 0) return '';
  return `<section class="wrap harness-errors" id="harness-errors"><h2>Harness errors outside any test</h2>${doc.harnessErrors
    .map((e) => `<pre class="message">${esc(e)}</pre>`)
    .join('')}</section>`;
}

function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** Every report opens with cross-user exposure of personal data, whatever its level. */
function exposure(doc: ResultsDocument): string {
  const found = exposureFindings(doc.clauses);
  if (found.length === 0) return '';
  return `<section class="wrap harness-errors" id="exposure"><h2>${esc(`${TAGS.exposure} (${found.length})`)}</h2><p>${esc("One user's personal data in sight of another:")}</p><ul>${found
    .map((c) => `<li><a class="mono" href="#${anchor(c.id)}">${esc(c.id)}</a> ${badge(String(c.outcome))} ${esc(c.behaviour)}</li>`)
    .join('')}</ul></section>`;
}

/**
 * One self-contained page: inline CSS and JS, no network. Decision: a Content-Security-Policy
 * allows only this page's own style and script by hash, so even text that escaped escaping could
 * neither run nor load anything.
 */
export function renderHtml(doc: ResultsDocument): string {
  const csp = [
    "default-src 'none'",
    `style-src ${cspHash(STYLE)}`,
    `script-src ${cspHash(SCRIPT)}`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  const title = `pmv6 · ${doc.verdict.label} · ${doc.target.url}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="referrer" content="no-referrer">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${summary(doc)}
<main>
${exposure(doc)}
${matrix(doc)}
${expectations(doc)}
${harnessErrors(doc)}
${cleanup(doc)}
<section class="wrap" id="clauses"><h2>Clauses</h2>
${filter(doc)}
${doc.clauses.map((c, i) => clauseCard(c, i)).join('\n')}
</section>
</main>
<footer class="wrap page-foot">${esc(`format ${doc.format} · pmv6 ${doc.pmv6} · run ${doc.runId} · seed ${doc.seed}`)} · secrets are redacted</footer>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
