// Smoke test for server.mjs: `node smoke.mjs` exits 0 when every case passes.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import assert from 'node:assert/strict';
import {
  compactVerify, createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify,
} from 'jose';

const REDIRECT_URI = 'http://127.0.0.1:8999/callback';
const CLIENT_ID = 'recruitd';
const CLIENT_SECRET = 'recruitd-secret';
const ACCOUNTS = {
  alice: { email: 'alice@org-a.example', email_verified: true, name: 'Alice A', groups: ['recruitd-owners'] },
  bob: { email: 'bob@org-a.example', email_verified: false, name: 'Bob B', groups: [] },
};

let failures = 0;
async function check(name, fn) {
  try {
    const detail = await fn();
    console.log(`ok   ${name}${detail ? ` — ${detail}` : ''}`);
  } catch (err) {
    failures += 1;
    console.log(`FAIL ${name} — ${err?.stack ?? err}`);
  }
}

function startOp(env) {
  const child = spawn(process.execPath, [new URL('./server.mjs', import.meta.url).pathname], {
    env: { ...process.env, OP_PORT: '0', OP_REDIRECT_URIS: REDIRECT_URI, OP_ACCOUNTS: JSON.stringify(ACCOUNTS), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      const m = /^OP listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
      m ? resolve(m[1]) : reject(new Error(`unexpected first line: ${line}`));
    });
    exited.then(({ code }) => reject(new Error(`server exited with ${code}: ${stderr}`)));
    setTimeout(() => reject(new Error('server did not start in 10 s')), 10_000).unref();
  });
  return { child, ready, exited, stop: () => { child.kill('SIGTERM'); return exited; } };
}

// ---------------------------------------------------------------- an RP, by hand

const b64url = (buf) => Buffer.from(buf).toString('base64url');

function cookieJar() {
  const jar = new Map();
  return {
    store(res) {
      for (const c of res.headers.getSetCookie()) {
        const [pair, ...attrs] = c.split(';');
        const name = pair.slice(0, pair.indexOf('=')).trim();
        const value = pair.slice(pair.indexOf('=') + 1).trim();
        const expired = attrs.some((a) => /^\s*expires=/i.test(a) && new Date(a.split('=')[1]) < new Date());
        if (expired || value === '') jar.delete(name); else jar.set(name, value);
      }
    },
    header: () => [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
  };
}

async function signIn(op, { loginHint, jar = cookieJar(), pkce = true } = {}) {
  const verifier = b64url(randomBytes(32));
  const challenge = b64url(createHash('sha256').update(verifier).digest());
  const state = b64url(randomBytes(16));
  const nonce = b64url(randomBytes(16));
  const url = new URL(op.discovery.authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: CLIENT_ID, response_type: 'code', redirect_uri: REDIRECT_URI,
    scope: 'openid email profile groups', state, nonce,
    ...(pkce ? { code_challenge: challenge, code_challenge_method: 'S256' } : {}),
    ...(loginHint ? { login_hint: loginHint } : {}),
  });
  let next = url.href;
  const statuses = [];
  for (let hops = 0; hops < 10 && !next.startsWith(REDIRECT_URI); hops += 1) {
    const res = await fetch(next, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.store(res);
    statuses.push(res.status);
    if (res.status < 300 || res.status > 399) throw new Error(`HTTP ${res.status} at ${next}: ${await res.text()}`);
    next = new URL(res.headers.get('location'), next).href;
  }
  const cb = new URL(next);
  assert.equal(cb.origin + cb.pathname, REDIRECT_URI);
  const params = Object.fromEntries(cb.searchParams);
  if (params.error) return { params, statuses };
  assert.equal(params.state, state, 'state round-trips');
  assert.equal(params.iss, op.issuer, 'iss in the callback is the issuer');
  const res = await fetch(op.discovery.token_endpoint, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code', code: params.code, redirect_uri: REDIRECT_URI, code_verifier: verifier,
    }),
  });
  const tokens = await res.json();
  assert.equal(res.status, 200, `token endpoint: ${JSON.stringify(tokens)}`);
  return { params, statuses, tokens, nonce };
}

