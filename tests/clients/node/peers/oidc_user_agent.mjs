// A browser-less user agent for the client's sign-in tests (RULES K10.5):
//   node oidc_user_agent.mjs URL
// opens the authorization page URL as a browser would: follows redirects,
// keeps the provider's cookies (by name, per host), and submits the forms
// of oidc-provider's development pages (login: any name and password;
// consent: Continue), until a redirect leads to the client's loopback
// redirect URI (http://127.0.0.1:PORT/... or localhost), which it requests
// so that the client receives the code. Exits 0 once the client has
// answered, 1 otherwise (with what went wrong on stderr, never a code).
// OIDC_AGENT_DELAY (seconds): wait so long before opening the page, as a
// user who takes their time.
const start = process.argv[2];
if (!start) {
  console.error('usage: node oidc_user_agent.mjs URL');
  process.exit(2);
}
const delay = Number(process.env.OIDC_AGENT_DELAY ?? 0);
if (delay > 0) await new Promise((r) => setTimeout(r, delay * 1000));

const jar = new Map(); // host -> Map(name -> value)
const providerHost = new URL(start).host;

function keepCookies(url, res) {
  const host = new URL(url).host;
  const mine = jar.get(host) ?? new Map();
  for (const line of res.headers.getSetCookie()) {
    const [pair, ...attrs] = line.split(';');
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))
      || attrs.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]) < Date.now());
    if (expired || value === '') mine.delete(name); else mine.set(name, value);
  }
  jar.set(host, mine);
}

function cookieHeader(url) {
  const mine = jar.get(new URL(url).host);
  return mine && mine.size ? [...mine].map(([n, v]) => `${n}=${v}`).join('; ') : undefined;
}

async function request(url, init = {}) {
  const headers = { ...(init.headers ?? {}) };
  const cookie = cookieHeader(url);
  if (cookie) headers.cookie = cookie;
  const res = await fetch(url, { ...init, headers, redirect: 'manual' });
  keepCookies(url, res);
  return res;
}

const attr = (tag, name) => {
  const m = tag.match(new RegExp(`\\b${name}="([^"]*)"`, 'i'));
  return m ? m[1].replace(/&amp;/g, '&').replace(/&#x2F;/gi, '/').replace(/&quot;/g, '"') : undefined;
};

// The first form of a page, filled in as a user would.
function fillForm(html, base) {
  const form = html.match(/<form\b[^>]*>([\s\S]*?)<\/form>/i);
  if (!form) return null;
  const action = new URL(attr(form[0], 'action') ?? base, base).href;
  const body = new URLSearchParams();
  for (const input of form[1].match(/<input\b[^>]*>/gi) ?? []) {
    const name = attr(input, 'name');
    if (!name) continue;
    const type = (attr(input, 'type') ?? 'text').toLowerCase();
    let value = attr(input, 'value') ?? '';
    if (!value && name === 'login') value = 'r-user';
    if (!value && type === 'password') value = 'any password';
    body.append(name, value);
  }
  return { action, body };
}

const isCallback = (url) => {
  const u = new URL(url);
  return u.host !== providerHost && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
};

let url = start;
let init = {};
for (let step = 0; step < 20; step += 1) {
  if (isCallback(url)) {
    const res = await fetch(url, { redirect: 'manual' });
    await res.text();
    process.exit(res.ok ? 0 : 1);
  }
  const res = await request(url, init);
  init = {};
  if (res.status >= 300 && res.status < 400) {
    url = new URL(res.headers.get('location'), url).href;
    await res.text();
    continue;
  }
  const html = await res.text();
  if (res.status !== 200) {
    console.error(`the page ${new URL(url).pathname} answered ${res.status}`);
    process.exit(1);
  }
  const form = fillForm(html, url);
  if (!form) {
    console.error(`the page ${new URL(url).pathname} has no form and leads nowhere`);
    process.exit(1);
  }
  url = form.action;
  init = { method: 'POST', body: form.body, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
}
console.error('too many steps without reaching the redirect URI');
process.exit(1);
