// The review console in a real browser, against the demo server .ci/browser starts. Most of
// the console's assertions are Rust tests that read its HTML (crates/console/tests); these
// check what only a browser shows: cookies kept and sent, forms submitted and redirected, print
// media, and accessibility as axe-core measures it.
import { test, expect } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const { BASE_URL, LINK, OWNER_TOKEN, RECRUITD, DATABASE_URL, DB_PATH, SHORT_BASE_URL } = process.env;
// This month and the months before it in the demo organization's zone (Asia/Seoul, UTC+9
// all year): only a month that has ended is signed off.
const monthsAgo = (n) => {
  const d = new Date(Date.now() + 9 * 3600 * 1000);
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() - n);
  return d.toISOString().slice(0, 7);
};
const MONTH = monthsAgo(0);
const PREVIOUS = monthsAgo(1);
const EARLIER = monthsAgo(2);

async function signInWithToken(page, base = BASE_URL) {
  await page.goto(`${base}/console/sign-in`);
  await page.getByLabel('API token').fill(OWNER_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/console\/overview/);
}

async function organization(request) {
  const me = await request.get(`${BASE_URL}/v1/me`, { headers: { Authorization: `Bearer ${OWNER_TOKEN}` } });
  expect(me.ok()).toBeTruthy();
  return (await me.json()).organization_id;
}

test('a one-time link signs in once', async ({ page, browser }) => {
  await page.goto(LINK);
  await page.getByRole('button', { name: 'Sign in with this link' }).click();
  await expect(page).toHaveURL(/\/console\/overview/);
  await expect(page.getByRole('heading', { level: 1 })).toContainText('Access review of');
  const other = await browser.newContext();
  const again = await other.newPage();
  await again.goto(LINK);
  await again.getByRole('button', { name: 'Sign in with this link' }).click();
  await expect(again.getByRole('alert')).toContainText('not valid');
  await other.close();
});

test("a pasted token signs in, and the overview's figures are the CLI's", async ({ page, request }) => {
  await signInWithToken(page);
  await page.goto(`/console/overview?month=${MONTH}`);
  const org = await organization(request);
  const cli = JSON.parse(execFileSync(RECRUITD, [
    '--database-url', DATABASE_URL, 'audit', 'review', '--month', MONTH, '--org', org, '--json',
  ], { env: { ...process.env, RUST_LOG: 'warn' } }).toString());
  // Counts are written as English writes them, digits grouped by three.
  const count = (n) => n.toLocaleString('en-US');
  await expect(page.locator('#accesses')).toHaveText(count(cli.accesses));
  await expect(page.locator('#accounts')).toHaveText(count(cli.accounts.length));
  await expect(page.locator('#downloads')).toHaveText(count(cli.downloads.length));
  await expect(page.locator('#time-zone')).toHaveText(cli.time_zone);
  await expect(page.locator('table.accounts tbody tr')).toHaveCount(cli.accounts.length);
});

test('a sorted view survives a reload from its URL', async ({ page }) => {
  await signInWithToken(page);
  await page.goto(`/console/overview?month=${MONTH}`);
  await page.getByRole('link', { name: 'Accesses', exact: true }).click();
  await expect(page).toHaveURL(/sort=accesses/);
  const url = page.url();
  const counts = async () => (await page.locator('table.accounts tbody tr td:nth-of-type(1)').allTextContents()).map(Number);
  const before = await counts();
  await page.reload();
  expect(page.url()).toBe(url);
  expect(await counts()).toEqual(before);
  await expect(page.locator('th[aria-sort="descending"]')).toContainText('Accesses');
  expect(before).toEqual([...before].sort((a, b) => b - a));
});

test('a filter survives a reload from its URL, and a value filters by itself', async ({ page }) => {
  await signInWithToken(page);
  await page.goto(`/console/entries?month=${MONTH}`);
  await page.getByLabel('Category').selectOption('DOWNLOAD');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page).toHaveURL(/activity_category=DOWNLOAD/);
  const categories = page.locator('table.entries tbody tr td:nth-of-type(3)');
  const shown = await categories.allTextContents();
  expect(shown.length, 'the demo month has downloads').toBeGreaterThan(0);
  expect(new Set(shown)).toEqual(new Set(['DOWNLOAD']));
  const url = page.url();
  await page.reload();
  expect(page.url()).toBe(url);
  await expect(page.getByLabel('Category')).toHaveValue('DOWNLOAD');
  expect(await categories.allTextContents()).toEqual(shown);
  const account = (await page.locator('table.entries tbody tr td:nth-of-type(2)').first().textContent()).trim();
  await page.locator('table.entries tbody tr td:nth-of-type(2) a').first().click();
  await expect(page).toHaveURL(new RegExp(`account_id=${account}`));
  await expect(page.getByLabel('Account')).toHaveValue(account);
  const accounts = await page.locator('table.entries tbody tr td:nth-of-type(2)').allTextContents();
  expect(new Set(accounts.map((a) => a.trim()))).toEqual(new Set([account]));
});

