// Single sign-on to the console in a real browser, through a real OpenID provider
// (crates/console/oidc-provider: oidc-provider from npm) that this file starts and drives. The
// mailing demo server .ci/browser starts is the one configured (its database is its own): the
// browser leaves for the provider, signs in there, comes back and lands on the overview; every
// forgery the provider can be told to make, a replayed callback and a member are refused with a
// page that says why, which passes axe-core and reflows at 390 px. The same cases run below the
// browser in bins/recruitd/tests/sso.rs.
import { test, expect } from '@playwright/test';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const { MAIL_BASE_URL: BASE, MAIL_OWNER_TOKEN, MAIL_MEMBER_TOKEN, MAIL_DATABASE_URL, RECRUITD, OP_DIR } = process.env;

let provider;
let issuer;
let owner;
let member;

async function me(request, token) {
  const answer = await request.get(`${BASE}/v1/me`, { headers: { Authorization: `Bearer ${token}` } });
  expect(answer.ok()).toBeTruthy();
  return answer.json();
}

test.beforeAll(async ({ request }) => {
  const caller = await me(request, MAIL_OWNER_TOKEN);
  owner = caller.user.email;
  member = (await me(request, MAIL_MEMBER_TOKEN)).user.email;
  // The provider signs in the account its `login_hint` names: the address typed on the page.
  const accounts = {
    [owner]: { email: owner, email_verified: true, groups: ['privacy'] },
    [member]: { email: member, email_verified: true, groups: ['privacy'] },
  };
  provider = spawn('node', ['server.mjs'], {
    cwd: OP_DIR,
    env: { ...process.env, OP_PORT: '0', OP_REDIRECT_URIS: `${BASE}/console/sso/callback`, OP_ACCOUNTS: JSON.stringify(accounts) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  issuer = await new Promise((resolve, reject) => {
    provider.stdout.on('data', (chunk) => {
      const ready = /OP listening on (\S+)/.exec(chunk.toString());
      if (ready) resolve(ready[1]);
    });
    provider.on('exit', (code) => reject(new Error(`the provider exited with ${code}`)));
  });
  const secret = join(mkdtempSync(join(tmpdir(), 'recruitd-sso-')), 'client-secret');
  writeFileSync(secret, 'recruitd-secret\n');
  // The server reaches the provider on loopback because it was started with --outbound-allow.
  execFileSync(RECRUITD, [
    '--database-url', MAIL_DATABASE_URL, '--outbound-allow', '127.0.0.1', 'console', 'sso-set',
    '--org', caller.organization_id, '--issuer', issuer, '--client-id', 'recruitd',
    '--client-secret-file', secret, '--owner-group', 'privacy',
  ], { env: { ...process.env, RUST_LOG: 'warn' } });
});

test.afterAll(() => provider?.kill('SIGTERM'));

async function control(request, what, body) {
  const answer = await request.post(`${issuer}/__test/${what}`, { data: body });
  expect(answer.ok()).toBeTruthy();
}

async function signInThroughProvider(page, email) {
  await page.goto(`${BASE}/console/sign-in?lang=en`);
  await page.locator('#sso-email').fill(email);
  await page.getByRole('button', { name: 'Continue to your identity provider' }).click();
}

/** The page's serious and critical axe-core violations. */
async function violations(page) {
  await page.addScriptTag({ content: AXE });
  const found = await page.evaluate(async () => (await window.axe.run(document)).violations);
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
}

test('an owner leaves for the provider, signs in there and lands on the overview', async ({ page }) => {
  const callbacks = [];
  page.on('request', (r) => { if (r.url().includes('/console/sso/callback')) callbacks.push(r.url()); });
  await signInThroughProvider(page, owner);
  await expect(page).toHaveURL(/\/console\/overview/);
  await expect(page.getByRole('heading', { level: 1 })).toContainText('Access review of');
  expect(callbacks).toHaveLength(1);
  expect(callbacks[0].startsWith(`${BASE}/console/sso/callback?`)).toBeTruthy();
  // The same callback again: its code is spent and the sign-in in flight is gone.
  await page.goto(callbacks[0]);
  await expect(page.getByRole('alert')).toContainText('not started in this browser');
});

test('every forged ID token is refused with a page that says so', async ({ browser, request }) => {
  for (const mode of ['alg-none', 'wrong-nonce', 'expired', 'wrong-audience', 'unknown-key', 'bad-signature', 'hs256']) {
    await control(request, 'tamper', { mode });
    // A context of its own, where axe-core may run despite the console's CSP.
    const context = await browser.newContext({ bypassCSP: true });
    const page = await context.newPage();
    await signInThroughProvider(page, owner);
    await expect(page.getByRole('alert'), mode).toContainText('could not be verified');
    await expect(page).not.toHaveURL(/\/console\/overview/);
    if (mode === 'alg-none') expect(await violations(page)).toEqual([]);
    await context.close();
  }
  await control(request, 'tamper', { mode: 'none' });
});

test('a member signed in by the provider is told that only owners enter', async ({ browser }) => {
  for (const viewport of [{ width: 390, height: 844 }, { width: 1280, height: 800 }]) {
    const context = await browser.newContext({ viewport, bypassCSP: true });
    const page = await context.newPage();
    await signInThroughProvider(page, member);
    await expect(page.getByRole('alert')).toContainText('only active owners');
    const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(wide, `${viewport.width} px`).toBeLessThanOrEqual(0);
    expect(await violations(page)).toEqual([]);
    await context.close();
  }
});
