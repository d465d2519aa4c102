// What a k6 instance leaves behind at its end (handleSummary): a compact text summary of k6's own
// metrics, one line per threshold, and the whole record as ONE JSON line on stdout (it outlives a
// runner pod in its log: `kubectl logs`), plus a file named per instance. load/operator/merge.ts
// reads either and merges the instances into one verdict.
// Decision: k6 v0.48 has no built-in text summary once handleSummary is defined, and its jslib
// (`textSummary`) is a remote import that an offline runner cannot load; this writes its own.
// Plain JS in the syntax k6 v0.48 accepts (see ./iterations.js).

import exec from 'k6/execution';

/** The marker of the JSON line, its first key: `{"pmv6":"k6-summary",…}`. */
export const SUMMARY_MARK = 'k6-summary';

/**
 * Which instance this is: the k6-operator tags each runner `instance_id=N` (1…parallelism) and
 * gives it `--execution-segment`; a lone run has neither.
 * @returns {{ id: string, instance: string, segment: string, sequence: string }}
 */
export function instanceOf() {
  /** @type {any} */
  const o = exec.test.options;
  const tags = o && o.tags ? o.tags : {};
  const instance = tags.instance_id ? String(tags.instance_id) : '';
  const segment = o && o.executionSegment ? String(o.executionSegment) : '';
  const sequence = o && o.executionSegmentSequence ? String(o.executionSegmentSequence) : '';
  let id = '';
  if (instance !== '') id = `instance-${instance}`;
  else if (segment !== '') id = `segment-${segment.replace(/\//g, '_').replace(/:/g, '-')}`;
  return { id: id.replace(/[^A-Za-z0-9_.-]/g, '_'), instance: instance, segment: segment, sequence: sequence };
}

/**
 * The summary file: PMV6_SUMMARY (`{id}` replaced by the instance), else
 * `<PMV6_SUMMARY_DIR or .>/summary-<scenario>[-<instance or segment>].json`: instances never
 * share a name.
 * @param {string} scenario @param {string} id
 */
export function summaryFile(scenario, id) {
  const given = __ENV['PMV6_SUMMARY'];
  if (given) return given.replace(/\{id\}/g, id || 'all');
  const dir = (__ENV['PMV6_SUMMARY_DIR'] || '.').replace(/\/+$/, '');
  return `${dir}/summary-${scenario}${id ? `-${id}` : ''}.json`;
}

/** @param {number} ms */
function duration(ms) {
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)}s`;
  if (ms >= 1) return `${ms.toFixed(2)}ms`;
  return `${(ms * 1000).toFixed(0)}µs`;
}

/** @param {string} name */
function isTime(name) {
  return /^(http_req_|iteration_duration)/.test(name) && !/^http_req_failed/.test(name);
}

/**
 * k6's metrics as text: one line each, in name order (trends with their unit, counters with their
 * rate per second, rates as a share with passes and fails), then the checks.
 * @param {any} data
 */
export function textSummary(data) {
  const metrics = data && data.metrics ? data.metrics : {};
  const names = Object.keys(metrics).sort();
  let width = 0;
  for (let i = 0; i < names.length; i++) width = Math.max(width, names[i].length);
  const lines = [];
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    const m = metrics[name];
    const v = m.values || {};
    let text = '';
    if (m.type === 'trend') {
      const parts = [];
      const stats = data.options && data.options.summaryTrendStats ? data.options.summaryTrendStats : Object.keys(v);
      for (let k = 0; k < stats.length; k++) {
        const stat = stats[k];
        if (typeof v[stat] === 'number') parts.push(`${stat}=${isTime(name) ? duration(v[stat]) : String(Math.round(v[stat] * 100) / 100)}`);
      }
      text = parts.join(' ');
    } else if (m.type === 'counter') text = `${v.count} ${(v.rate || 0).toFixed(2)}/s`;
    else if (m.type === 'rate') text = `${((v.rate || 0) * 100).toFixed(2)}% ✓ ${v.passes} ✗ ${v.fails}`;
    else text = `${v.value} min=${v.min} max=${v.max}`;
    let pad = '';
    for (let k = name.length; k < width; k++) pad += ' ';
    lines.push(`  ${name}${pad}  ${text}`);
  }
  const checks = data && data.root_group && data.root_group.checks ? data.root_group.checks : [];
  for (let i = 0; i < checks.length; i++) {
    const c = checks[i];
    lines.push(`  ${c.fails === 0 ? '✓' : '✗'} ${c.name} (${c.passes} passed, ${c.fails} failed)`);
  }
  return lines.join('\n');
}

/**
 * handleSummary's outputs: the record (scenario, instance, k6's summary data) to its file and as
 * one JSON line on stdout after the text summary and the threshold lines.
 * @param {string} scenario @param {any} data
 */
export function summaryOutputs(scenario, data) {
  const who = instanceOf();
  const record = Object.assign(
    { pmv6: SUMMARY_MARK, scenario: scenario, id: who.id, instance: who.instance, segment: who.segment, sequence: who.sequence },
    data,
  );
  const lines = [];
  const metrics = data && data.metrics ? data.metrics : {};
  for (const name of Object.keys(metrics)) {
    const th = metrics[name].thresholds;
    if (!th || /^http_reqs\{/.test(name)) continue;
    for (const expr of Object.keys(th)) lines.push(`${(th[expr].ok ? 'ok   ' : 'FAIL ') + name} ${expr}`);
  }
  /** @type {Record<string, string>} */
  const files = {};
  files[summaryFile(scenario, who.id)] = JSON.stringify(record, null, 2);
  const title = `${scenario}${who.id ? ` (${who.id})` : ''}`;
  files['stdout'] = `${title}\n${textSummary(data)}\n${lines.join('\n')}\n${JSON.stringify(record)}\n`;
  return files;
}
