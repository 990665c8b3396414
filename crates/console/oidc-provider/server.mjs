// A real OpenID Provider (panva/oidc-provider) for recruitd's tests.
// Non-interactive sign-in, plus /__test/ control routes. See README.md.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import Provider from 'oidc-provider';
import {
  CompactSign, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK,
} from 'jose';

// oidc-provider prints notices with console.info (stdout); stdout carries only the ready line.
console.info = (...args) => console.error(...args);

const HOST = '127.0.0.1';
const TAMPER_MODES = new Set([
  'none', 'alg-none', 'wrong-nonce', 'expired', 'wrong-audience', 'wrong-issuer',
  'unknown-key', 'bad-signature', 'hs256',
]);

function fail(message) {
  console.error(`oidc test provider: ${message}`);
  process.exit(2);
}

const port = Number(process.env.OP_PORT ?? '0');
if (!Number.isInteger(port) || port < 0 || port > 65535) fail('OP_PORT must be a port number (0 = any free port)');
const clientId = process.env.OP_CLIENT_ID || 'recruitd';
const clientSecret = process.env.OP_CLIENT_SECRET || 'recruitd-secret';
const redirectUris = (process.env.OP_REDIRECT_URIS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
if (redirectUris.length === 0) fail('OP_REDIRECT_URIS is required (comma-separated redirect URIs)');
let accounts;
try {
  accounts = JSON.parse(process.env.OP_ACCOUNTS
    || '{"alice":{"email":"alice@example.test","email_verified":true,"name":"Alice","groups":[]}}');
} catch (err) {
  fail(`OP_ACCOUNTS is not JSON: ${err.message}`);
}
if (!accounts || typeof accounts !== 'object' || Array.isArray(accounts) || Object.keys(accounts).length === 0) {
  fail('OP_ACCOUNTS must be a non-empty JSON object mapping account id to claims');
}

const state = {
  nextAccount: null, // null = first account of OP_ACCOUNTS
  tamper: 'none', // applies to the next token response only
  down: process.env.OP_DOWN === '1',
};

async function signingKey(alg, kid) {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
}

let rsSerial = 1;
let current; // { provider, callback, rsJwk, jwks }
const cookieKeys = [randomBytes(32).toString('base64url')];

// ---------------------------------------------------------------- provider

async function buildProvider(issuer, jwks) {
  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
    }],
    jwks,
    cookies: { keys: cookieKeys },
    pkce: { required: () => true }, // oidc-provider 9 only knows S256
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      groups: ['groups'],
    },
    conformIdTokenClaims: false,
    ttl: { AccessToken: 3600, AuthorizationCode: 600, Grant: 3600, IdToken: 3600, Interaction: 600, Session: 3600 },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(ctx, id) {
      if (!Object.hasOwn(accounts, id)) return undefined;
      return { accountId: id, claims: async () => ({ ...accounts[id], sub: id }) };
    },
  });
  provider.proxy = false;

  // Every authorization request is a fresh sign-in: hide the OP session cookie from the
  // authorization endpoint and its resume step, so the account chosen below always applies
  // (no SSO, no "switch account" logout page; prompt=none yields login_required).
  provider.use(async (ctx, next) => {
    if (/^\/auth(\/[^/]+)?$/.test(ctx.path) && ctx.req.headers.cookie) {
      ctx.req.headers.cookie = ctx.req.headers.cookie.split(';')
        .filter((c) => !c.trim().startsWith('_session')).join(';');
    }
    await next();
  });

  // Non-interactive login + consent at once.
  provider.use(async (ctx, next) => {
    if (ctx.method !== 'GET' || !/^\/interaction\/[^/]+$/.test(ctx.path)) return next();
    let details;
    try {
      details = await provider.interactionDetails(ctx.req, ctx.res);
    } catch (err) {
      ctx.status = 400;
      ctx.body = `interaction ${ctx.path}: ${err.error_description ?? err.message}; the client must keep `
        + 'the OP cookies (_interaction, _interaction_resume) across the redirects\n';
      return;
    }
    const accountId = details.params.login_hint || state.nextAccount || Object.keys(accounts)[0];
    let result;
    if (!Object.hasOwn(accounts, accountId)) {
      result = { error: 'access_denied', error_description: `unknown account ${accountId}` };
    } else {
      const grant = new provider.Grant({ accountId, clientId: details.params.client_id });
      grant.addOIDCScope(details.params.scope);
      result = { login: { accountId }, consent: { grantId: await grant.save() } };
    }
    const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
    ctx.status = 303;
    ctx.set('Location', returnTo);
    ctx.body = '';
  });

  // One-shot rewrite of the token response's id_token.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route !== 'token' || ctx.status !== 200 || typeof ctx.body?.id_token !== 'string') return;
    const mode = state.tamper;
    state.tamper = 'none';
    if (mode !== 'none') ctx.body = { ...ctx.body, id_token: await tamper(mode, ctx.body.id_token) };
  });

  return provider;
}

async function install(issuer, jwks, rsJwk) {
  const provider = await buildProvider(issuer, jwks);
  current = { provider, callback: provider.callback(), rsJwk, jwks };
}

// ---------------------------------------------------------------- tampering