test('the filtered entries download as CSV', async ({ page }) => {
  await signInWithToken(page);
  await page.goto(`/console/entries?month=${MONTH}&activity_category=DOWNLOAD`);
  const rows = await page.locator('table.entries tbody tr').count();
  const ids = await page.locator('table.entries tbody tr').evaluateAll((trs) => trs.map((tr) => tr.id));
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'CSV' }).click(),
  ]);
  expect(download.suggestedFilename()).toMatch(new RegExp(`^privacy-audit-logs_Northwind-Labs_${MONTH}-01_${MONTH}-\\d\\d_activity-category-DOWNLOAD\\.csv$`));
  const text = readFileSync(await download.path(), 'utf8');
  expect(text.startsWith('\ufeff'), 'a UTF-8 byte-order mark, for spreadsheets').toBeTruthy();
  const lines = text.slice(1).trim().split('\r\n');
  expect(lines[0]).toBe('position,hash,id,access_time,account_id,ip_addresses,data_subject_type,data_subject_id,bulk_count,bulk_query,access_data,access_menu,access_menu_path,activity_category,purpose');
  // Every entry the filter matches, the page's (50 at most) among them.
  const exported = lines.slice(1).map((l) => l.split(',')[2]);
  const more = await page.getByRole('link', { name: 'Next page' }).count();
  if (more) expect(exported.length).toBeGreaterThan(rows);
  else expect(exported.length).toBe(rows);
  expect(ids.every((id) => exported.includes(id))).toBeTruthy();
});

test('a download is confirmed from its form', async ({ page }) => {
  await signInWithToken(page);
  await page.goto(`/console/downloads?month=${MONTH}`);
  // Downloads another owner decides on (the reviewer's own) have no form.
  const pending = page.locator('article.status-PENDING:has(form)');
  const count = await pending.count();
  expect(count, 'the demo month has downloads to confirm').toBeGreaterThan(0);
  const first = pending.first();
  const id = await first.getAttribute('id');
  await first.getByLabel('Reason confirmed').check();
  await first.getByLabel('Your reason, or the question to ask').fill('Payroll export for the audit.');
  await first.getByRole('button', { name: 'Record the decision' }).click();
  await expect(page).toHaveURL(new RegExp(`#${id}$`));
  await expect(page.locator(`[id="${id}"] dd.status`)).toHaveText('Reason confirmed');
  await expect(page.locator('article.status-PENDING:has(form)')).toHaveCount(count - 1);
});

test('a month that has ended is signed off, and its report prints without the console around it', async ({ page }) => {
  await signInWithToken(page);
  await page.goto('/console/sign-off');
  await expect(page.locator('.months [aria-current=page]')).toHaveText(PREVIOUS);
  await page.goto(`/console/sign-off?month=${MONTH}`);
  await expect(page.locator('.months [aria-current=page]')).toContainText('in progress');
  await expect(page.getByRole('button', { name: `Sign off ${MONTH}` })).toHaveCount(0);
  await page.goto(`/console/sign-off?month=${EARLIER}`);
  await page.getByLabel('Note').fill('Remaining downloads are asked about; see the decisions.');
  await page.getByRole('button', { name: `Sign off ${EARLIER}` }).click();
  await expect(page).toHaveURL(new RegExp(`/console/report\\?month=${EARLIER}$`));
  await expect(page.locator('#verification')).toContainText('Intact');
  await expect(page.locator('#note')).toHaveText('Remaining downloads are asked about; see the decisions.');
  await page.emulateMedia({ media: 'print' });
  await expect(page.locator('header.top')).toBeHidden();
  await expect(page.locator('#signed-by')).toBeVisible();
  await page.emulateMedia({ media: 'screen' });
  await page.goto(`/console/sign-off?month=${EARLIER}`);
  await expect(page.getByRole('status')).toContainText('signed off');

  // Printed on A4, the report holds every column, the reviewer's name, the rules, the
  // organization and month on every page, and page numbers.
  await page.goto(`/console/report?month=${EARLIER}`);
  const me = await (await page.request.get(`${BASE_URL}/v1/me`, { headers: { Authorization: `Bearer ${OWNER_TOKEN}` } })).json();
  const organization = (await page.locator('#organization').textContent()).split(' org_')[0].trim();
  const pdf = join(mkdtempSync(join(tmpdir(), 'report-')), 'report.pdf');
  await page.emulateMedia({ media: 'print' });
  await page.pdf({ path: pdf, format: 'A4' });
  // In the order the text is drawn, so that a heading wrapped in its cell reads whole.
  const raw = execFileSync('pdftotext', ['-raw', pdf, '-']).toString();
  const pages = raw.split('\f').filter((p) => p.trim());
  const text = raw.replace(/\s+/g, ' ');
  expect(pages.length).toBeGreaterThan(1);
  pages.forEach((p, i) => {
    expect(p, `page ${i + 1}`).toContain(`${i + 1} / ${pages.length}`);
    expect(p, `page ${i + 1}`).toContain(`${organization} · monthly access review ${EARLIER}`);
  });
  for (const heading of ['When', 'Who', 'Entry', 'Whose data', 'Status', 'Purpose, explanation, decisions', 'By whom, when',
    'Outside work hours', 'The rules applied', 'Exports of the ledger', me.user.name]) {
    expect(text).toContain(heading);
  }
  expect(text).toMatch(/Bulk: flagged over [\d,]+ records/);
});

