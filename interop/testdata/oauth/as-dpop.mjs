// An OAuth 2.0 authorization server for the DPoP interop test:
// oidc-provider with DPoP (RFC 9449, nonces required), the
// client-credentials grant and resource indicators, issuing JWT access
// tokens bound to the client's key (cnf.jkt) for one resource.
//
//   PORT=4455 RESOURCE=http://127.0.0.1:8080/mcp CLIENT_JWK='{"kty":"EC",...}' node as-dpop.mjs
//
// Clients: "workload" authenticates with a JWT signed by the private half
// of CLIENT_JWK (private_key_jwt); "dpopper" with the secret
// "dpopper-secret". It prints "issuer <url>" once it listens, and
// "request <METHOD> <path> <dpop?>" for each request it gets.
import Provider from 'oidc-provider';
import { generateKeyPairSync, randomBytes } from 'node:crypto';

const port = Number(process.env.PORT);
const resource = process.env.RESOURCE;
const issuer = `http://127.0.0.1:${port}`;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = privateKey.export({ format: 'jwk' });
const base = { scope: 'calc:read', grant_types: ['client_credentials'], redirect_uris: [], response_types: [] };
const provider = new Provider(issuer, {
  clients: [
    { ...base, client_id: 'workload', token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'ES256', jwks: { keys: [JSON.parse(process.env.CLIENT_JWK)] } },
    { ...base, client_id: 'dpopper', client_secret: 'dpopper-secret' },
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
provider.use(async (ctx, next) => {
  console.log(`request ${ctx.method} ${ctx.path} ${ctx.get('DPoP') ? 'dpop' : '-'}`);
  await next();
});
provider.listen(port, '127.0.0.1', () => console.log(`issuer ${issuer}`));
