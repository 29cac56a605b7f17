// An MCP server that takes only access tokens from one OpenID provider
// (oidc_provider.mjs), for the client's sign-in tests (RULES K10):
//   node oidc_protected_server.mjs PORT ISSUER
// Streamable HTTP on http://127.0.0.1:PORT/mcp (stateless), built with the
// official TypeScript SDK 1.x: its protected resource metadata router
// (RFC 9728) and requireBearerAuth, with a verifier that checks the JWT's
// signature against the provider's JWKS, its issuer, its audience (this
// server: RFC 8707), its expiry and its scope `mcp:tools`. One tool,
// `whoami`, answers with the token's subject, client and scopes (never the
// token); `admin` does the same but needs the scope `mcp:admin` besides:
// without it the call is refused with 403 and a `Bearer
// error="insufficient_scope"` challenge naming both scopes (a step-up, as
// the MCP authorization specification describes). One line per request on
// stdout: `mcp STATUS` (200, or the refusal's 401/403), and `ready URL` once
// it listens.
import express from 'express';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { mcpAuthMetadataRouter, getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';

const port = Number(process.argv[2]);
const issuer = process.argv[3];
if (!port || !issuer) {
  console.error('usage: node oidc_protected_server.mjs PORT ISSUER');
  process.exit(2);
}
const resource = new URL(`http://127.0.0.1:${port}/mcp`);
const scope = 'mcp:tools';

const oauthMetadata = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
const jwks = createRemoteJWKSet(new URL(oauthMetadata.jwks_uri));

const verifier = {
  async verifyAccessToken(token) {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, jwks, { issuer, audience: resource.href, typ: 'at+jwt' }));
    } catch (e) {
      throw new InvalidTokenError(`the token was refused: ${e.code ?? e.message}`);
    }
    return {
      token,
      clientId: payload.client_id,
      scopes: String(payload.scope ?? '').split(' ').filter(Boolean),
      expiresAt: payload.exp,
      resource: new URL(payload.aud),
      extra: { sub: payload.sub },
    };
  },
};

const app = express();
app.use(express.json());
app.use(mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: resource, scopesSupported: [scope] }));
app.use('/mcp', (req, res, next) => {
  res.on('finish', () => process.stdout.write(`mcp ${res.statusCode}\n`));
  next();
});
app.use('/mcp', requireBearerAuth({
  verifier,
  requiredScopes: [scope],
  resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(resource),
  expectedResource: resource,
}));
const admin = 'mcp:admin';
app.post('/mcp', (req, res, next) => {
  const call = req.body?.method === 'tools/call' && req.body?.params?.name === 'admin';
  if (call && !(req.auth?.scopes ?? []).includes(admin)) {
    const prm = getOAuthProtectedResourceMetadataUrl(resource);
    res.status(403)
      .set('WWW-Authenticate', `Bearer error="insufficient_scope", scope="${scope} ${admin}", resource_metadata="${prm}"`)
      .json({ error: 'insufficient_scope', error_description: `the tool needs ${admin}` });
    return;
  }
  next();
});
app.post('/mcp', async (req, res) => {
  const server = new McpServer({ name: 'oidc-protected', version: '1.0.0' });
  server.registerTool('whoami', { description: 'Who the token says the caller is.' }, async (extra) => {
    const who = { sub: extra.authInfo?.extra?.sub, client_id: extra.authInfo?.clientId, scopes: extra.authInfo?.scopes };
    return { content: [{ type: 'text', text: JSON.stringify(who) }], structuredContent: who };
  });
  server.registerTool('admin', { description: 'Who the token says the caller is; needs mcp:admin.' }, async (extra) => {
    const who = { sub: extra.authInfo?.extra?.sub, client_id: extra.authInfo?.clientId, scopes: extra.authInfo?.scopes };
    return { content: [{ type: 'text', text: JSON.stringify(who) }], structuredContent: who };
  });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => { transport.close(); server.close(); });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
app.all('/mcp', (req, res) => res.status(405).set('Allow', 'POST').end());

app.listen(port, '127.0.0.1', () => process.stdout.write(`ready ${resource.href}\n`));
