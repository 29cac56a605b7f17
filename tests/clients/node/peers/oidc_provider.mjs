// A certified OpenID provider (npm oidc-provider) for the client's sign-in
// tests (tests/testthat/test-client-oauth.R, RULES K10):
//   node oidc_provider.mjs PORT RESOURCE [ACCESS_TOKEN_TTL]
// serves the issuer http://127.0.0.1:PORT with dynamic registration, PKCE
// (S256) required, resource indicators (RFC 8707: JWT access tokens whose
// audience is RESOURCE, the MCP server's URL, valid ACCESS_TOKEN_TTL seconds,
// default 2), refresh tokens (rotated on each use, as for every public
// client), and the provider's development login and consent
// pages (any login name and password) for a browser-less user agent
// (oidc_user_agent.mjs). The resource's scopes are `mcp:tools` and
// `mcp:admin` (which one tool needs: the step-up test). Refresh tokens as
// the provider gives them by
// default: for `offline_access` asked with prompt=consent. One line per event
// on stdout, never a token:
//   ready ISSUER | registered CLIENT_ID GRANT_TYPES | authorized CLIENT_ID
//   | token GRANT_TYPE refresh_token|- (whether a refresh token came with it)
//   | refused GRANT_TYPE ERROR
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

const port = Number(process.argv[2]);
const resource = process.argv[3];
const ttl = Number(process.argv[4] ?? 2);
if (!port || !resource) {
  console.error('usage: node oidc_provider.mjs PORT RESOURCE [ACCESS_TOKEN_TTL]');
  process.exit(2);
}
const issuer = `http://127.0.0.1:${port}`;
const scope = 'mcp:tools';
// a scope one tool of the MCP server needs besides (the step-up test)
const admin = 'mcp:admin';

const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test-key' };

const provider = new Provider(issuer, {
  jwks: { keys: [jwk] },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  scopes: ['openid', 'offline_access', scope, admin],
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // a request that names no resource is for the MCP server too
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resource) {
          throw new Error(`unknown resource ${indicator}`);
        }
        return {
          scope: `${scope} ${admin}`,
          audience: resource,
          accessTokenTTL: ttl,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  pkce: { required: () => true },
  ttl: { AccessToken: ttl, RefreshToken: 3600, Grant: 3600, Session: 3600, Interaction: 600 },
});
provider.proxy = false;

const log = (...words) => process.stdout.write(`${words.join(' ')}\n`);
provider.on('registration_create.success', (ctx, client) => log('registered', client.clientId, client.grantTypes.join(',')));
provider.on('authorization.success', (ctx) => log('authorized', ctx.oidc.client?.clientId ?? '-'));
provider.on('grant.success', (ctx) => log('token', ctx.oidc.params.grant_type, ctx.oidc.entities.RefreshToken ? 'refresh_token' : '-'));
provider.on('grant.error', (ctx, err) => log('refused', ctx.oidc.params?.grant_type ?? '-', err.error ?? err.name));
provider.on('authorization.error', (ctx, err) => log('refused', 'authorization', err.error ?? err.name, err.error_description ?? ''));
provider.on('server_error', (ctx, err) => log('server_error', err.message));

provider.listen(port, '127.0.0.1', () => log('ready', issuer));