test('an expired session goes back to sign-in', async ({ page }) => {
  await signInWithToken(page, SHORT_BASE_URL);
  await page.waitForTimeout(3_000);
  await page.goto(`${SHORT_BASE_URL}/console/overview?month=${MONTH}`);
  await expect(page).toHaveURL(/\/console\/sign-in\?ended=1$/);
  await expect(page.getByRole('status')).toContainText('Your session ended');
});

test('a cross-site POST is refused', async ({ page }) => {
  await signInWithToken(page);
  await page.goto(`/console/sign-off?month=${PREVIOUS}`);
  const csrf = await page.locator('form[action="/console/sign-off"] input[name=csrf]').inputValue();
  const forged = await page.request.post(`${BASE_URL}/console/sign-off`, {
    headers: { Origin: 'https://evil.example' },
    form: { csrf, month: PREVIOUS, note: 'forged' },
  });
  expect(forged.status()).toBe(403);
  const tokenless = await page.request.post(`${BASE_URL}/console/sign-off`, {
    headers: { Origin: new URL(BASE_URL).origin },
    form: { month: PREVIOUS, note: 'forged' },
  });
  expect(tokenless.status()).toBe(403);
  await page.goto(`/console/sign-off?month=${PREVIOUS}`);
  await expect(page.getByRole('button', { name: `Sign off ${PREVIOUS}` })).toBeVisible();
});

// A stream made with the CLI, to a destination the demo server may not reach: the page shows
// it failing with its error, and pauses and resumes it through its form.
test('a log stream made with the CLI is shown failing, paused and resumed', async ({ page, request }) => {
  const me = await request.get(`${BASE_URL}/v1/me`, { headers: { Authorization: `Bearer ${OWNER_TOKEN}` } });
  const owner = (await me.json()).user.id;
  const dir = mkdtempSync(join(tmpdir(), 'stream-'));
  const settings = join(dir, 'siem.json');
  writeFileSync(settings, JSON.stringify({
    name: '보안관제 SIEM', destination: { type: 'https', url: 'https://127.0.0.1:9/in' }, after_position: 0,
  }));
  const made = JSON.parse(execFileSync(RECRUITD, [
    '--database-url', DATABASE_URL, '--outbound-allow', '127.0.0.1',
    'log-stream', 'create', '--user', owner, '--settings', settings, '--json',
  ], { env: { ...process.env, RUST_LOG: 'warn' } }).toString());
  await signInWithToken(page);
  const card = page.locator(`article[id="${made.id}"]`);
  // The demo server refuses the loopback destination on every attempt: the stream fails.
  await expect(async () => {
    await page.goto(`/console/log-streams?month=${MONTH}`);
    await expect(card.locator('dd.state')).toHaveText('Failing: retrying', { timeout: 1000 });
  }).toPass({ timeout: 20000 });
  await expect(card.locator('dd.error')).not.toBeEmpty();
  await card.getByRole('button', { name: 'Pause' }).click();
  await expect(page).toHaveURL(new RegExp(`/console/log-streams\\?month=${MONTH}#${made.id}$`));
  await expect(card.locator('dd.state')).toHaveText('Paused');
  await card.getByRole('button', { name: 'Resume' }).click();
  // Delivering again, until its next attempt fails.
  await expect(card.locator('dd.state')).not.toHaveText('Paused');
});

