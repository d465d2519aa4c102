import { CHECKS, type CheckId, EXPECTATION_TEXT, slowHoldMs } from '../../clients/run/expectations.ts';
import type { Check, ClientRunResult, ScenarioResult } from '../../clients/run/run-client.ts';
import { SCENARIOS } from '../../clients/scenarios.ts';
import { clientPage, esc, verdictClass } from './html.ts';
import { clientRunLabel, sentStatus } from './run-text.ts';

// report.html of `pmv6 clients run`: one self-contained page in the style of the kit's report (its
// stylesheet, its matrix table, no script, nothing loaded): a matrix of scenarios × checks, then
// each scenario with its expectation, every failed check with the output lines it stands on, the
// requests with their status, and the command's last lines. Everything passes through esc (the
// harness's redaction, then HTML escaping).

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const anchor = (s: string) => `s-${s}`;

function cell(r: ScenarioResult, id: CheckId): string {
  const c = r.checks.find((x) => x.id === id);
  if (c === undefined) return `<td class="cell o-untested" title="${esc(`${CHECKS[id]}: not a check of this scenario`)}"></td>`;
  const o = c.held ? 'pass' : 'fail';
  return `<td class="cell o-${o}" title="${esc(c.detail ? `${c.what}: ${c.detail}` : c.what)}">${o}</td>`;
}

function checkBlock(c: Check): string {
  const lines = c.lines?.length
    ? `<div class="exchange"><div class="request"><div class="box-h">Its output, the lines this stands on</div><pre>${c.lines.map((l) => `${esc(String(l.n).padStart(4))}| ${esc(l.text)}`).join('\n')}</pre></div></div>`
    : '';
  return `<article class="clause o-fail" data-check="${esc(c.id)}">
<div class="clause-h"><span class="clause-id">${esc(CHECKS[c.id])}</span><span class="badge o-fail">fail</span><span class="behaviour">${esc(c.what)}</span></div>
${c.detail ? `<pre class="message">${esc(c.detail)}</pre>` : ''}${lines}</article>`;
}

function scenarioSection(r: ScenarioResult, deadlineMs: number): string {
  const how = r.hung ? `killed after ${seconds(r.ms)}` : `exit ${r.exitCode ?? r.signal} in ${seconds(r.ms)}`;
  const requests = r.sent.length
    ? `<div class="table-box"><table class="exp-table"><tr><th>#</th><th>request</th><th>status</th><th>ms</th></tr>
${r.sent.map((q, i) => `<tr><td>${i + 1}</td><td class="mono">${esc(`${q.method} ${q.target}`)}</td><td>${esc(sentStatus(q))}</td><td>${esc(q.ms ?? '')}</td></tr>`).join('\n')}</table></div>${r.requests > r.sent.length ? `<p class="note">${esc(r.requests)} requests in all; the first ${esc(r.sent.length)} are shown.</p>` : ''}`
    : '<p class="note">It sent no request.</p>';
  const findings = r.findings.length
    ? `<h3>Client-clause findings of the kit</h3><ul>${r.findings.map((f) => `<li><span class="mono">${esc(f.clause)}</span> ${esc(f.level)} on ${esc(`${f.method} ${f.target}`)}: expected ${esc(f.expected)}, actual ${esc(f.actual)}</li>`).join('')}</ul>`
    : '';
  return `<section class="wrap" id="${esc(anchor(r.scenario))}"><h2>${esc(r.scenario)} · expects ${esc(r.expectation)}</h2>
<p class="verdict-line"><span class="badge o-${r.held ? 'pass' : 'fail'}">${r.held ? 'as expected' : 'not as expected'}</span> ${esc(`${how}, ${r.requests} request${r.requests === 1 ? '' : 's'}`)}</p>
<p class="note">${esc(`The kit: ${r.scenario === 'slow' ? `every request is answered after ${seconds(slowHoldMs(deadlineMs))}, longer than a request may be held` : SCENARIOS[r.scenario]}. The command ${EXPECTATION_TEXT[r.expectation]}.`)}</p>
${r.checks
  .filter((c) => !c.held)
  .map(checkBlock)
  .join('\n')}
${findings}<h3>Its requests</h3>
${requests}
<details class="failure"${r.held ? '' : ' open'}><summary>${esc(`Its output: the last ${r.output.length} of ${r.outputLines} lines (redacted)`)}</summary><pre>${r.output.map((l) => esc(l)).join('\n')}</pre></details>
</section>`;
}

export function renderClientRunHtml(result: ClientRunResult, pmv6Version: string): string {
  const label = clientRunLabel(result);
  const columns = (Object.keys(CHECKS) as CheckId[]).filter((id) => result.scenarios.some((r) => r.checks.some((c) => c.id === id)));
  const head = `<tr><th>scenario</th>${columns.map((id) => `<th scope="col">${esc(CHECKS[id])}</th>`).join('')}</tr>`;
  const rows = result.scenarios
    .map(
      (r) =>
        `<tr><th scope="row"><a href="#${esc(anchor(r.scenario))}">${esc(r.scenario)}</a><br><span class="mono">${esc(r.expectation)}</span></th>${columns.map((id) => cell(r, id)).join('')}</tr>`,
    )
    .join('\n');
  const held = result.scenarios.filter((r) => r.held).length;
  return clientPage(
    `pmv6 clients run · ${label} · ${result.command}`,
    `<header class="top"><div class="wrap">
<p class="brand">pmv6 clients run</p>
<div class="verdict ${verdictClass(label)}">${esc(label)}</div>
<p class="verdict-line">${esc(`${held} of ${result.scenarios.length} scenarios as expected · exit code ${result.exitCode}`)}</p>
<dl class="facts"><div><dt>command</dt><dd class="mono">${esc(result.command)}</dd></div><div><dt>kit</dt><dd class="mono">${esc(result.base)}</dd></div><div><dt>a request may be held</dt><dd>${esc(seconds(result.deadlineMs))}</dd></div><div><dt>a run may take</dt><dd>${esc(seconds(result.maxMs))}</dd></div></dl>
</div></header>
<main>
<section class="wrap" id="matrix"><h2>Scenarios × checks</h2>
<div class="client-matrix-wrap"><table class="client-matrix">${head}
${rows}</table></div></section>
${result.kitErrors.length ? `<section class="wrap"><h2>Kit errors (never the client's)</h2>${result.kitErrors.map((e) => `<pre class="message">${esc(e)}</pre>`).join('')}</section>` : ''}
${result.scenarios.map((r) => scenarioSection(r, result.deadlineMs)).join('\n')}
</main>
<footer class="wrap page-foot">${esc(`format pmv6-client-run/1 · pmv6 ${pmv6Version}`)} · secrets are redacted</footer>`,
  );
}