async function fetchJwks(op) {
  const res = await fetch(op.discovery.jwks_uri);
  assert.equal(res.status, 200);
  return res.json();
}

// What a correct RP does: RS256 only, issuer, audience, exp/iat, nonce.
async function verifyIdToken(op, jwks, idToken, nonce) {
  const { payload } = await jwtVerify(idToken, createLocalJWKSet(jwks), {
    algorithms: ['RS256'], issuer: op.issuer, audience: CLIENT_ID,
  });
  if (payload.nonce !== nonce) {
    throw Object.assign(new Error('nonce mismatch'), { code: 'NONCE_MISMATCH' });
  }
  return payload;
}

async function control(op, path, body) {
  const res = await fetch(`${op.issuer}/__test/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.equal(res.status, 200, `${path}: ${res.status}`);
  return res.json();
}

// ---------------------------------------------------------------- cases

const server = startOp({});
const op = {};
await check('server starts and prints its ready line', async () => {
  op.issuer = await server.ready;
  return op.issuer;
});
if (!op.issuer) process.exit(1);

await check('discovery', async () => {
  const res = await fetch(`${op.issuer}/.well-known/openid-configuration`);
  assert.equal(res.status, 200);
  op.discovery = await res.json();
  assert.equal(op.discovery.issuer, op.issuer);
  assert.deepEqual(op.discovery.code_challenge_methods_supported, ['S256']);
  assert.ok(op.discovery.id_token_signing_alg_values_supported.includes('RS256'));
  op.jwks = await fetchJwks(op);
  assert.deepEqual(op.jwks.keys.map((k) => k.kid), ['rs-1', 'es-1']);
  assert.ok(op.jwks.keys.every((k) => k.d === undefined), 'no private parts published');
  return `id_token algs ${op.discovery.id_token_signing_alg_values_supported.join(',')}`;
});

await check('code flow + PKCE S256 for alice (login_hint), ID token verifies', async () => {
  const { tokens, nonce, statuses } = await signIn(op, { loginHint: 'alice' });
  const claims = await verifyIdToken(op, op.jwks, tokens.id_token, nonce);
  assert.equal(decodeProtectedHeader(tokens.id_token).kid, 'rs-1');
  assert.equal(claims.sub, 'alice');
  assert.equal(claims.email, 'alice@org-a.example');
  assert.equal(claims.email_verified, true);
  assert.equal(claims.name, 'Alice A');
  assert.deepEqual(claims.groups, ['recruitd-owners']);
  const res = await fetch(op.discovery.userinfo_endpoint, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  const userinfo = await res.json();
  assert.equal(res.status, 200, JSON.stringify(userinfo));
  assert.equal(userinfo.sub, 'alice');
  assert.deepEqual(userinfo.groups, ['recruitd-owners']);
  return `header ${JSON.stringify(decodeProtectedHeader(tokens.id_token))}, redirects ${statuses.join('→')}, claims ${Object.keys(claims).join(',')}`;
});

await check('no login_hint → first account', async () => {
  const { tokens, nonce } = await signIn(op);
  assert.equal((await verifyIdToken(op, op.jwks, tokens.id_token, nonce)).sub, 'alice');
});

await check('next-account bob, same cookie jar as a previous alice sign-in', async () => {
  const jar = cookieJar();
  await signIn(op, { loginHint: 'alice', jar });
  await control(op, 'next-account', { account: 'bob' });
  const { tokens, nonce } = await signIn(op, { jar });
  const claims = await verifyIdToken(op, op.jwks, tokens.id_token, nonce);
  assert.equal(claims.sub, 'bob');
  assert.equal(claims.email_verified, false);
  assert.deepEqual(claims.groups, []);
  const { tokens: t2, nonce: n2 } = await signIn(op, { loginHint: 'alice', jar });
  assert.equal((await verifyIdToken(op, op.jwks, t2.id_token, n2)).sub, 'alice', 'login_hint beats next-account');
  await control(op, 'next-account', { account: null });
});

await check('unknown login_hint → error=access_denied at the redirect URI', async () => {
  const { params } = await signIn(op, { loginHint: 'mallory' });
  assert.equal(params.error, 'access_denied');
  assert.equal(params.iss, op.issuer);
  return `error=${params.error}`;
});

await check('authorization request without PKCE is refused', async () => {
  const { params } = await signIn(op, { pkce: false });
  assert.equal(params.error, 'invalid_request');
  return `error=${params.error}: ${params.error_description}`;
});

const MODES = {
  'alg-none': (h) => assert.equal(h.alg, 'none'),
  'wrong-nonce': (h, p, nonce) => assert.notEqual(p.nonce, nonce),
  expired: (h, p) => assert.ok(p.exp < Date.now() / 1000),
  'wrong-audience': (h, p) => assert.equal(p.aud, 'someone-else'),
  'wrong-issuer': (h, p) => assert.notEqual(p.iss, op.issuer),
  'unknown-key': (h) => assert.equal(h.kid, 'rogue-1'),
  'bad-signature': (h) => assert.equal(h.kid, 'rs-1'),
  hs256: (h) => assert.equal(h.alg, 'HS256'),
};
for (const [mode, applied] of Object.entries(MODES)) {
  await check(`tamper ${mode} → rejected`, async () => {
    assert.equal((await control(op, 'tamper', { mode })).tamper, mode);
    const { tokens, nonce } = await signIn(op, { loginHint: 'alice' });
    const header = decodeProtectedHeader(tokens.id_token);
    const payload = decodeJwt(tokens.id_token);
    applied(header, payload, nonce);
    if (['wrong-nonce', 'expired', 'wrong-audience', 'wrong-issuer'].includes(mode)) {
      await compactVerify(tokens.id_token, createLocalJWKSet(op.jwks)); // validly signed by the OP key
    }
    if (mode === 'hs256') {
      await compactVerify(tokens.id_token, Buffer.from(CLIENT_SECRET), { algorithms: ['HS256'] });
    }
    assert.equal(payload.sub, 'alice', 'other claims kept');
    assert.equal(payload.email, 'alice@org-a.example', 'other claims kept');
    assert.equal((await control(op, 'state')).tamper, 'none', 'one-shot');
    let error;
    try {
      await verifyIdToken(op, op.jwks, tokens.id_token, nonce);
    } catch (err) {
      error = err;
    }
    assert.ok(error, 'tampered ID token was accepted');
    return `${error.code ?? error.name}: ${error.message}`;
  });
}

await check('after tampering, the next token is clean again', async () => {
  const { tokens, nonce } = await signIn(op, { loginHint: 'alice' });
  await verifyIdToken(op, op.jwks, tokens.id_token, nonce);
});

await check('rotate-keys: cached JWKS fails (unknown kid), refetched JWKS verifies', async () => {
  const st = await control(op, 'rotate-keys', {});
  assert.deepEqual(st.signing_kids, ['rs-2']);
  const { tokens, nonce } = await signIn(op, { loginHint: 'alice' });
  assert.equal(decodeProtectedHeader(tokens.id_token).kid, 'rs-2');
  await assert.rejects(verifyIdToken(op, op.jwks, tokens.id_token, nonce), { code: 'ERR_JWKS_NO_MATCHING_KEY' });
  const fresh = await fetchJwks(op);
  assert.deepEqual(fresh.keys.map((k) => k.kid), ['rs-2']);
  await verifyIdToken(op, fresh, tokens.id_token, nonce);
  return 'old: ERR_JWKS_NO_MATCHING_KEY, new: ok';
});

await check('SIGTERM → clean exit', async () => {
  const { code, signal } = await server.stop();
  assert.equal(code, 0, `exit code ${code} signal ${signal}`);
});

await check('OP_DOWN=1 → discovery answers 503', async () => {
  const down = startOp({ OP_DOWN: '1' });
  try {
    const issuer = await down.ready;
    const res = await fetch(`${issuer}/.well-known/openid-configuration`);
    assert.equal(res.status, 503);
    return `HTTP ${res.status}`;
  } finally {
    assert.equal((await down.stop()).code, 0);
  }
});

console.log(failures === 0 ? 'smoke: all passed' : `smoke: ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
