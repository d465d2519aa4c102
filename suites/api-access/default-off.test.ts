import type { Exchange } from '../../core/exchange.ts';
import { expectResponse, violation } from '../harness/assert.ts';
import { withSettingsSnapshot } from '../harness/checks.ts';
import { clauseTest } from '../harness/clause-test.ts';
import { useSession } from '../harness/session.ts';

const s = useSession();

/** Status and message (the whole body when there is no message) of a reply. */
function signature(ex: Exchange): string {
  expectResponse(ex);
  const message = (ex.json as { message?: unknown } | null | undefined)?.message;
  return `status ${ex.response.status}, ${typeof message === 'string' ? `message ${JSON.stringify(message)}` : `body ${JSON.stringify(ex.response.body)}`}`;
}

// The control protocol's reset puts the settings back to the installation's defaults; every
// previous setting is restored afterwards. "Off" is recognised by the reply the installation
// gives once API access is switched off explicitly, so this check does not repeat ERR-01's
// wording. API access is on before the reset (the run's own settings, or switched on), so a
// reset that changes nothing fails. The explicit "off" is read after the default one, with the
// other settings at their defaults too (issue 38: one request less with the target held).
clauseTest('GEN-11', 'keep API access off in the default settings', async (t) => {
  await withSettingsSnapshot(s, async (control) => {
    if (!(await control.currentSettings()).api_enabled) await control.putSettings({ api_enabled: true });
    await control.reset();
    const after = await s.admin.get('/version.json');
    await control.putSettings({ api_enabled: false });
    const off = await s.admin.get('/version.json');
    expectResponse(off);
    if (off.response.status < 400 || off.response.status > 499) {
      t.unverifiable(`switching API access off did not refuse a request (status ${off.response.status}; see GEN-10)`);
    }
    if (signature(after) !== signature(off)) violation(after, `the reply given while API access is off: ${signature(off)}`, signature(after));
  });
});
