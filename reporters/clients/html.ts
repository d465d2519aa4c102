import { createHash } from 'node:crypto';
import { scrub } from '../../core/redact.ts';
import { formatExchange } from '../../suites/harness/assert.ts';
import { STYLE } from '../html/style.ts';
import type { ClientResult, ClientResultsDocument } from './results.ts';

// report.html of a client run: one self-contained page (the server report's stylesheet, no
// script, nothing loaded), a matrix of clients × client clauses, then each client with its findings.

export function esc(value: unknown): string {
  return scrub(String(value ?? ''))
    .replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
    .replace(/[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]/g, (c) => String.fromCharCode(c === '\x7F' ? 0x2421 : 0x2400 + c.charCodeAt(0)))
    .replace(/[\x80-\x9F]/g, (c) => `\\x${c.charCodeAt(0).toString(16)}`);
}

const LABEL = { pass: 'pass', fail: 'fail', warn: 'warn', untested: 'not exercised' } as const;
const badge = (o: keyof typeof LABEL) => `<span class="badge o-${o}">${esc(LABEL[o])}</span>`;

function clientSection(doc: ClientResultsDocument, c: ClientResult): string {
  const bad = c.clauses.filter((x) => x.outcome === 'fail' || x.outcome === 'warn');
  const blocks = bad.map((x) => {
    const clause = doc.clauses.find((k) => k.id === x.id)!;
    const findings = c.findings
      .filter((f) => f.clause === x.id)
      .map(
        (f) => `<details class="failure" open><summary>#${esc(f.seq)} ${esc(f.method)} ${esc(f.target)} → ${esc(f.status ?? 'no answer')}</summary>
<dl class="ea"><dt>expected</dt><dd class="expected"><pre>${esc(f.expected)}</pre></dd><dt>actual</dt><dd class="actual"><pre>${esc(f.actual)}</pre></dd></dl>
<div class="exchange"><div class="request"><div class="box-h">Request</div><pre>${esc(formatExchange(f.exchange))}</pre></div></div>
<div class="curl"><div class="box-h">Reproduce</div><pre>${esc(f.curl)}</pre></div></details>`,
      )
      .join('\n');
    const more =
      x.findings > c.findings.filter((f) => f.clause === x.id).length ? `<p class="note">${esc(x.findings)} findings in all; the first are shown.</p>` : '';
    return `<article class="clause o-${x.outcome}" data-outcome="${x.outcome}">
<div class="clause-h"><span class="clause-id">${esc(clause.id)}</span><span class="level l-${esc(clause.level.toLowerCase())}">${esc(clause.level)}</span>${badge(x.outcome)}<span class="behaviour">${esc(clause.behaviour)}: ${esc(x.findings)} of ${esc(x.checked)} requests</span></div>
<blockquote class="quote">${esc(clause.quote)}<footer>${esc(clause.section)}</footer></blockquote>
${findings}${more}</article>`;
  });
  return `<section class="wrap" id="${esc(c.id)}"><h2>${esc(c.userAgent ?? '(no User-Agent)')} · ${esc(c.credentials)}</h2>
<p class="verdict-line">${badge(c.outcome)} ${esc(c.requests)} requests${c.probes ? `, ${esc(c.probes)} declared probes` : ''}, ${esc(c.firstAt)} – ${esc(c.lastAt)}</p>
${blocks.join('\n') || '<p class="note">No finding.</p>'}</section>`;
}

/** The class of the verdict banner. */
export function verdictClass(label: string): string {
  return label === 'CONFORMANT' ? 'v-conformant' : label === 'NOT CONFORMANT' ? 'v-not-conformant' : 'v-inconclusive';
}

/** A self-contained page of the client reports: the server report's stylesheet (allowed by its hash), no script, nothing loaded. */
export function clientPage(title: string, body: string): string {
  const csp = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE, 'utf8').digest('base64')}'; img-src 'none'; base-uri 'none'; form-action 'none'`;
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
${body}
</body>
</html>
`;
}

export function renderClientHtml(doc: ClientResultsDocument): string {
  const v = doc.verdict;
  const head = `<tr><th>client</th>${doc.clauses.map((c) => `<th scope="col" title="${esc(`${c.level} ${c.behaviour}`)}">${esc(c.id)}</th>`).join('')}</tr>`;
  const rows = doc.clients
    .map(
      (c) =>
        `<tr><th scope="row"><a href="#${esc(c.id)}">${esc(c.userAgent ?? '(no User-Agent)')}</a><br><span class="mono">${esc(c.credentials)}</span></th>${c.clauses.map((x) => `<td class="cell o-${x.outcome}" title="${esc(`${x.findings} of ${x.checked}`)}">${esc(x.findings || (x.outcome === 'untested' ? '' : '0'))}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return clientPage(
    `pmv6 clients · ${v.label} · ${doc.kit.url}`,
    `<header class="top"><div class="wrap">
<p class="brand">pmv6 client kit</p>
<div class="verdict ${verdictClass(v.label)}">${esc(v.label)}</div>
<p class="verdict-line">${esc(`${v.findings} findings from ${v.requests} requests of ${doc.clients.length} clients · exit code ${v.exitCode}`)}</p>
<dl class="facts"><div><dt>kit</dt><dd class="mono">${esc(doc.kit.url)}</dd></div><div><dt>started</dt><dd>${esc(doc.startedAt)}</dd></div><div><dt>HMAC window</dt><dd>±${esc(doc.kit.hmacWindowSeconds)} s</dd></div><div><dt>scenarios</dt><dd>${esc(doc.kit.scenarios.map((s) => s.scenario).join(' → ') || 'normal')}</dd></div></dl>
</div></header>
<main>
<section class="wrap" id="matrix"><h2>Clients × client clauses (findings)</h2>
<div class="client-matrix-wrap"><table class="client-matrix">${head}
${rows}</table></div></section>
${doc.kitErrors.length ? `<section class="wrap"><h2>Kit errors (never a client's finding)</h2>${doc.kitErrors.map((e) => `<pre class="message">${esc(e)}</pre>`).join('')}</section>` : ''}
${doc.clients.map((c) => clientSection(doc, c)).join('\n')}
</main>
<footer class="wrap page-foot">${esc(`format ${doc.format} · pmv6 ${doc.pmv6}`)} · secrets are redacted</footer>`,
  );
}
