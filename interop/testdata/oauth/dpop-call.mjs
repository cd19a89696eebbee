// A DPoP client made of jose: it gets a DPoP-bound token from the
// authorization server as "dpopper" (with the server's nonce when asked),
// then sends GET URL with a fresh proof (again with the server's nonce
// when asked), and then the same proof once more. One JSON line:
//   node dpop-call.mjs ISSUER URL
import { generateKeyPair, exportJWK, SignJWT } from 'jose';
import { createHash, randomUUID } from 'node:crypto';

const [issuer, target] = process.argv.slice(2);
const { privateKey, publicKey } = await generateKeyPair('ES256');
const jwk = await exportJWK(publicKey);
const proof = (htm, htu, extra = {}) => new SignJWT({ htm, htu, jti: randomUUID(), ...extra })
  .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).setIssuedAt().sign(privateKey);

const tokenURL = `${issuer}/token`;
const ask = async (nonce) => fetch(tokenURL, {
  method: 'POST',
  headers: {
    'content-type': 'application/x-www-form-urlencoded',
    authorization: 'Basic ' + Buffer.from('dpopper:dpopper-secret').toString('base64'),
    dpop: await proof('POST', tokenURL, nonce ? { nonce } : {}),
  },
  body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'calc:read', resource: new URL(target).origin + '/mcp' }),
});
let res = await ask();
if (res.status === 400 && res.headers.get('dpop-nonce')) res = await ask(res.headers.get('dpop-nonce'));
const tok = await res.json();
if (!tok.access_token) { console.log(JSON.stringify({ error: tok })); process.exit(1); }
const ath = createHash('sha256').update(tok.access_token).digest('base64url');
const call = async (p) => fetch(target, { headers: { authorization: `DPoP ${tok.access_token}`, dpop: p } });
let p = await proof('GET', target, { ath });
let first = await call(p);
const challenged = first.status;
if (first.status === 401 && first.headers.get('dpop-nonce')) {
  p = await proof('GET', target, { ath, nonce: first.headers.get('dpop-nonce') });
  first = await call(p);
}
const again = await call(p);
console.log(JSON.stringify({
  tokenType: tok.token_type, challenged, status: first.status, body: await first.text(),
  replayStatus: again.status, replayChallenge: again.headers.get('www-authenticate'),
}));
