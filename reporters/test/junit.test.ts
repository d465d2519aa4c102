import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { type Expectations, parseExpectations } from '../../core/expectations.ts';
import { clauseById } from '../../suites/catalogue/clauses.ts';
import type { RunResult } from '../../suites/runner/run-suites.ts';
import { verdictOf } from '../../suites/runner/verdict.ts';
import { renderJunit, writeJunit } from '../junit.ts';
import { resultsDocument } from '../results-json.ts';
import { fakeRun, secretForms, syntheticRun, withSecretTest } from './runs.ts';

const XSD = fileURLToPath(new URL('../schema/junit.xsd', import.meta.url));

/** Validates with xmllint; a missing xmllint fails the test (CI must have it), it never skips. */
function xmllint(file: string): void {
  try {
    execFileSync('xmllint', ['--noout', '--schema', XSD, file], { stdio: 'pipe' });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    if (err.code === 'ENOENT')
      throw new Error(
        'xmllint is not installed: install the Debian package libxml2-utils (apt-get install libxml2-utils); junit.xml cannot be checked against reporters/schema/junit.xsd without it',
      );
    throw new Error(`junit.xml does not validate against junit.xsd:\n${err.stderr?.toString() ?? err.message}`);
  }
}

async function junitOf(result: RunResult, strict = false, expectations?: Expectations): Promise<string> {
  const doc = resultsDocument(result, verdictOf(result, strict, expectations), { pmv6Version: '0.1.0' });
  const file = await writeJunit(await mkdtemp(join(tmpdir(), 'pmv6-junit-')), doc);
  xmllint(file);
  return readFile(file, 'utf8');
}

/** The <testcase …>…</testcase> (or self-closed) element of the test whose title starts with [ID]. */
function testcase(xml: string, id: string): string {
  const m = new RegExp(`<testcase name="\\[${id}\\][^"]*"[^>]*?(/>|>[\\s\\S]*?</testcase>)`).exec(xml);
  if (!m) throw new Error(`no testcase for ${id}`);
  return m[0];
}

const count = (xml: string, re: RegExp) => (xml.match(re) ?? []).length;

let fake: RunResult;
beforeAll(async () => {
  fake = withSecretTest(await fakeRun());
}, 60_000);

