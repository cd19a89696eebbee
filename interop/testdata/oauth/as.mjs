// An OAuth 2.0 authorization server for the interop tests: oidc-provider,
// a certified OpenID Connect provider, with the client-credentials grant
// and resource indicators (RFC 8707), issuing JWT access tokens (RFC 9068)
// for one resource, the calculator's MCP endpoint.
//
//   PORT=4455 RESOURCE=http://127.0.0.1:8080/mcp node as.mjs
//
// Clients: "full" may have counter:write and calc:read; "reader" only
// calc:read. It prints "issuer <url>" once it listens, and
// "request <METHOD> <path>" for each request it gets.
import Provider from 'oidc-provider';
import { generateKeyPairSync } from 'node:crypto';

const port = Number(process.env.PORT);
const resource = process.env.RESOURCE;
const issuer = `http://127.0.0.1:${port}`;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = privateKey.export({ format: 'jwk' });
const client = (id, scope) => ({
  client_id: id, client_secret: `${id}-secret`, scope,
  grant_types: ['client_credentials'], redirect_uris: [], response_types: [],
});
const provider = new Provider(issuer, {
  clients: [client('full', 'counter:write calc:read'), client('reader', 'calc:read')],
  scopes: ['counter:write', 'calc:read'],
  jwks: { keys: [{ ...jwk, kid: 'interop-1', use: 'sig', alg: 'RS256' }] },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resource) throw new Error(`unknown resource ${indicator}`);
        return {
          scope: 'counter:write calc:read', audience: resource,
          accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
});
provider.use(async (ctx, next) => {
  console.log(`request ${ctx.method} ${ctx.path}`);
  await next();
});
provider.listen(port, '127.0.0.1', () => console.log(`issuer ${issuer}`));
