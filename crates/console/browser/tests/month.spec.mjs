// A privacy officer's whole month, in a real browser, against the demo server .ci/browser
// starts with --smtp-url pointing at the SMTP server this test starts (nodemailer's
// smtp-server; messages read with mailparser): sign in by an e-mailed link, find exactly the
// two misbehaving accounts flagged with their rules, drill down from a flag, ask a downloader
// for an explanation, explain as that person through the e-mailed link, accept it, decide the
// rest, sign off the last complete month (the running and a future month refused), and print
// the report to PDF.
import { test, expect } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const { MAIL_BASE_URL, MAIL_OWNER_TOKEN, SMTP_PORT } = process.env;
const monthsAgo = (n) => {
  const d = new Date(Date.now() + 9 * 3600 * 1000);
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() - n);
  return d.toISOString().slice(0, 7);
};
const MONTH = monthsAgo(0);
const PREVIOUS = monthsAgo(1);
const NEXT = monthsAgo(-1);

// Every message the SMTP server takes, parsed.
const inbox = [];
let smtp;
test.beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      simpleParser(stream).then((mail) => { inbox.push(mail); callback(); }, callback);
    },
  });
  await new Promise((resolve) => smtp.listen(Number(SMTP_PORT), '127.0.0.1', resolve));
});
test.afterAll(async () => { await new Promise((resolve) => smtp.close(resolve)); });

// The next message to `address`, waited for.
async function mailTo(address) {
  let found;
  await expect.poll(() => {
    const i = inbox.findIndex((m) => m.to.value.some((t) => t.address === address));
    if (i >= 0) [found] = inbox.splice(i, 1);
    return Boolean(found);
  }, { timeout: 15_000, message: `an e-mail to ${address}` }).toBe(true);
  return found;
}

// The first link in a message's text that starts with the server's address.
const linkIn = (mail) => mail.text.split(/\s+/).find((w) => w.startsWith(MAIL_BASE_URL));

async function axeClean(page, what) {
  await page.addScriptTag({ content: AXE });
  const violations = await page.evaluate(async () => (await window.axe.run(document)).violations);
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious.map((v) => `${v.id}: ${v.help}`), what).toEqual([]);
}