const b64 = (obj) => Buffer.from(JSON.stringify(obj)).toString('base64url');
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

async function resign(header, payload) {
  const key = await importJWK(current.rsJwk, 'RS256');
  return new CompactSign(Buffer.from(JSON.stringify(payload))).setProtectedHeader(header).sign(key);
}

async function tamper(mode, jwt) {
  const header = decodeProtectedHeader(jwt);
  const payload = decodeJwt(jwt);
  const now = Math.floor(Date.now() / 1000);
  const { kid, ...headerWithoutKid } = header; // the OP's ID token header is { alg, kid }
  switch (mode) {
    case 'alg-none':
      return `${b64({ ...headerWithoutKid, alg: 'none' })}.${b64(payload)}.`;
    case 'wrong-nonce':
      return resign(header, { ...payload, nonce: `not-${payload.nonce ?? 'a-nonce'}` });
    case 'expired':
      return resign(header, { ...payload, iat: now - 7200, exp: now - 3600 });
    case 'wrong-audience':
      return resign(header, { ...payload, aud: 'someone-else' });
    case 'wrong-issuer':
      return resign(header, { ...payload, iss: 'http://127.0.0.1:1/not-this-issuer' });
    case 'unknown-key': {
      const { privateKey } = await generateKeyPair('RS256');
      return new CompactSign(Buffer.from(JSON.stringify(payload)))
        .setProtectedHeader({ ...header, alg: 'RS256', kid: 'rogue-1' }).sign(privateKey);
    }
    case 'bad-signature': {
      // Move each of the last 4 base64url chars by 32 positions: flips data bits, stays valid base64url.
      const sig = jwt.slice(jwt.lastIndexOf('.') + 1);
      const tail = [...sig.slice(-4)].map((c) => B64URL[(B64URL.indexOf(c) + 32) % 64]).join('');
      return jwt.slice(0, jwt.length - 4) + tail;
    }
    case 'hs256':
      return new CompactSign(Buffer.from(JSON.stringify(payload)))
        .setProtectedHeader({ ...headerWithoutKid, alg: 'HS256' }).sign(Buffer.from(clientSecret));
    default:
      throw new Error(`unknown tamper mode ${mode}`);
  }
}

// ---------------------------------------------------------------- control routes

function readJson(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve(text ? JSON.parse(text) : {});
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', reject);
  });
}

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(text);
}

function snapshot() {
  return {
    issuer: current.provider.issuer,
    client_id: clientId,
    redirect_uris: redirectUris,
    accounts: Object.keys(accounts),
    next_account: state.nextAccount,
    tamper: state.tamper,
    down: state.down,
    signing_kids: current.jwks.keys.map((k) => k.kid),
  };
}

async function control(req, res, path) {
  const remote = req.socket.remoteAddress;
  if (remote !== '127.0.0.1' && remote !== '::ffff:127.0.0.1' && remote !== '::1') {
    return send(res, 403, { error: 'control routes are loopback-only' });
  }
  if (req.method === 'GET' && path === '/__test/state') return send(res, 200, snapshot());
  if (req.method !== 'POST') return send(res, 404, { error: 'not found' });
  let body;
  try {
    body = await readJson(req);
  } catch {
    return send(res, 400, { error: 'body must be JSON' });
  }
  switch (path) {
    case '/__test/next-account':
      if (body.account !== null && !Object.hasOwn(accounts, body.account)) {
        return send(res, 400, { error: `unknown account ${body.account}` });
      }
      state.nextAccount = body.account;
      return send(res, 200, snapshot());
    case '/__test/tamper':
      if (!TAMPER_MODES.has(body.mode)) return send(res, 400, { error: `unknown mode ${body.mode}` });
      state.tamper = body.mode;
      return send(res, 200, snapshot());
    case '/__test/rotate-keys': {
      rsSerial += 1;
      const rsJwk = await signingKey('RS256', `rs-${rsSerial}`);
      await install(current.provider.issuer, { keys: [rsJwk] }, rsJwk);
      return send(res, 200, snapshot());
    }
    case '/__test/down':
      state.down = body.down === true;
      return send(res, 200, snapshot());
    default:
      return send(res, 404, { error: 'not found' });
  }
}

// ---------------------------------------------------------------- server

const server = http.createServer((req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  if (path.startsWith('/__test/')) {
    control(req, res, path).catch((err) => send(res, 500, { error: String(err?.message ?? err) }));
  } else if (!current) {
    send(res, 503, { error: 'starting' });
  } else if (state.down) {
    send(res, 503, { error: 'temporarily_unavailable', error_description: 'OP_DOWN' });
  } else {
    current.callback(req, res);
  }
});

server.listen(port, HOST, async () => {
  try {
    const issuer = `http://${HOST}:${server.address().port}`;
    const rsJwk = await signingKey('RS256', 'rs-1');
    const esJwk = await signingKey('ES256', 'es-1');
    await install(issuer, { keys: [rsJwk, esJwk] }, rsJwk);
    process.stdout.write(`OP listening on ${issuer}\n`);
  } catch (err) {
    fail(err?.stack ?? String(err));
  }
});
server.on('error', (err) => fail(err.message));

function shutdown() {
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
