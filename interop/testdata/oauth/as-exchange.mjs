// An OAuth 2.0 authorization server for the federation's token exchange
// (RFC 8693): oidc-provider, with the client-credentials grant for two
// resources (the gateway and its upstream), issuing JWT access tokens,
// and the token-exchange grant registered through its extension point
// (registerGrantType): the gateway, a confidential client, sends a
// caller's token for the gateway and gets one for the upstream, with the
// caller as subject and the gateway as actor ("act").
//
//   PORT=4456 GATEWAY=http://127.0.0.1:8088/otc UPSTREAM=http://127.0.0.1:8080/mcp node as-exchange.mjs
//
// Clients: "caller" (client credentials, for the gateway), "gateway" (may
// exchange). It prints "issuer <url>" once it listens, and "exchanged
// <sub>" for each token it exchanges.
import Provider, { errors } from 'oidc-provider';
import { generateKeyPairSync } from 'node:crypto';
import { jwtVerify, SignJWT, importJWK } from 'jose';

const port = Number(process.env.PORT);
const gateway = process.env.GATEWAY;
const upstream = process.env.UPSTREAM;
const issuer = `http://127.0.0.1:${port}`;
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'exchange-1', use: 'sig', alg: 'RS256' };
const resources = [gateway, upstream];
const grant = 'urn:ietf:params:oauth:grant-type:token-exchange';
const accessType = 'urn:ietf:params:oauth:token-type:access_token';

const provider = new Provider(issuer, {
  clients: [
    { client_id: 'caller', client_secret: 'caller-secret', scope: 'calc', grant_types: ['client_credentials'], redirect_uris: [], response_types: [] },
    { client_id: 'gateway', client_secret: 'gateway-secret', scope: 'calc', grant_types: ['client_credentials', grant], redirect_uris: [], response_types: [] },
  ],
  scopes: ['calc'],
  jwks: { keys: [jwk] },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => gateway,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (!resources.includes(indicator)) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
        return { scope: 'calc', audience: indicator, accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } } };
      },
    },
  },
});

const key = await importJWK(jwk, 'RS256');
provider.registerGrantType(grant, async (ctx) => {
  const { params, client } = ctx.oidc;
  if (params.subject_token_type !== accessType) throw new errors.InvalidRequest('subject_token_type must be an access token');
  const audience = params.audience || params.resource;
  if (audience !== upstream) throw new errors.InvalidTarget(`tokens are exchanged for ${upstream} only`);
  let claims;
  try {
    ({ payload: claims } = await jwtVerify(params.subject_token, publicKey, { issuer, audience: gateway }));
  } catch (e) {
    throw new errors.InvalidGrant(`the subject token is not one this server issued for the gateway: ${e.message}`);
  }
  const token = await new SignJWT({ scope: claims.scope, client_id: client.clientId, act: { sub: client.clientId } })
    .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'at+jwt' })
    .setIssuer(issuer).setSubject(claims.sub).setAudience(upstream)
    .setIssuedAt().setExpirationTime('5m').setJti(crypto.randomUUID())
    .sign(key);
  console.log(`exchanged ${claims.sub}`);
  ctx.body = { access_token: token, issued_token_type: accessType, token_type: 'Bearer', expires_in: 300 };
}, ['subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'resource', 'scope']);

provider.listen(port, '127.0.0.1', () => console.log(`issuer ${issuer}`));