test('the officer reviews the month: e-mailed sign-in, flags, an explanation by e-mail, sign-off, the printed report', async ({ browser, request }) => {
  test.setTimeout(240_000);
  const auth = { headers: { Authorization: `Bearer ${MAIL_OWNER_TOKEN}` } };
  const me = await (await request.get(`${MAIL_BASE_URL}/v1/me`, auth)).json();
  const review = await (await request.get(`${MAIL_BASE_URL}/v1/audit-logs/privacy/reviews/${PREVIOUS}`, auth)).json();

  // Signed in by a link e-mailed to the owner's address.
  const officer = await browser.newContext({ bypassCSP: true });
  const page = await officer.newPage();
  await page.goto(`${MAIL_BASE_URL}/console/sign-in`);
  await page.getByLabel('Your e-mail address').fill(me.user.email);
  await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
  await expect(page.getByRole('status')).toContainText('If the address belongs to an owner');
  const signIn = linkIn(await mailTo(me.user.email));
  expect(signIn).toContain('/console/sign-in?link=rcl_');
  await page.goto(signIn);
  await page.getByRole('button', { name: 'Sign in with this link' }).click();
  await expect(page).toHaveURL(/\/console\/overview/);
  await expect(page.locator('.months [aria-current=page]')).toHaveText(PREVIOUS);

  // Exactly the two misbehaving accounts are flagged, each flag with its rule's figures, and
  // the rules are stated.
  const flagged = page.locator('table.accounts tbody tr.flagged');
  await expect(flagged).toHaveCount(2);
  const flaggedIds = review.accounts.filter((a) => a.flags.length > 0).map((a) => a.account_id).sort();
  expect(flaggedIds).toHaveLength(2);
  await expect(flagged.locator('li.flag').first()).toContainText('over');
  await expect(page.locator('#rules')).toContainText('Bulk: flagged over');
  await axeClean(page, 'overview');

  // A drill-down from a flag: the flagged account's entries.
  // Accounts are written as bare UUIDs, users as usr_ and the same UUID.
  const downloader = review.accounts.find((a) => a.flags.includes('DOWNLOADS') && a.account_id !== me.user.id.slice(4));
  expect(downloader, 'an account flagged for its downloads').toBeTruthy();
  await page.locator(`table.accounts a[href*="account_id=${downloader.account_id}"]`).click();
  await expect(page).toHaveURL(new RegExp(`account_id=${downloader.account_id}`));
  await expect(page.locator('table.entries tbody tr').first()).toBeVisible();

  // An explanation asked of that account's owner, e-mailed to them.
  const person = review.people.find((p) => p.id.slice(4) === downloader.account_id);
  const download = review.downloads.find((d) => d.account_id === downloader.account_id && d.status === 'PENDING');
  await page.goto(`${MAIL_BASE_URL}/console/downloads?month=${PREVIOUS}`);
  const article = page.locator(`article[id="${download.id}"]`);
  await article.getByLabel('Ask for an explanation (e-mailed to them)').check();
  await article.getByLabel('Your reason, or the question to ask').fill('Why were these records downloaded at once?');
  await article.getByRole('button', { name: 'Record the decision' }).click();
  await expect(page.locator('p.notice[role=status]').first()).toContainText(`E-mailed to ${person.email}`);
  const asked = await mailTo(person.email);
  expect(asked.text).toContain('Why were these records downloaded at once?');
  const explainLink = linkIn(asked);
  expect(explainLink).toContain('/console/explain?');

  // The downloader explains, with no token and no terminal, in Korean; the page passes
  // axe-core in both languages.
  const downloaderContext = await browser.newContext({ bypassCSP: true, locale: 'ko-KR' });
  const theirs = await downloaderContext.newPage();
  await theirs.goto(`${explainLink}&lang=en`);
  await axeClean(theirs, 'the explanation page in English');
  await theirs.goto(`${explainLink}&lang=ko`);
  await expect(theirs.locator('html')).toHaveAttribute('lang', 'ko');
  await axeClean(theirs, 'the explanation page in Korean');
  await expect(theirs.locator('#question')).toHaveText('Why were these records downloaded at once?');
  await theirs.getByLabel('소명 내용').fill('분기 채용 보고서에 필요한 지원자 목록이었습니다.');
  await theirs.getByRole('button', { name: '소명 보내기' }).click();
  await expect(theirs.getByRole('status')).toContainText('소명이 기록되었습니다');
  await downloaderContext.close();

  // The officer accepts it.
  await page.goto(`${MAIL_BASE_URL}/console/downloads?month=${PREVIOUS}`);
  await expect(article.locator('dd.status')).toHaveText('Explained: awaiting a decision');
  await expect(article.locator('ol.history')).toContainText('분기 채용 보고서에 필요한 지원자 목록이었습니다.');
  await article.getByLabel('Accept the explanation').check();
  await article.getByLabel('Your reason, or the question to ask').fill('Checked with the hiring plan.');
  await article.getByRole('button', { name: 'Record the decision' }).click();
  await expect(article.locator('dd.status')).toHaveText('Reason confirmed');

  // The rest decided: each undecided download the officer may decide is confirmed.
  const undecided = page.locator('article.status-PENDING:has(form)');
  for (let left = await undecided.count(); left > 0; left -= 1) {
    const next = undecided.first();
    await next.getByLabel('Reason confirmed').check();
    await next.getByLabel('Your reason, or the question to ask').fill('Within the stated purpose.');
    await next.getByRole('button', { name: 'Record the decision' }).click();
    await expect(undecided).toHaveCount(left - 1);
  }

  // Only a month that has ended is signed off.
  await page.goto(`${MAIL_BASE_URL}/console/sign-off?month=${MONTH}`);
  await expect(page.getByRole('button', { name: `Sign off ${MONTH}` })).toHaveCount(0);
  for (const month of [MONTH, NEXT]) {
    const refused = await request.post(`${MAIL_BASE_URL}/v1/audit-logs/privacy/reviews/${month}/sign-off`, { ...auth, data: { note: 'early' } });
    expect(refused.status(), month).toBe(409);
  }
  await page.goto(`${MAIL_BASE_URL}/console/sign-off?month=${PREVIOUS}`);
  await page.getByLabel('Note').fill('All downloads decided; the officer\'s own are for another owner.');
  await page.getByRole('button', { name: `Sign off ${PREVIOUS}` }).click();
  await expect(page).toHaveURL(new RegExp(`/console/report\\?month=${PREVIOUS}$`));

  // The report, printed on A4: every column, the reviewer's name, the rules, the explanation,
  // and page numbers.
  const pdf = join(mkdtempSync(join(tmpdir(), 'month-')), 'report.pdf');
  await page.emulateMedia({ media: 'print' });
  await page.pdf({ path: pdf, format: 'A4' });
  // In the order the text is drawn, so that a heading wrapped in its cell reads whole.
  const raw = execFileSync('pdftotext', ['-raw', pdf, '-']).toString();
  const pages = raw.split('\f').filter((p) => p.trim());
  const text = raw.replace(/\s+/g, ' ');
  pages.forEach((p, i) => expect(p, `page ${i + 1}`).toContain(`${i + 1} / ${pages.length}`));
  for (const part of ['When', 'Who', 'Entry', 'Whose data', 'Status', 'Purpose, explanation, decisions',
    'By whom, when', 'Outside work hours', 'Data subjects', 'Flags', 'The rules applied', 'Bulk: flagged over',
    'Exports of the ledger', me.user.name, person.name, 'Checked with the hiring plan.']) {
    expect(text, part).toContain(part);
  }
  await officer.close();
});