test('every page passes axe-core with no serious or critical violation', async ({ browser }) => {
  const signedIn = await browser.newContext();
  await signInWithToken(await signedIn.newPage());
  const cookies = await signedIn.cookies();
  await signedIn.close();
  // axe-core is injected as a script, which the console's CSP rightly forbids: the checking
  // context alone bypasses it.
  const context = await browser.newContext({ bypassCSP: true });
  await context.addCookies(cookies);
  const page = await context.newPage();
  for (const path of [
    `/console/overview?month=${MONTH}`, `/console/downloads?month=${MONTH}`,
    `/console/entries?month=${MONTH}`, `/console/integrity?month=${MONTH}`,
    `/console/sign-off?month=${PREVIOUS}`, `/console/sign-off?month=${MONTH}`,
    `/console/report?month=${MONTH}`, `/console/log-streams?month=${MONTH}`,
    '/console/no-such-page', '/console/sign-in',
  ]) {
    // In both languages, each chosen with the switch's parameter.
    for (const lang of ['en', 'ko']) {
      const url = `${path}${path.includes('?') ? '&' : '?'}lang=${lang}`;
      await page.goto(url);
      await expect(page.locator('html')).toHaveAttribute('lang', lang);
      await page.addScriptTag({ content: AXE });
      const violations = await page.evaluate(async () => (await window.axe.run(document)).violations);
      const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious.map((v) => `${v.id}: ${v.help}`), url).toEqual([]);
    }
  }
  await context.close();
});

test('every page reflows at 390 px and at 200 % zoom, with no page-wide horizontal scroll', async ({ browser }) => {
  const signedIn = await browser.newContext();
  await signInWithToken(await signedIn.newPage());
  const cookies = await signedIn.cookies();
  await signedIn.close();
  // 200 % zoom of a 1280 px window is a 640 px viewport of CSS pixels at twice the density.
  for (const viewport of [{ width: 390, height: 844, scale: 3 }, { width: 640, height: 400, scale: 2 }]) {
    const context = await browser.newContext({
      viewport: { width: viewport.width, height: viewport.height },
      deviceScaleFactor: viewport.scale,
    });
    await context.addCookies(cookies);
    const page = await context.newPage();
    for (const path of [
      `/console/overview?month=${PREVIOUS}`, `/console/downloads?month=${MONTH}`,
      `/console/entries?month=${MONTH}`, `/console/integrity?month=${MONTH}`,
      `/console/sign-off?month=${PREVIOUS}`, `/console/report?month=${EARLIER}`,
      `/console/log-streams?month=${MONTH}`, '/console/sign-in',
    ]) {
      for (const lang of ['en', 'ko']) {
        const url = `${path}${path.includes('?') ? '&' : '?'}lang=${lang}`;
        await page.goto(url);
        const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(wide, `${url} at ${viewport.width} px`).toBeLessThanOrEqual(0);
      }
    }
    await context.close();
  }
});

test('a ledger altered in the database shows on the integrity page and signs off as not intact', async ({ page, request }) => {
  const org = (await organization(request)).replace(/^org_/, '');
  execFileSync('sqlite3', [DB_PATH,
    'DROP TRIGGER IF EXISTS privacy_audit_logs_no_update; ' +
    `UPDATE privacy_audit_logs SET access_menu = 'forged' WHERE organization_id = X'${org}' AND position = (SELECT max(position) FROM privacy_audit_logs WHERE organization_id = X'${org}');`]);
  await signInWithToken(page);
  await page.goto(`/console/integrity?month=${PREVIOUS}`);
  await expect(page.locator('#verification')).toContainText('Not intact');
  await expect(page.locator('#findings')).toContainText('MODIFIED');
  await expect(page.locator('#chain-warning')).toContainText('fail verification');
  await page.goto(`/console/overview?month=${PREVIOUS}`);
  await expect(page.locator('#chain-warning')).toContainText('tell the operator');
  await page.goto(`/console/sign-off?month=${PREVIOUS}`);
  await expect(page.locator('#chain-warning')).toBeVisible();
  await page.getByRole('button', { name: `Sign off ${PREVIOUS}` }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'the chain\'s verification found a problem' })).toBeVisible();
  await page.getByLabel('Note').fill('An altered entry was found and reported.');
  await page.getByRole('button', { name: `Sign off ${PREVIOUS}` }).click();
  await expect(page).toHaveURL(/\/console\/report/);
  await expect(page.locator('#verification')).toContainText('Not intact');
});
