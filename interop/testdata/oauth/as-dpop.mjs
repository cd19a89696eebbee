// An OAuth 2.0 authorization server for the DPoP interop test:
// oidc-provider with DPoP (RFC 9449, nonces required), the
// client-credentials grant and resource indicators, issuing JWT access
// tokens bound to the client's key (cnf.jkt) for one resource.
//
//   PORT=4455 RESOURCE=http://127.0.0.1:8080/mcp CLIENT_JWK='{"kty":"EC",...}' node as-dpop.mjs
//
// Clients: "workload" authenticates with a JWT signed by the private half
// of CLIENT_JWK (private_key_jwt); "dpopper" with the secret
// "dpopper-secret"; "federated" (no secret) presents a workload's token
// from a platform whose public key is PLATFORM_JWK, as the JWT bearer
// grant (RFC 7523, registered through oidc-provider's registerGrantType),
// and gets a token bound to the key of the DPoP proof it sends. It prints
// "issuer <url>" once it listens, "request <METHOD> <path> <dpop?>" for
// each request it gets, and "federated <sub>" for each JWT bearer grant.
import Provider, { errors } from 'oidc-provider';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { jwtVerify, SignJWT, importJWK, decodeProtectedHeader, calculateJwkThumbprint } from 'jose';

const port = Number(process.env.PORT);
const resource = process.env.RESOURCE;
const issuer = `http://127.0.0.1:${port}`;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = privateKey.export({ format: 'jwk' });
const jwtBearer = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const base = { scope: 'calc:read', grant_types: ['client_credentials'], redirect_uris: [], response_types: [] };
const provider = new Provider(issuer, {
  clients: [
    { ...base, client_id: 'workload', token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'ES256', jwks: { keys: [JSON.parse(process.env.CLIENT_JWK)] } },
    { ...base, client_id: 'dpopper', client_secret: 'dpopper-secret' },
    { ...base, client_id: 'federated', token_endpoint_auth_method: 'none', grant_types: [jwtBearer] },
  ],
  scopes: ['calc:read'],
  jwks: { keys: [{ ...jwk, kid: 'interop-dpop', use: 'sig', alg: 'RS256' }] },
  enabledJWA: { dPoPSigningAlgValues: ['ES256', 'EdDSA'] },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    dPoP: { enabled: true, nonceSecret: randomBytes(32), requireNonce: () => true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resource) throw new Error(`unknown resource ${indicator}`);
        return { scope: 'calc:read', audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } } };
      },
    },
  },
});
// The JWT bearer grant: the platform's token for a workload, for this
// authorization server, is the grant; the token issued is bound to the
// key of the request's DPoP proof, checked here as RFC 9449 says.
const signing = await importJWK({ ...jwk, alg: 'RS256' }, 'RS256');
const platform = await importJWK(JSON.parse(process.env.PLATFORM_JWK), 'ES256');
provider.registerGrantType(jwtBearer, async (ctx) => {
  const { params } = ctx.oidc;
  let claims;
  try {
    ({ payload: claims } = await jwtVerify(params.assertion, platform, { issuer: 'https://platform.example', audience: issuer }));
  } catch (e) {
    throw new errors.InvalidGrant(`the assertion is not the platform's for this server: ${e.message}`);
  }
  const proof = ctx.get('DPoP');
  if (!proof) throw new errors.InvalidRequest('a DPoP proof is required');
  const { jwk: proofKey } = decodeProtectedHeader(proof);
  const { payload: p } = await jwtVerify(proof, await importJWK(proofKey, 'ES256'), { typ: 'dpop+jwt' });
  if (p.htm !== 'POST' || p.htu !== `${issuer}/token`) throw new errors.InvalidRequest('the DPoP proof is for another request');
  const jkt = await calculateJwkThumbprint(proofKey);
  const token = await new SignJWT({ scope: 'calc:read', client_id: 'federated', cnf: { jkt } })
    .setProtectedHeader({ alg: 'RS256', kid: 'interop-dpop', typ: 'at+jwt' })
    .setIssuer(issuer).setSubject(claims.sub).setAudience(resource)
    .setIssuedAt().setExpirationTime('5m').setJti(randomUUID())
    .sign(signing);
  console.log(`federated ${claims.sub}`);
  ctx.body = { access_token: token, token_type: 'DPoP', expires_in: 300 };
}, ['assertion', 'scope', 'resource']);

provider.use(async (ctx, next) => {
  console.log(`request ${ctx.method} ${ctx.path} ${ctx.get('DPoP') ? 'dpop' : '-'}`);
  await next();
});
provider.listen(port, '127.0.0.1', () => console.log(`issuer ${issuer}`));
