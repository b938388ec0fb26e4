// A real OAuth 2.0 authorization server for the gateway's upstream-auth
// tests: panva's oidc-provider (package.json pins it) with its
// client_credentials grant issuing JWT access tokens (RFC 9068), and an
// RFC 8693 token-exchange grant registered with registerGrantType, which
// oidc-provider does not ship. The exchange verifies the subject token
// (and an actor token) against this server's own signing key and issues a
// token whose sub is the subject token's and whose aud is the requested
// audience.
//
// Configuration (environment):
//   PROVIDER_CLIENTS  JSON array of oidc-provider client metadata.
//   PROVIDER_SCOPES   space-separated scopes the server knows.
//   PROVIDER_AUDIENCES space-separated audiences an exchange may ask for;
//                     any other is refused with invalid_target.
//   PROVIDER_TENANT   the tenant_id claim of every token.
//   PROVIDER_DEFAULT_RESOURCE the audience of a client_credentials token
//                     asked for without a resource (a JWT for the gateway
//                     itself, used as an actor token).
//
// It listens on 127.0.0.1 (a free port) and prints one JSON line
// {"issuer": URL} on stdout once it serves; it exits when stdin closes.
import http from 'node:http';
import crypto from 'node:crypto';
import Provider, { errors } from 'oidc-provider';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const TTL = 300;

const clients = JSON.parse(process.env.PROVIDER_CLIENTS || '[]');
const scopes = (process.env.PROVIDER_SCOPES || '').split(' ').filter(Boolean);
const audiences = new Set((process.env.PROVIDER_AUDIENCES || '').split(' ').filter(Boolean));
const tenant = process.env.PROVIDER_TENANT || 'acme';
const defaultResource = process.env.PROVIDER_DEFAULT_RESOURCE || undefined;

const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const kid = crypto.randomUUID();
const signingJWK = { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };

const b64 = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

function sign(payload) {
  const input = `${b64({ alg: 'RS256', typ: 'at+jwt', kid })}.${b64(payload)}`;
  const sig = crypto.sign('RSA-SHA256', Buffer.from(input), privateKey).toString('base64url');
  return `${input}.${sig}`;
}

// verify returns the claims of a token this server signed and that has not
// expired, or throws invalid_grant.
function verify(token, issuer, what) {
  const parts = String(token || '').split('.');
  if (parts.length !== 3) throw new errors.InvalidGrant(`${what} is not a JWT`);
  let header;
  let claims;
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url'));
    claims = JSON.parse(Buffer.from(parts[1], 'base64url'));
  } catch {
    throw new errors.InvalidGrant(`${what} does not decode`);
  }
  const ok = header.alg === 'RS256' && header.kid === kid &&
    crypto.verify('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), publicKey, Buffer.from(parts[2], 'base64url'));
  if (!ok) throw new errors.InvalidGrant(`${what} is not signed by this server`);
  if (claims.iss !== issuer) throw new errors.InvalidGrant(`${what} has another issuer`);
  if (typeof claims.exp !== 'number' || claims.exp <= Math.floor(Date.now() / 1000)) {
    throw new errors.InvalidGrant(`${what} has expired`);
  }
  return claims;
}

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients,
    scopes,
    jwks: { keys: [signingJWK] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf || defaultResource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: scopes.join(' '),
          audience: resource,
          accessTokenFormat: 'jwt',
          accessTokenTTL: TTL,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: () => ({ tenant_id: tenant }),
  });
  provider.proxy = false;

  // RFC 8693 §2.1: the client authenticated (oidc-provider checked it,
  // and that its grant_types allow this grant); the subject token must be
  // a live access token of this server's; the audience must be known.
  provider.registerGrantType(TOKEN_EXCHANGE, async (ctx) => {
    const p = ctx.oidc.params;
    if (p.subject_token_type !== ACCESS_TOKEN) {
      throw new errors.InvalidRequest('subject_token_type must be an access token');
    }
    const subject = verify(p.subject_token, issuer, 'subject_token');
    if (!p.audience || !audiences.has(p.audience)) {
      throw new errors.InvalidTarget(`audience ${p.audience || '(none)'} is not served`);
    }
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: issuer,
      sub: subject.sub,
      aud: p.audience,
      client_id: ctx.oidc.client.clientId,
      tenant_id: subject.tenant_id,
      jti: crypto.randomUUID(),
      iat: now,
      exp: now + TTL,
    };
    if (p.scope) claims.scope = p.scope;
    if (p.actor_token) {
      if (p.actor_token_type !== ACCESS_TOKEN) {
        throw new errors.InvalidRequest('actor_token_type must be an access token');
      }
      claims.act = { sub: verify(p.actor_token, issuer, 'actor_token').sub };
    }
    ctx.body = {
      access_token: sign(claims),
      issued_token_type: ACCESS_TOKEN,
      token_type: 'Bearer',
      expires_in: TTL,
    };
  }, ['subject_token', 'subject_token_type', 'actor_token', 'actor_token_type', 'requested_token_type', 'audience', 'scope', 'resource']);

  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
