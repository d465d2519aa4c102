import { OUTCOME_ORDER, OUTCOMES } from '../../core/outcomes.ts';

// Outcome colours come from core/outcomes.ts; the expectation statuses have their own here, and
// any other outcome string gets the neutral `o-other`.
const OUTCOME_RULES = OUTCOME_ORDER.map((o) => `.${OUTCOMES[o].html.className} { --o: ${OUTCOMES[o].html.background}; --o-fg: ${OUTCOMES[o].html.ink}; }`).join(
  '\n',
);
const FAIL = OUTCOMES.fail.html.background;

export const STYLE = `
:root {
  --fg: #1f2328; --muted: #59636e; --bg: #ffffff; --panel: #f6f8fa; --line: #d1d9e0; --code-bg: #f6f8fa;
  --stale: #0550ae; --expected: #f5c2c7; --other: #d0d7de;
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; color: var(--fg); background: var(--bg); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; overflow-wrap: anywhere; }
.wrap { max-width: 1120px; margin: 0 auto; padding: 0 16px; }
a { color: #0969da; }
h2 { font-size: 1.15rem; margin: 2rem 0 .75rem; padding-bottom: .35rem; border-bottom: 1px solid var(--line); }
code, pre, .mono { font-family: var(--mono); font-size: 13px; }

.top { border-bottom: 1px solid var(--line); background: var(--panel); padding: 20px 0 16px; }
.brand { margin: 0; font-size: .85rem; font-weight: 600; letter-spacing: .04em; text-transform: uppercase; color: var(--muted); }
.verdict { display: inline-block; margin: .5rem 0 .25rem; padding: .3rem .9rem; border-radius: 6px; font-size: 1.6rem; font-weight: 700; letter-spacing: .02em; color: #fff; background: #57606a; }
.verdict.v-conformant { background: ${OUTCOMES.pass.html.background}; }
.verdict.v-conformant-with-known-deviations { background: ${OUTCOMES.warn.html.background}; }
.verdict.v-not-conformant { background: ${FAIL}; }
.verdict.v-inconclusive { background: ${OUTCOMES['harness-error'].html.background}; }
.verdict-line { margin: .25rem 0 1rem; color: var(--muted); }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 10px 24px; margin: 0; }
.facts div { min-width: 0; }
.facts dt { font-size: .75rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.facts dd { margin: 0; font-weight: 500; }
.config { margin-top: 12px; }
.config summary { cursor: pointer; color: var(--muted); font-size: .9rem; }
.config dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: .5rem 0 0; font-size: .9rem; }
.config dt { color: var(--muted); }
.config dd { margin: 0; }

.counts { display: flex; flex-wrap: wrap; gap: 8px; margin: 0 0 14px; padding: 0; list-style: none; }
.counts li { display: flex; align-items: center; gap: 8px; padding: 4px 10px 4px 6px; border: 1px solid var(--line); border-radius: 999px; background: var(--bg); font-size: .9rem; }
.counts b { font-variant-numeric: tabular-nums; }
.swatch { display: inline-block; width: 14px; height: 14px; border-radius: 3px; flex: none; border: 1px solid rgba(0,0,0,.15); }

${OUTCOME_RULES}
.o-stale-expectation { --o: var(--stale); --o-fg: #fff; }
.o-expected-failure { --o: var(--expected); --o-fg: #82071e; }
.o-other { --o: var(--other); --o-fg: #1f2328; }
.swatch, .badge, .cell { background: var(--o); color: var(--o-fg); }
.o-untested.swatch, .o-untested.badge, .o-untested.cell { border: 1px dashed #8c959f; }
.o-expected-failure.swatch, .o-expected-failure.badge, .o-expected-failure.cell { border: 1px solid ${FAIL}; }
.o-other.swatch, .o-other.badge, .o-other.cell { border: 1px solid #8c959f; }
.x-expected { background-image: repeating-linear-gradient(135deg, rgba(255,255,255,.55) 0 3px, transparent 3px 7px); }
.x-stale { box-shadow: inset 0 0 0 2px var(--stale); }
.x-unconfirmed { box-shadow: inset 0 0 0 2px #8c959f; }
.swatch.x-expected { background-color: ${FAIL}; }

.matrix { display: grid; gap: 6px; }
/* The client report's matrix is a table: a row per client, a column per client clause. */
.client-matrix-wrap { overflow-x: auto; }
.client-matrix { border-collapse: separate; border-spacing: 3px; }
.client-matrix th { font: 600 12px/1.3 var(--mono); text-align: center; padding: 3px 6px; white-space: nowrap; }
.client-matrix th[scope="row"] { text-align: left; font-family: inherit; white-space: normal; min-width: 12rem; }
.client-matrix td.cell { display: table-cell; min-width: 0; }
.area { display: grid; grid-template-columns: 230px 1fr; gap: 8px; align-items: start; padding: 6px 0; border-bottom: 1px solid #eef1f4; }
.area-name { font-size: .9rem; font-weight: 600; padding-top: 3px; }
.area-name span { color: var(--muted); font-weight: 400; }
.cells { display: flex; flex-wrap: wrap; gap: 4px; }
.cell { display: inline-block; min-width: 68px; padding: 3px 6px; border-radius: 4px; text-align: center; text-decoration: none; font: 600 12px/1.4 var(--mono); border: 1px solid transparent; }
.cell:hover, .cell:focus-visible { outline: 2px solid var(--fg); outline-offset: 1px; }
.cell.dim { opacity: .22; }

.filter { position: sticky; top: 0; z-index: 2; background: var(--bg); border-bottom: 1px solid var(--line); padding: 8px 16px; margin: 0 -16px 12px; display: flex; flex-wrap: wrap; gap: 6px 14px; align-items: center; }
.filter fieldset { border: 0; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 4px 12px; }
.filter legend { float: left; margin-right: 8px; font-weight: 600; font-size: .9rem; }
.filter label { display: inline-flex; align-items: center; gap: 5px; font-size: .9rem; cursor: pointer; white-space: nowrap; }
.filter .presets { display: flex; gap: 6px; }
.filter .shown { color: var(--muted); font-size: .85rem; margin-left: auto; }
button { font: inherit; font-size: .85rem; padding: 2px 10px; border: 1px solid var(--line); border-radius: 6px; background: var(--panel); color: var(--fg); cursor: pointer; }
button:hover { background: #eaeef2; }

.clause { border: 1px solid var(--line); border-left: 5px solid var(--o); border-radius: 6px; margin: 0 0 12px; padding: 10px 14px; scroll-margin-top: 72px; }
.clause[hidden]:target { display: block; }
.clause:target { box-shadow: 0 0 0 3px rgba(9,105,218,.35); }
.clause-h { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 10px; }
.clause-id { font: 700 15px var(--mono); color: var(--fg); text-decoration: none; }
.level { font-size: .72rem; font-weight: 700; letter-spacing: .05em; padding: 1px 6px; border-radius: 4px; border: 1px solid var(--fg); }
.level.l-should, .level.l-info { border-color: var(--muted); color: var(--muted); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: .78rem; font-weight: 600; white-space: nowrap; border: 1px solid transparent; }
.behaviour { color: var(--fg); font-size: .95rem; }
.up { margin-left: auto; font-size: .8rem; }
.expectation { font-size: .85rem; margin: .4rem 0 0; }
.expectation b { color: var(--muted); font-weight: 600; }
blockquote { margin: .6rem 0; padding: .35rem .8rem; border-left: 3px solid var(--line); color: #393f46; background: var(--panel); border-radius: 0 4px 4px 0; }
blockquote footer { margin-top: .15rem; color: var(--muted); font-size: .8rem; }
.clause-facts { margin: .3rem 0 0; color: var(--muted); font-size: .85rem; }
.table-box { max-width: 100%; overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; }
.exp-table { width: 100%; border-collapse: collapse; font-size: .9rem; }
.exp-table th, .exp-table td { text-align: left; padding: 6px 10px; border-bottom: 1px solid #eef1f4; vertical-align: top; }
.exp-table th { background: var(--panel); font-weight: 600; }
.exp-table tr:last-child td { border-bottom: 0; }
.leftovers { margin: .25rem 0; padding-left: 1.2rem; }
.tests { list-style: none; margin: .5rem 0 0; padding: 0; }
.test { padding: 6px 0; border-top: 1px solid #eef1f4; }
.test-h { display: grid; grid-template-columns: max-content 1fr max-content; gap: 4px 10px; align-items: baseline; }
.t-title { font-weight: 500; }
.t-meta { color: var(--muted); font-size: .8rem; text-align: right; }
.note { margin: .3rem 0 0; color: var(--muted); font-size: .9rem; }
.observations { margin: .35rem 0 0; }

.failure { margin: .5rem 0 .25rem; }
.failure > summary { cursor: pointer; font-size: .85rem; font-weight: 600; color: var(--muted); }
.ea { display: grid; grid-template-columns: max-content 1fr; gap: 4px 12px; margin: .5rem 0; }
.ea dt { font-weight: 600; font-size: .85rem; padding-top: 2px; }
.ea dd { margin: 0; min-width: 0; }
.ea dd pre { margin: 0; }
.ea .actual pre { border-color: rgba(207,34,46,.45); background: #fff5f5; }
.exchange { display: grid; grid-template-columns: 1fr 1fr; gap: 10px; margin: .5rem 0; }
.exchange > div, .curl { min-width: 0; }
.box-h { display: flex; align-items: center; justify-content: space-between; gap: 8px; font-size: .85rem; font-weight: 600; color: var(--muted); margin-bottom: 3px; }
pre { margin: 0; padding: 8px 10px; background: var(--code-bg); border: 1px solid var(--line); border-radius: 6px; white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-word; max-height: 26rem; overflow: auto; }
pre .rl { font-weight: 700; }
pre .hn { color: #6639ba; }
pre .cut { color: var(--muted); font-style: italic; }
pre.message { color: #393f46; }
.curl pre { max-height: 10rem; }
.offscreen { position: fixed; left: -9999px; top: 0; }
.harness-errors pre { margin-bottom: 8px; }
.page-foot { margin: 2rem auto; color: var(--muted); font-size: .8rem; }

@media (max-width: 760px) {
  body { font-size: 14px; }
  .wrap { padding: 0 12px; }
  .verdict { font-size: 1.3rem; }
  .facts { grid-template-columns: 1fr 1fr; gap: 8px 16px; }
  .top { padding: 14px 0 12px; }
  .area { grid-template-columns: 1fr; gap: 4px; }
  .cell { min-width: 60px; }
  .filter { position: static; margin: 0 0 12px; padding: 8px 0; }
  .filter .shown { margin-left: 0; }
  .exchange { grid-template-columns: 1fr; }
  .test-h { grid-template-columns: max-content 1fr; }
  .t-meta { grid-column: 1 / -1; text-align: left; }
  .behaviour { flex-basis: 100%; }
  .up { display: none; }
}
@media print {
  .filter, .copy, .up { display: none !important; }
  .clause[hidden] { display: block; }
  pre { max-height: none; }
  .clause { break-inside: avoid; }
}
`;