describe('junit.xml', () => {
  test('validates against the Jenkins/Surefire schema and maps every outcome', async () => {
    const xml = await junitOf(fake);
    expect(testcase(xml, 'PAG-03')).toMatch(/classname="pmv6\.PAG" time="\d+\.\d{3}" file="suites\/runner\/test\/fake\/outcomes\.fake-suite\.ts"\/>$/);
    const fail = testcase(xml, 'PAG-04');
    expect(fail).toMatch(
      /<failure message="expected status 201, actual status 200" type="MUST">\[PAG-04\] MUST [^\n]*"On the last page, rel next is not returned\."/,
    );
    expect(fail).toMatch(/&gt; POST http:\/\/127\.0\.0\.1:9\/index\.php\/api\/v6\/passwords\.json/);
    expect(fail).toMatch(/&lt; HTTP 200/);
    expect(fail).toMatch(/reproduce: curl /);
    expect(testcase(xml, 'ADDR-02')).toMatch(/<system-out>warn \(SHOULD, does not fail the run without --strict\): expected https, actual http/);
    expect(testcase(xml, 'ADDR-02')).not.toMatch(/<failure/);
    expect(testcase(xml, 'PAG-05')).toMatch(/<error message="TypeError[^"]*" type="harness-error">/);
    expect(testcase(xml, 'PAG-07')).toMatch(/<error message="[^"]*" type="setup-failed">/);
    expect(testcase(xml, 'SIZE-03')).toMatch(/type="setup-failed"/);
    expect(testcase(xml, 'ERR-04')).toMatch(/<skipped message="unverifiable: [^"]+"\/>/);
    expect(testcase(xml, 'AUTH-04')).toMatch(/<skipped message="unverifiable: depends on AUTH-03, which no test showed to hold"\/>/);
    expect(xml).toMatch(/<testsuite name="pmv6\.harness" tests="1" failures="0" errors="1"/);
  });

  test('counts, times, timestamp and hostname add up', async () => {
    const xml = await junitOf(fake);
    const root =
      /<testsuites name="pmv6 selftest" tests="(\d+)" failures="(\d+)" errors="(\d+)" skipped="(\d+)" time="[\d.]+" timestamp="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ">/.exec(
        xml,
      );
    expect(root).not.toBeNull();
    expect(Number(root![1])).toBe(count(xml, /<testcase /g));
    expect(Number(root![2])).toBe(count(xml, /<failure /g));
    expect(Number(root![3])).toBe(count(xml, /<error /g));
    expect(Number(root![4])).toBe(count(xml, /<skipped /g));
    for (const suite of xml.match(/<testsuite [^>]*>[\s\S]*?<\/testsuite>/g) ?? []) {
      expect(Number(/ tests="(\d+)"/.exec(suite)![1])).toBe(count(suite, /<testcase /g));
      expect(Number(/ failures="(\d+)"/.exec(suite)![1])).toBe(count(suite, /<failure /g));
      expect(suite).toMatch(/ hostname="[^"]+"/);
    }
  });

  test('a warned SHOULD is a failure only under --strict; a warned INFO never', async () => {
    const xml = await junitOf(fake, true);
    expect(testcase(xml, 'ADDR-02')).toMatch(/<failure message="expected https, actual http" type="SHOULD">/);
    const info = await junitOf(syntheticRun({ 'AUTH-03': 'warn' }), true);
    expect(testcase(info, 'AUTH-03')).not.toMatch(/<failure/);
    expect(testcase(info, 'AUTH-03')).toMatch(/<system-out>warn \(INFO, does not fail the run\)/);
  });

  test('known deviations: an expected failure is skipped with its text; a stale one fails only under --strict', async () => {
    const expectations = parseExpectations({ 'PAG-04': 'our server sends next on the last page', 'PAG-03': 'fixed since' }, clauseById);
    for (const strict of [false, true]) {
      const xml = await junitOf(fake, strict, expectations);
      const expected = testcase(xml, 'PAG-04');
      expect(expected).toMatch(/<skipped message="expected failure \(known deviation\) PAG-04: our server sends next on the last page"\/>/);
      expect(expected).toMatch(/<system-out>\[PAG-04\][\s\S]*expected: status 201/);
      expect(expected).not.toMatch(/<failure/);
      const stale = testcase(xml, 'PAG-03');
      if (strict)
        expect(stale).toMatch(
          /<failure message="stale expectation: PAG-03 listed as a known deviation but passed; remove the entry" type="stale-expectation">/,
        );
      else expect(stale).toMatch(/<system-out>stale expectation: PAG-03/);
    }
  });

  test('an observed INFO test is a passed testcase with status "observed" and what it recorded; never a failure', async () => {
    for (const strict of [false, true]) {
      const xml = await junitOf(fake, strict);
      const gen02 = testcase(xml, 'GEN-02');
      expect(gen02).toMatch(/^<testcase name="\[GEN-02\] INFO [^"]*" classname="pmv6\.GEN" time="[\d.]+" file="[^"]+" status="observed">/);
      expect(gen02).toContain(
        '<system-out>observed (INFO, implementation-defined; not a pass, does not fail the run):\nPATCH /passwords.json: 405\nreply: {"status":405,"type":"Method Not Allowed"}\n\n[GEN-02] INFO ',
      );
      expect(gen02).not.toMatch(/<failure|<error|<skipped/);
      // The MUST test that also cites the INFO clause RES-17 passed: a plain passed testcase.
      expect(testcase(xml, 'RES-16, RES-17')).toMatch(/file="[^"]+"\/>$/);
      expect(testcase(xml, 'RES-17')).toMatch(/status="observed">[\s\S]*password list item: \["id","name"\]/);
    }
    const quiet = await junitOf(syntheticRun({ 'AUTH-03': 'info' }));
    expect(testcase(quiet, 'AUTH-03')).toMatch(/status="observed">\n\s*<system-out>observed \(INFO, [^\n]*\nseen at AUTH-03: \{"status":405\}/);
    expect(quiet).toMatch(/<testsuites [^>]* failures="0" errors="0" skipped="0"/);
  });

  test('a disabled test is skipped', async () => {
    expect(testcase(await junitOf(syntheticRun({ 'PAG-03': 'disabled' })), 'PAG-03')).toMatch(/<skipped message="disabled: left out by --only\/--skip"\/>/);
  });

  test('escapes markup, keeps line breaks in attributes, shows characters XML 1.0 forbids, and holds no secret', async () => {
    const xml = await junitOf(fake);
    const hostile = testcase(xml, 'GEN-03');
    expect(hostile).toMatch(/message="expected JSON, actual &lt;html&gt; \\x07 «redacted:planted secret» \| \*bold\* `tick`"/);
    expect(hostile).toContain('&lt;b&gt;]]&gt;&lt;/b&gt; &amp; "q" \\x00\\x1b\\ufffe\\ud800');
    expect(xml).not.toMatch(/[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/);
    for (const s of secretForms()) expect(xml).not.toContain(s);
    const doc = resultsDocument(fake, verdictOf(fake), { pmv6Version: '0' });
    doc.harnessErrors = ['line one\nline "two"\t<x>'];
    expect(renderJunit(doc)).toContain('<error message="line one" type="harness-error">line one\nline "two"\t&lt;x&gt;</error>');
    const pag03 = doc.clauses.find((c) => c.id === 'PAG-03')!;
    pag03.tests[0] = { ...pag03.tests[0]!, title: 'a\nb\t"c"' };
    expect(renderJunit(doc)).toContain('name="a&#10;b&#9;&quot;c&quot;"');
  });
});
