//! Signing in to a Streamable HTTP server (RULES K10): OAuth 2.1 with the
//! authorization code and PKCE, as the MCP authorization specification
//! describes it. An [`Authorizer`] belongs to one `HttpLink`; the link asks
//! it for the `Authorization` header of each request and hands it every
//! 401, and every 403 whose challenge says `insufficient_scope`. Then,
//! holding its lock (so concurrent requests wait for one sign-in):
//!
//! 1. a 401 with a refresh token first tries to refresh;
//! 2. otherwise it signs in: discovery (`discovery.rs`: the challenge, the
//!    protected resource metadata, the authorization server metadata), the
//!    scopes (the challenge's, else the resource's `scopes_supported`, else
//!    none; `offline_access` when the server offers it; a step-up adds the
//!    challenged scopes to those asked for before), the client (given,
//!    a client ID metadata document, a registration kept from before, a
//!    dynamic registration, or `manual_client_info`), then the
//!    authorization request with PKCE (S256) and `resource`, answered on a
//!    loopback listener (`callback.rs`) after the user agent was given the
//!    URL, and the token request.
//!
//! Without a user (RULES K10.8, K10.9), the token comes instead from the
//! client-credentials grant (a secret, or an assertion signed with the
//! client's private key by `jsonwebtoken`), or from cross-app access (an
//! identity provider's ID token exchanged for a grant of this server's).
//!
//! The tokens and the client are kept in memory and, with a cache
//! directory, in a file only the user can read (`store.rs`). PKCE, the
//! authorization URL and the token endpoint (code, refresh, client
//! authentication `none`, `client_secret_basic`, `client_secret_post`) are
//! the `oauth2` crate's, over `ureq` agents with the link's TLS settings and
//! proxies (`net.rs`). No token is ever
//! written to a message, a log or an error.

mod assertion;
mod callback;
mod config;
pub mod discovery;
pub mod store;

use assertion::client_assertion;
use config::NO_SIGN_IN;
pub use config::{ClientInfo, IdentityProvider, OAuthConfig, OAuthError};

/// The grant and token types of cross-app access (RULES K10.9).
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::Receiver;
use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge, RedirectUrl,
    RefreshToken, Scope, TokenResponse, TokenUrl,
};
use serde_json::Value;
use url::Url;

use super::net::Net;
use discovery::{is_loopback, ServerMetadata};
pub use discovery::{parse_challenge, Challenge};
use store::{ClientIdentity, Saved, Tokens};

/// The time the user has spent at sign-in pages (RULES K10.5): from the
/// moment a page is given to the user agent until its answer (or the
/// sign-in's own limit). The clocks that bound a request (a connection's
/// `timeout`, `max_time`) do not run meanwhile: they are moved on by it.
#[derive(Debug, Default)]
pub struct SigningIn(Mutex<(Duration, Option<Instant>)>);

impl SigningIn {
    fn lock(&self) -> std::sync::MutexGuard<'_, (Duration, Option<Instant>)> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn begin(&self) {
        self.lock().1 = Some(Instant::now());
    }

    fn end(&self) {
        let mut g = self.lock();
        if let Some(t) = g.1.take() {
            g.0 += t.elapsed();
        }
    }

    /// The time spent signing in so far, a sign-in under way included.
    pub fn total(&self) -> Duration {
        let g = self.lock();
        g.0 + g.1.map(|t| t.elapsed()).unwrap_or_default()
    }
}

/// Gives the URL of the sign-in page to a user agent (the browser).
pub type OpenUrl = Arc<dyn Fn(&str) + Send + Sync>;

/// How many times one request may be signed in for (step-up included)
/// before its failure is final (RULES K10.4).
pub const MAX_ATTEMPTS: usize = 3;

/// The sign-in state of one connection.
pub struct Authorizer {
    cfg: OAuthConfig,
    server: Url,
    /// The link's agents (its proxies and TLS settings: RULES K4.6).
    net: Net,
    open: OpenUrl,
    state: Mutex<State>,
    pub signing_in: Arc<SigningIn>,
}

#[derive(Default)]
struct State {
    saved: Saved,
    metadata: Option<ServerMetadata>,
    /// The scopes last asked for.
    requested: Option<String>,
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// A GET of a JSON document: `None` for an error status or a body that is
/// not a JSON object, an error when the server cannot be reached.
pub(crate) fn get_json(net: &Net, url: &Url) -> Result<Option<Value>, OAuthError> {
    let resp = net
        .agent(url.as_str())
        .get(url.as_str())
        .header("Accept", "application/json")
        .call()
        .map_err(|e| OAuthError::new(format!("cannot fetch `{url}`: {e}")))?;
    if !resp.status().is_success() {
        return Ok(None);
    }
    let body = resp
        .into_body()
        .into_with_config()
        .limit(1 << 20)
        .read_to_vec()
        .map_err(|e| OAuthError::new(format!("cannot read `{url}`: {e}")))?;
    Ok(serde_json::from_slice::<Value>(&body).ok().filter(Value::is_object))
}

/// The `oauth2` crate's HTTP client: the link's agents (no redirects).
struct Http<'a>(&'a Net);

impl oauth2::SyncHttpClient for Http<'_> {
    type Error = oauth2::HttpClientError<ureq::Error>;

    fn call(&self, request: oauth2::HttpRequest) -> Result<oauth2::HttpResponse, Self::Error> {
        let agent = self.0.agent(&request.uri().to_string()).clone();
        let resp = agent.run(request).map_err(Box::new)?;
        let (parts, body) = resp.into_parts();
        let bytes = body.into_with_config().limit(1 << 20).read_to_vec().map_err(Box::new)?;
        Ok(oauth2::http::Response::from_parts(parts, bytes))
    }
}

type TokenError = oauth2::RequestTokenError<
    oauth2::HttpClientError<ureq::Error>,
    oauth2::StandardErrorResponse<oauth2::basic::BasicErrorResponseType>,
>;

/// A token endpoint failure in words (the server's error, never a token).
fn token_error(what: &str, e: TokenError) -> OAuthError {
    let why = match e {
        oauth2::RequestTokenError::ServerResponse(r) => match r.error_description() {
            Some(d) => format!("{} ({d})", r.error()),
            None => r.error().to_string(),
        },
        oauth2::RequestTokenError::Request(e) => format!("the request failed: {e}"),
        oauth2::RequestTokenError::Parse(_, _) => "its answer is not a token response".into(),
        oauth2::RequestTokenError::Other(m) => m,
    };
    OAuthError::new(format!("the authorization server refused the {what}: {why}"))
}

/// Scopes as a set in order: `a` then what `b` adds.
fn union(a: Option<&str>, b: Option<&str>) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for s in a.into_iter().chain(b).flat_map(str::split_whitespace) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}

impl Authorizer {
    /// Settings for the server at `server`; a saved sign-in is loaded.
    pub fn new(cfg: OAuthConfig, server: &str, net: Net, open: OpenUrl) -> Result<Authorizer, OAuthError> {
        let mut url = Url::parse(server).map_err(|e| OAuthError::new(format!("`{server}` is not a URL ({e})")))?;
        url.set_fragment(None);
        let mut saved =
            cfg.cache_dir.as_deref().and_then(|d| store::load(&PathBuf::from(d), url.as_str())).unwrap_or_default();
        saved.server = url.to_string();
        Ok(Authorizer {
            cfg,
            server: url,
            net,
            open,
            state: Mutex::new(State { saved, ..State::default() }),
            signing_in: Arc::new(SigningIn::default()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn persist(&self, st: &State) {
        if let Some(d) = &self.cfg.cache_dir {
            // A cache that cannot be written only costs a sign-in later.
            let _ = store::save(&PathBuf::from(d), &st.saved);
        }
    }

    /// The `Authorization` header for the next request, if signed in; a
    /// token about to expire is refreshed first when it can be.
    pub fn header(&self) -> Option<String> {
        let mut st = self.lock();
        let expiring = st
            .saved
            .tokens
            .as_ref()
            .is_some_and(|t| t.expires_at.is_some_and(|at| at <= now_secs() + 30) && t.refresh_token.is_some());
        if expiring {
            let _ = self.refresh(&mut st);
        }
        st.saved.tokens.as_ref().map(|t| format!("Bearer {}", t.access_token))
    }

    /// The server refused a request that carried `sent` (the header sent,
    /// if any) with `status` and `challenge`. Sign in (or refresh, or step
    /// up) so that the request can be sent again; `stop` closes when the
    /// request is abandoned.
    pub fn unauthorized(
        &self,
        status: u16,
        challenge: &Challenge,
        sent: Option<&str>,
        stop: &Receiver<()>,
    ) -> Result<(), OAuthError> {
        let mut st = self.lock();
        let current = st.saved.tokens.as_ref().map(|t| format!("Bearer {}", t.access_token));
        if current.is_some() && current.as_deref() != sent {
            // Another request signed in meanwhile: try its token.
            return Ok(());
        }
        let step_up = status == 403;
        if !step_up
            && st.saved.tokens.as_ref().is_some_and(|t| t.refresh_token.is_some())
            && self.refresh(&mut st).is_ok()
        {
            return Ok(());
        }
        let scope = if step_up { union(st.requested.as_deref(), challenge.scope.as_deref()) } else { None };
        self.sign_in(&mut st, challenge, scope, stop)
    }

    /// Use the refresh token (RULES K10.6); a refusal forgets the tokens.
    fn refresh(&self, st: &mut State) -> Result<(), OAuthError> {
        let (Some(tokens), Some(endpoint), Some(client)) =
            (st.saved.tokens.clone(), st.saved.token_endpoint.clone(), st.saved.client.clone())
        else {
            return Err(OAuthError::new("nothing to refresh"));
        };
        let Some(rt) = tokens.refresh_token.clone() else { return Err(OAuthError::new("no refresh token")) };
        let oc = oauth_client(&client, None, &endpoint, None, st.metadata.as_ref())?;
        let rt = RefreshToken::new(rt);
        let mut req = oc.exchange_refresh_token(&rt);
        if let Some(r) = &st.saved.resource {
            req = req.add_extra_param("resource", r.clone());
        }
        let issuer = st.saved.issuer.clone().unwrap_or_default();
        for (k, v) in client_assertion(&client, &issuer, st.metadata.as_ref())? {
            req = req.add_extra_param(k, v);
        }
        match req.request(&Http(&self.net)) {
            Ok(t) => {
                let mut new = tokens_from(&t);
                if new.refresh_token.is_none() {
                    new.refresh_token = tokens.refresh_token;
                }
                if new.scope.is_none() {
                    new.scope = tokens.scope;
                }
                st.saved.tokens = Some(new);
                self.persist(st);
                Ok(())
            }
            Err(e) => {
                st.saved.tokens = None;
                self.persist(st);
                Err(token_error("refresh", e))
            }
        }
    }

    /// The whole sign-in. `step_up`: the scopes to ask for after an
    /// `insufficient_scope` refusal.
    fn sign_in(
        &self,
        st: &mut State,
        challenge: &Challenge,
        step_up: Option<String>,
        stop: &Receiver<()>,
    ) -> Result<(), OAuthError> {
        let cfg = &self.cfg;
        // RULES K10.7: credentials cross the network only encrypted.
        if self.server.scheme() == "http" && !is_loopback(&self.server) && !cfg.allow_http {
            return Err(OAuthError::new(
                "the server is plain http:// on another machine: a token would cross the network unencrypted \
                 (use https://, or set `allow_http`)",
            ));
        }
        let allow_http = cfg.allow_http;
        // Discovery (RULES K10.2, K10.3).
        let prm = discovery::protected_resource(&self.net, &self.server, challenge, allow_http)?;
        let prm_resource = match prm.as_ref().and_then(|p| p.metadata.get("resource")).and_then(Value::as_str) {
            Some(r) => Some(discovery::check_resource(r, &self.server)?.to_string()),
            None => None,
        };
        let resource = cfg.resource.clone().or(prm_resource).unwrap_or_else(|| self.server.to_string());
        let named = prm
            .as_ref()
            .and_then(|p| p.metadata.get("authorization_servers"))
            .and_then(Value::as_array)
            .and_then(|a| a.iter().find_map(Value::as_str))
            .map(String::from);
        let legacy = prm.is_none() && cfg.authorization_server.is_none();
        let issuer = match cfg.authorization_server.clone().or(named) {
            Some(i) => {
                Url::parse(&i).map_err(|_| OAuthError::new(format!("the authorization server `{i}` is not a URL")))?
            }
            None if prm.is_none() => {
                let mut o = self.server.clone();
                o.set_path("/");
                o.set_query(None);
                o
            }
            None => return Err(OAuthError::new("the protected resource metadata names no authorization server")),
        };
        let meta = discovery::server_metadata(&self.net, &issuer, legacy, allow_http)?;

        // Scopes (RULES K10.4).
        let override_scope = cfg.scope_mode.as_deref() == Some("override") && cfg.scope.is_some();
        let scope = if override_scope {
            cfg.scope.clone()
        } else {
            let supported = prm
                .as_ref()
                .and_then(|p| p.metadata.get("scopes_supported"))
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" "))
                .filter(|s| !s.is_empty());
            let base = step_up.or_else(|| challenge.scope.clone()).or(supported);
            let mut s = union(base.as_deref(), cfg.scope.as_deref());
            let offers_offline =
                meta.scopes_supported.as_ref().is_some_and(|v| v.iter().any(|x| x == "offline_access"));
            if offers_offline && s.is_some() {
                s = union(s.as_deref(), Some("offline_access"));
            }
            s
        };

        // The client credentials of the extension (RULES K10.8): no user,
        // no page, no redirect.
        if self.client_credentials(&meta) {
            return self.client_credentials_grant(st, &meta, scope, resource);
        }
        // Cross-app access (RULES K10.9): the identity provider's ID token
        // exchanged for an assertion, the assertion for a token.
        if self.cfg.grant_type.as_deref() == Some("cross_app_access")
            || (self.cfg.grant_type.is_none() && self.cfg.identity_provider.is_some())
        {
            return self.cross_app_access(st, &meta, scope, resource);
        }
        meta.require_code_flow()?;

        // The client and its redirect (RULES K10.5).
        let same_issuer = st.saved.issuer.as_deref() == Some(meta.issuer.as_str());
        let kept = st.saved.client.clone().filter(|c| same_issuer && c.redirect_uri.is_some());
        let (client, callback) = self.client(&meta, kept, scope.as_deref())?;
        self.remember(st, &meta, &client, &resource, scope.as_ref());

        // The authorization request, PKCE with S256 (RULES K10.4).
        let oc = oauth_client(
            &client,
            Some(&meta.authorization_endpoint),
            &meta.token_endpoint,
            Some(&callback.redirect_uri),
            Some(&meta),
        )?;
        let (challenge_code, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut auth = oc
            .authorize_url(CsrfToken::new_random)
            .map_err(|e| OAuthError::new(format!("cannot build the authorization request: {e}")))?
            .set_pkce_challenge(challenge_code);
        if let Some(s) = &scope {
            auth = auth.add_scopes(s.split_whitespace().map(|x| Scope::new(x.to_string())));
        }
        // OpenID Connect Core 1.0, section 11: `offline_access` (a refresh
        // token) is granted only on a request with `prompt=consent`; an
        // OpenID provider drops the scope otherwise (RULES K10.4).
        if scope.as_deref().is_some_and(|s| s.split_whitespace().any(|x| x == "offline_access")) {
            auth = auth.add_extra_param("prompt", "consent");
        }
        let (url, state) = auth.add_extra_param("resource", resource.clone()).url();
        // The sign-in's own clock (RULES K10.5), not the request's.
        let limit = cfg.timeout.unwrap_or(300.0).clamp(1.0, 86_400.0);
        self.signing_in.begin();
        (self.open)(url.as_str());
        let answer = callback.wait(Instant::now() + Duration::from_secs_f64(limit), stop);
        self.signing_in.end();
        let params = answer.map_err(|e| match e.0.as_str() {
            callback::NOT_IN_TIME => OAuthError::new(format!(
                "the sign-in was not completed within {limit} seconds (`oauth$timeout`): no answer came from the \
                 browser to the sign-in page"
            )),
            _ => e,
        })?;
        let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        // RFC 9207 (RULES K10.4): the response comes from the issuer asked.
        match get("iss") {
            Some(iss) if iss != meta.issuer => {
                return Err(OAuthError::new(format!(
                    "the authorization response came from issuer `{iss}`, not `{}`: refusing it",
                    meta.issuer
                )))
            }
            None if meta.iss_parameter_supported => {
                return Err(OAuthError::new("the authorization response has no `iss` although the server sends it"))
            }
            _ => {}
        }
        if get("state").as_deref() != Some(state.secret().as_str()) {
            return Err(OAuthError::new("the authorization response does not carry the request's state: refusing it"));
        }
        if let Some(err) = get("error") {
            let desc = get("error_description").map(|d| format!(" ({d})")).unwrap_or_default();
            return Err(OAuthError::new(format!("the authorization server refused the sign-in: {err}{desc}")));
        }
        let code = get("code").ok_or_else(|| OAuthError::new("the authorization response has no code"))?;
        let mut req = oc
            .exchange_code(AuthorizationCode::new(code))
            .set_pkce_verifier(verifier)
            .add_extra_param("resource", resource);
        for (k, v) in client_assertion(&client, &meta.issuer, Some(&meta))? {
            req = req.add_extra_param(k, v);
        }
        let t = req.request(&Http(&self.net)).map_err(|e| token_error("authorization code", e))?;
        self.keep_tokens(st, &t, scope);
        Ok(())
    }

    /// Who signs in where, kept (and written) before the token request; the
    /// tokens of before are forgotten.
    fn remember(
        &self,
        st: &mut State,
        meta: &ServerMetadata,
        client: &ClientIdentity,
        resource: &str,
        scope: Option<&String>,
    ) {
        st.saved.issuer = Some(meta.issuer.clone());
        st.saved.token_endpoint = Some(meta.token_endpoint.clone());
        st.saved.resource = Some(resource.to_string());
        st.saved.client = Some(client.clone());
        st.saved.tokens = None;
        st.metadata = Some(meta.clone());
        st.requested = scope.cloned();
        self.persist(st);
    }

    /// Keep the tokens of a token response (the scopes asked when it names
    /// none).
    fn keep_tokens(&self, st: &mut State, t: &impl TokenResponse, scope: Option<String>) {
        let mut tokens = tokens_from(t);
        if tokens.scope.is_none() {
            tokens.scope = scope;
        }
        st.saved.tokens = Some(tokens);
        self.persist(st);
    }

    /// Use the client-credentials grant (RULES K10.8)? As `grant_type`
    /// says; by default when the server lists it and not the authorization
    /// code, and `client_info` can authenticate.
    fn client_credentials(&self, meta: &ServerMetadata) -> bool {
        match self.cfg.grant_type.as_deref() {
            Some(g) => g == "client_credentials",
            None => {
                let lists = |g: &str| meta.grant_types.as_ref().is_some_and(|v| v.iter().any(|x| x == g));
                lists("client_credentials")
                    && !lists("authorization_code")
                    && self.cfg.client_info.as_ref().is_some_and(ClientInfo::has_credentials)
            }
        }
    }

    /// The token request of the client-credentials grant: the client
    /// authenticates with its secret (`client_secret_basic` or `_post`) or
    /// a signed assertion (`private_key_jwt`), for the scopes and resource.
    fn client_credentials_grant(
        &self,
        st: &mut State,
        meta: &ServerMetadata,
        scope: Option<String>,
        resource: String,
    ) -> Result<(), OAuthError> {
        let info = self.cfg.client_info.as_ref().filter(|i| i.has_credentials()).ok_or_else(|| {
            OAuthError::new(
                "the client-credentials grant needs `oauth$client_info` with a `client_secret`, a `private_key_file` \
                 or a `private_key_env`",
            )
        })?;
        let client = info.identity();
        let assertion = client_assertion(&client, &meta.issuer, Some(meta))?;
        self.remember(st, meta, &client, &resource, scope.as_ref());
        let oc = oauth_client(&client, None, &meta.token_endpoint, None, Some(meta))?;
        let mut req = oc.exchange_client_credentials().add_extra_param("resource", resource);
        if let Some(s) = &scope {
            req = req.add_scopes(s.split_whitespace().map(|x| Scope::new(x.to_string())));
        }
        for (k, v) in assertion {
            req = req.add_extra_param(k, v);
        }
        let t = req.request(&Http(&self.net)).map_err(|e| token_error("client credentials", e))?;
        self.keep_tokens(st, &t, scope);
        Ok(())
    }

    /// Cross-app access (RULES K10.9; the enterprise-managed authorization
    /// extension): the user's ID token from their identity provider is
    /// exchanged there (RFC 8693) for an identity assertion grant (ID-JAG)
    /// for this authorization server and resource, which the client then
    /// presents here (the JWT bearer grant, RFC 7523), authenticating as
    /// `client_info`.
    fn cross_app_access(
        &self,
        st: &mut State,
        meta: &ServerMetadata,
        scope: Option<String>,
        resource: String,
    ) -> Result<(), OAuthError> {
        let idp = self
            .cfg
            .identity_provider
            .as_ref()
            .ok_or_else(|| OAuthError::new("cross-app access needs `oauth$identity_provider`"))?;
        let info = self.cfg.client_info.as_ref().ok_or_else(|| {
            OAuthError::new("cross-app access needs `oauth$client_info` (the client at the authorization server)")
        })?;
        let allow_http = self.cfg.allow_http;
        let idp_endpoint = match (&idp.token_endpoint, &idp.issuer) {
            (Some(t), _) => t.clone(),
            (None, Some(i)) => {
                let issuer =
                    Url::parse(i).map_err(|_| OAuthError::new(format!("the identity provider `{i}` is not a URL")))?;
                discovery::server_metadata(&self.net, &issuer, false, allow_http)?.token_endpoint
            }
            (None, None) => return Err(OAuthError::new("`oauth$identity_provider` names no token endpoint")),
        };
        let idp_url = Url::parse(&idp_endpoint).map_err(|_| {
            OAuthError::new(format!("the identity provider's token endpoint `{idp_endpoint}` is not a URL"))
        })?;
        discovery::check_secure("identity provider's token endpoint", &idp_url, allow_http)?;
        let id_token = match (&idp.id_token_file, &idp.id_token_env) {
            (Some(f), _) => std::fs::read_to_string(f)
                .map(|t| t.trim().to_string())
                .map_err(|e| OAuthError::new(format!("cannot read the ID token file `{f}`: {}", e.kind())))?,
            (None, Some(v)) => std::env::var(v)
                .map(|t| t.trim().to_string())
                .map_err(|_| OAuthError::new(format!("the environment variable `{v}` (the ID token) is not set")))?,
            (None, None) => return Err(OAuthError::new("`oauth$identity_provider` gives no ID token")),
        };
        // 1. At the identity provider: the ID token for an ID-JAG.
        let mut params = vec![
            ("grant_type", TOKEN_EXCHANGE.to_string()),
            ("requested_token_type", ID_JAG.to_string()),
            ("subject_token", id_token),
            ("subject_token_type", ID_TOKEN.to_string()),
            ("audience", meta.issuer.clone()),
            ("resource", resource.clone()),
        ];
        if let Some(s) = &scope {
            params.push(("scope", s.clone()));
        }
        let basic = idp.client_secret.as_ref().map(|s| (idp.client_id.clone(), s.clone()));
        if basic.is_none() {
            params.push(("client_id", idp.client_id.clone()));
        }
        let v = self.form_post(&idp_endpoint, &params, basic, "the token exchange at the identity provider")?;
        let issued = v.get("issued_token_type").and_then(Value::as_str);
        let jag =
            match (v.get("access_token").and_then(Value::as_str), issued) {
                (Some(t), Some(ID_JAG)) if !t.is_empty() => t.to_string(),
                _ => return Err(OAuthError::new(
                    "the identity provider's answer to the token exchange is not an identity assertion grant (ID-JAG)",
                )),
            };
        // 2. Here: the ID-JAG for a token, the client authenticating itself.
        let client = info.identity();
        let mut params = vec![("grant_type", JWT_BEARER.to_string()), ("assertion", jag)];
        if let Some(s) = &scope {
            params.push(("scope", s.clone()));
        }
        let method = auth_method(&client, Some(meta));
        let basic = match (method.as_str(), &client.client_secret) {
            ("client_secret_basic", Some(s)) => Some((client.client_id.clone(), s.clone())),
            ("client_secret_post", Some(s)) => {
                params.push(("client_id", client.client_id.clone()));
                params.push(("client_secret", s.clone()));
                None
            }
            _ => {
                params.push(("client_id", client.client_id.clone()));
                None
            }
        };
        for (k, v) in client_assertion(&client, &meta.issuer, Some(meta))? {
            params.push((k, v));
        }
        let v = self.form_post(&meta.token_endpoint, &params, basic, "the identity assertion grant")?;
        let t: oauth2::basic::BasicTokenResponse = serde_json::from_value(v).map_err(|_| {
            OAuthError::new(
                "the authorization server refused the identity assertion grant: its answer is not a token response",
            )
        })?;
        self.remember(st, meta, &client, &resource, scope.as_ref());
        self.keep_tokens(st, &t, scope);
        Ok(())
    }

    /// A form POST to a token endpoint (client authentication with HTTP
    /// Basic when `basic` is given, names and secrets form-encoded as RFC
    /// 6749, section 2.3.1 says); the JSON object of a 2xx answer. A refusal
    /// is an error with the server's `error` and description, never a token.
    fn form_post(
        &self,
        endpoint: &str,
        params: &[(&str, String)],
        basic: Option<(String, String)>,
        what: &str,
    ) -> Result<Value, OAuthError> {
        use base64::Engine as _;
        let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params.iter().map(|(k, v)| (*k, v.as_str())))
            .finish();
        let mut req = self
            .net
            .agent(endpoint)
            .post(endpoint)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header("Accept", "application/json");
        if let Some((id, secret)) = basic {
            let pair = base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", enc(&id), enc(&secret)));
            req = req.header("Authorization", format!("Basic {pair}"));
        }
        let resp =
            req.send(body.as_bytes()).map_err(|e| OAuthError::new(format!("{what} at `{endpoint}` failed: {e}")))?;
        let status = resp.status().as_u16();
        let bytes = resp.into_body().into_with_config().limit(1 << 20).read_to_vec().unwrap_or_default();
        let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if !(200..300).contains(&status) || !v.is_object() {
            let s = |k: &str| v.get(k).and_then(Value::as_str);
            let why = match (s("error"), s("error_description")) {
                (Some(e), Some(d)) => format!("{e} ({d})"),
                (Some(e), None) => e.to_string(),
                _ => format!("HTTP {status}, no OAuth error in the answer"),
            };
            return Err(OAuthError::new(format!("{what} was refused: {why}")));
        }
        Ok(v)
    }

    /// Who the client is, and the listener its redirect reaches: given,
    /// a metadata document, kept from an earlier registration, registered
    /// now, or `manual_client_info` (the specification's order).
    fn client(
        &self,
        meta: &ServerMetadata,
        kept: Option<ClientIdentity>,
        scope: Option<&str>,
    ) -> Result<(ClientIdentity, callback::Callback), OAuthError> {
        let cfg = &self.cfg;
        let bind = || match &cfg.redirect_uri {
            Some(u) => callback::Callback::bind_uri(u),
            None => callback::Callback::bind(
                cfg.callback_host.as_deref().unwrap_or("127.0.0.1"),
                cfg.callback_port.unwrap_or(0),
                cfg.callback_path.as_deref().unwrap_or("/callback"),
            ),
        };
        let given = ClientInfo::identity;
        if let Some(info) = &cfg.client_info {
            return Ok((given(info), bind()?));
        }
        if let (true, Some(url)) = (meta.cimd_supported, &cfg.client_metadata_url) {
            let id = ClientIdentity {
                client_id: url.clone(),
                token_endpoint_auth_method: Some("none".into()),
                ..ClientIdentity::default()
            };
            return Ok((id, bind()?));
        }
        let explicit_redirect = cfg.redirect_uri.is_some() || cfg.callback_port.is_some();
        // A registration is kept only for scopes it was registered for: an
        // authorization server may refuse others to that client (a step-up
        // registers anew for the wider scopes).
        let covers = |k: &ClientIdentity| match (&k.scope, scope) {
            (Some(registered), Some(asked)) => {
                asked.split_whitespace().all(|s| registered.split_whitespace().any(|r| r == s))
            }
            _ => true,
        };
        if let Some(k) = kept.filter(covers) {
            // The same redirect again: its port when it is free.
            let again = match (&cfg.redirect_uri, &k.redirect_uri) {
                (None, Some(r)) if !explicit_redirect => callback::Callback::bind_uri(r).ok(),
                _ => bind().ok().filter(|c| Some(&c.redirect_uri) == k.redirect_uri.as_ref()),
            };
            if let Some(cb) = again {
                return Ok((k, cb));
            }
        }
        if let Some(endpoint) = &meta.registration_endpoint {
            let cb = bind()?;
            let id = match self.register(endpoint, &cb.redirect_uri, scope) {
                Err(e) if meta.defaults && cfg.manual_client_info.is_none() => {
                    return Err(OAuthError::new(format!("{NO_SIGN_IN} ({})", e.0)))
                }
                Err(e) if !meta.defaults => return Err(e),
                Err(_) => given(cfg.manual_client_info.as_ref().expect("checked")),
                Ok(id) => id,
            };
            return Ok((id, cb));
        }
        if let Some(info) = &cfg.manual_client_info {
            return Ok((given(info), bind()?));
        }
        Err(OAuthError::new(format!(
            "the authorization server `{}` offers no way to register this client: give one in `oauth$client_info`",
            meta.issuer
        )))
    }

    /// Dynamic client registration (RFC 7591).
    fn register(&self, endpoint: &str, redirect_uri: &str, scope: Option<&str>) -> Result<ClientIdentity, OAuthError> {
        let mut body = serde_json::Map::new();
        body.insert("client_name".into(), Value::from("mcplite"));
        body.insert("redirect_uris".into(), Value::from(vec![redirect_uri]));
        body.insert("grant_types".into(), Value::from(vec!["authorization_code", "refresh_token"]));
        body.insert("response_types".into(), Value::from(vec!["code"]));
        body.insert("token_endpoint_auth_method".into(), Value::from("none"));
        body.insert("application_type".into(), Value::from("native"));
        if let Some(s) = scope {
            body.insert("scope".into(), Value::from(s));
        }
        for (k, v) in self.cfg.client_metadata.iter().flatten() {
            body.insert(k.clone(), v.clone());
        }
        let body_scope = body.get("scope").and_then(Value::as_str).map(String::from);
        let text = Value::Object(body).to_string();
        let resp = self
            .net
            .agent(endpoint)
            .post(endpoint)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .send(text.as_bytes())
            .map_err(|e| OAuthError::new(format!("the client registration at `{endpoint}` failed: {e}")))?;
        let status = resp.status().as_u16();
        let bytes = resp.into_body().into_with_config().limit(1 << 20).read_to_vec().unwrap_or_default();
        let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if !(200..300).contains(&status) {
            let why = v.get("error_description").or_else(|| v.get("error")).and_then(Value::as_str).unwrap_or("");
            return Err(OAuthError::new(format!(
                "the authorization server refused to register this client (HTTP {status}{}{why})",
                if why.is_empty() { "" } else { ": " }
            )));
        }
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        let client_id =
            s("client_id").ok_or_else(|| OAuthError::new("the client registration returned no client_id"))?;
        Ok(ClientIdentity {
            client_id,
            client_secret: s("client_secret"),
            token_endpoint_auth_method: s("token_endpoint_auth_method"),
            redirect_uri: Some(redirect_uri.to_string()),
            scope: s("scope").or_else(|| body_scope.clone()),
            ..ClientIdentity::default()
        })
    }
}

type Client = oauth2::Client<
    oauth2::StandardErrorResponse<oauth2::basic::BasicErrorResponseType>,
    oauth2::StandardTokenResponse<oauth2::EmptyExtraTokenFields, oauth2::basic::BasicTokenType>,
    oauth2::StandardTokenIntrospectionResponse<oauth2::EmptyExtraTokenFields, oauth2::basic::BasicTokenType>,
    oauth2::StandardRevocableToken,
    oauth2::StandardErrorResponse<oauth2::RevocationErrorResponseType>,
    oauth2::EndpointMaybeSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointSet,
>;

/// The `oauth2` client for a client identity: its authentication at the
/// token endpoint is its own method, else `client_secret_basic` when it has
/// a secret and the server accepts it, else `client_secret_post`.
fn oauth_client(
    id: &ClientIdentity,
    auth_endpoint: Option<&str>,
    token_endpoint: &str,
    redirect: Option<&str>,
    meta: Option<&ServerMetadata>,
) -> Result<Client, OAuthError> {
    let bad = |what: &str, u: &str| OAuthError::new(format!("the {what} `{u}` is not a URL"));
    let auth =
        auth_endpoint.map(|u| AuthUrl::new(u.to_string()).map_err(|_| bad("authorization endpoint", u))).transpose()?;
    let mut c = BasicClient::new(ClientId::new(id.client_id.clone()))
        .set_auth_uri_option(auth)
        .set_token_uri(TokenUrl::new(token_endpoint.to_string()).map_err(|_| bad("token endpoint", token_endpoint))?);
    if let Some(r) = redirect {
        c = c.set_redirect_uri(RedirectUrl::new(r.to_string()).map_err(|_| bad("redirect URI", r))?);
    }
    match (auth_method(id, meta).as_str(), &id.client_secret) {
        ("client_secret_basic", Some(s)) => {
            c = c.set_client_secret(ClientSecret::new(s.clone())).set_auth_type(AuthType::BasicAuth);
        }
        ("client_secret_post", Some(s)) => {
            c = c.set_client_secret(ClientSecret::new(s.clone())).set_auth_type(AuthType::RequestBody);
        }
        _ => c = c.set_auth_type(AuthType::RequestBody),
    }
    Ok(c)
}

/// How a client authenticates at the token endpoint (RULES K10.6): its own
/// method; else `private_key_jwt` with a private key; else, with a secret,
/// `client_secret_basic` when the server accepts it, else
/// `client_secret_post`; else `none`.
fn auth_method(id: &ClientIdentity, meta: Option<&ServerMetadata>) -> String {
    id.token_endpoint_auth_method.clone().unwrap_or_else(|| {
        let accepted = meta.and_then(|m| m.auth_methods.clone()).unwrap_or_default();
        if id.private_key_file.is_some() || id.private_key_env.is_some() {
            "private_key_jwt".into()
        } else if id.client_secret.is_none() {
            "none".into()
        } else if accepted.is_empty() || accepted.iter().any(|m| m == "client_secret_basic") {
            "client_secret_basic".into()
        } else {
            "client_secret_post".into()
        }
    })
}

fn tokens_from(t: &impl TokenResponse) -> Tokens {
    Tokens {
        access_token: t.access_token().secret().clone(),
        refresh_token: t.refresh_token().map(|r| r.secret().clone()),
        expires_at: t.expires_in().map(|d| now_secs() + d.as_secs()),
        scope: t.scopes().map(|s| s.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(" ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_united_in_order() {
        assert_eq!(union(Some("a b"), Some("b c")).as_deref(), Some("a b c"));
        assert_eq!(union(None, Some("x")).as_deref(), Some("x"));
        assert_eq!(union(None, None), None);
        assert_eq!(union(Some(" "), None), None);
    }

    /// A scripted authorization server on a loopback port: each request's
    /// method, path, headers (lower-case names) and body are recorded, and
    /// answered by `answer(path)` (status, extra header lines, body).
    struct FakeAs {
        base: String,
        seen: Arc<Mutex<Vec<Seen>>>,
    }

    /// A request: method, path, headers, body.
    type Seen = (String, String, Vec<(String, String)>, String);

    fn fake_as(answer: impl Fn(&str, &str) -> (u16, String, String) + Send + 'static) -> FakeAs {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (rec, b) = (Arc::clone(&seen), base.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut r = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    continue;
                }
                let mut parts = line.split_whitespace();
                let (method, path) = (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
                let mut headers = Vec::new();
                loop {
                    let mut h = String::new();
                    if r.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':') {
                        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
                    }
                }
                let n =
                    headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
                let mut body = vec![0; n];
                let _ = r.read_exact(&mut body);
                let (status, extra, text) = answer(&path, &b);
                rec.lock().unwrap().push((method, path, headers, String::from_utf8_lossy(&body).into_owned()));
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{text}",
                    text.len()
                );
            }
        });
        FakeAs { base, seen }
    }

    /// The metadata of a client-credentials server at `base`, and `token`
    /// as its token endpoint's answer.
    fn cc_server(token: (u16, &'static str, &'static str)) -> FakeAs {
        fake_as(move |path, base| match path {
            "/.well-known/oauth-protected-resource/mcp" => {
                (200, String::new(), format!(r#"{{"resource":"{base}/mcp","authorization_servers":["{base}"]}}"#))
            }
            "/.well-known/oauth-authorization-server" => (
                200,
                String::new(),
                format!(
                    r#"{{"issuer":"{base}","token_endpoint":"{base}/token","grant_types_supported":["client_credentials"],
                        "token_endpoint_auth_methods_supported":["client_secret_basic","private_key_jwt"],
                        "token_endpoint_auth_signing_alg_values_supported":["ES256"]}}"#
                ),
            ),
            "/token" => (token.0, token.1.to_string(), token.2.to_string()),
            _ => (404, String::new(), "{}".into()),
        })
    }

    fn sign_in_with(server: &FakeAs, cfg: &str) -> (Authorizer, Result<(), OAuthError>) {
        let cfg = OAuthConfig::from_json(cfg).unwrap();
        let tls = ureq::tls::TlsConfig::builder().build();
        let net = Net::new(&tls).unwrap();
        let a = Authorizer::new(cfg, &format!("{}/mcp", server.base), net, Arc::new(|_: &str| {})).unwrap();
        let (_keep, stop) = crossbeam_channel::bounded::<()>(0);
        let r = a.unauthorized(401, &Challenge::default(), None, &stop);
        (a, r)
    }

    const SECRET: &str = "s3cret-of-the-client";

    #[test]
    fn client_credentials_with_a_secret_and_a_hostile_token_endpoint() {
        let cfg = format!(r#"{{"client_info":{{"client_id":"robot","client_secret":"{SECRET}"}}}}"#);
        // A good answer: Basic authentication, the grant, the resource.
        let good = cc_server((200, "", r#"{"access_token":"tok-1","token_type":"Bearer","expires_in":60}"#));
        let (a, r) = sign_in_with(&good, &cfg);
        r.unwrap();
        assert_eq!(a.header().as_deref(), Some("Bearer tok-1"));
        let seen = good.seen.lock().unwrap().clone();
        let (_, _, headers, body) = seen.iter().find(|s| s.1 == "/token").unwrap();
        assert!(body.contains("grant_type=client_credentials"), "{body}");
        assert!(body.contains("resource="), "{body}");
        assert!(!body.contains(SECRET));
        use base64::Engine as _;
        let basic = headers.iter().find(|(k, _)| k == "authorization").unwrap().1.clone();
        let pair = base64::engine::general_purpose::STANDARD.decode(basic.trim_start_matches("Basic ")).unwrap();
        assert_eq!(String::from_utf8(pair).unwrap(), format!("robot:{SECRET}"));

        // A token endpoint that answers garbage, refuses, or sends the
        // client elsewhere: a clear failure, never the secret in it.
        for (answer, says) in [
            ((200, "", "<html>not json</html>"), "not a token response"),
            (
                (401, "", r#"{"error":"invalid_client","error_description":"who are you"}"#),
                "invalid_client (who are you)",
            ),
            ((302, "Location: https://evil.example/token\r\n", ""), "refused the client credentials"),
            ((200, "", r#"{"access_token":"x","token_type":"Bearer","expires_in":"soon"}"#), "not a token response"),
        ] {
            let bad = cc_server(answer);
            let (a, r) = sign_in_with(&bad, &cfg);
            let e = r.unwrap_err().0;
            assert!(e.contains(says), "{e}");
            assert!(!e.contains(SECRET), "{e}");
            assert_eq!(a.header(), None);
            // no request followed the redirect (nothing left this server)
            assert!(bad.seen.lock().unwrap().iter().all(|s| !s.1.contains("evil")));
        }
    }

    #[test]
    fn client_credentials_with_a_signed_assertion() {
        use base64::Engine as _;
        let rng = ring::rand::SystemRandom::new();
        let der =
            ring::signature::EcdsaKeyPair::generate_pkcs8(&ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
                .unwrap();
        let b64 = base64::engine::general_purpose::STANDARD.encode(der.as_ref());
        let pem = format!("-----BEGIN PRIVATE KEY-----\n{b64}\n-----END PRIVATE KEY-----\n");
        let dir = std::env::temp_dir().join(format!("mcplite-jwt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = dir.join("key.pem");
        std::fs::write(&key, &pem).unwrap();
        let server = cc_server((200, "", r#"{"access_token":"tok-2","token_type":"Bearer"}"#));
        // Built as JSON, so that a Windows path's backslashes are escaped.
        let cfg = serde_json::json!({"client_info": {"client_id": "robot", "private_key_file": key}}).to_string();
        let (a, r) = sign_in_with(&server, &cfg);
        r.unwrap();
        assert_eq!(a.header().as_deref(), Some("Bearer tok-2"));
        let seen = server.seen.lock().unwrap().clone();
        let (_, _, headers, body) = seen.iter().find(|s| s.1 == "/token").unwrap();
        assert!(headers.iter().all(|(k, _)| k != "authorization"));
        let form: Vec<(String, String)> = url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
        let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap();
        assert_eq!(get("client_assertion_type"), "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
        let jwt = get("client_assertion");
        let parts: Vec<&str> = jwt.split('.').collect();
        let dec = |p: &str| -> Value {
            serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(p).unwrap()).unwrap()
        };
        assert_eq!(dec(parts[0])["alg"], "ES256");
        let claims = dec(parts[1]);
        assert_eq!((claims["iss"].as_str(), claims["sub"].as_str()), (Some("robot"), Some("robot")));
        assert_eq!(claims["aud"].as_str(), Some(server.base.as_str()));
        assert_eq!(claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(), 300);
        assert!(!jwt.contains(&b64[..20]));

        // A key that is not one, or an RSA algorithm for an EC key: the file
        // is named, its contents never shown.
        std::fs::write(&key, "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n").unwrap();
        let e = sign_in_with(&server, &cfg).1.unwrap_err().0;
        assert!(e.contains("does not hold a PEM private key") && e.contains("key.pem") && !e.contains("bm90"), "{e}");
        std::fs::write(&key, &pem).unwrap();
        let rsa =
            cfg.replace(r#""private_key_file""#, r#""token_endpoint_auth_signing_alg":"RS256","private_key_file""#);
        let e = sign_in_with(&server, &rsa).1.unwrap_err().0;
        assert!(e.contains("for RS256") && !e.contains(&b64[..20]), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn settings_are_checked_and_name_the_member() {
        assert!(OAuthConfig::from_json("{}").is_ok());
        let e = OAuthConfig::from_json(r#"{"scope_mode":"replace"}"#).unwrap_err();
        assert!(e.contains("`oauth$scope_mode`"), "{e}");
        let e = OAuthConfig::from_json(r#"{"nope":1}"#).unwrap_err();
        assert!(e.contains("unknown field `nope`"), "{e}");
        let e = OAuthConfig::from_json(r#"{"client_info":{"client_id":"a","token_endpoint_auth_method":"jwt"}}"#)
            .unwrap_err();
        assert!(e.contains("client_info$token_endpoint_auth_method"), "{e}");
        assert!(OAuthConfig::from_json(r#"{"client_metadata_url":"http://x/y"}"#).is_err());
        assert!(OAuthConfig::from_json(r#"{"client_metadata_url":"https://x/c.json"}"#).is_ok());
        // the grants and what each needs
        let e = OAuthConfig::from_json(r#"{"grant_type":"password"}"#).unwrap_err();
        assert!(e.contains("`oauth$grant_type`"), "{e}");
        let e = OAuthConfig::from_json(r#"{"grant_type":"client_credentials","client_info":{"client_id":"a"}}"#)
            .unwrap_err();
        assert!(e.contains("needs `oauth$client_info` with a `client_secret`"), "{e}");
        let e = OAuthConfig::from_json(r#"{"grant_type":"cross_app_access"}"#).unwrap_err();
        assert!(e.contains("needs `oauth$identity_provider`"), "{e}");
        let e = OAuthConfig::from_json(r#"{"identity_provider":{"client_id":"i","id_token_env":"T"}}"#).unwrap_err();
        assert!(e.contains("`issuer` or `token_endpoint`"), "{e}");
        let e = OAuthConfig::from_json(
            r#"{"client_info":{"client_id":"a","private_key_file":"k","token_endpoint_auth_signing_alg":"HS256"}}"#,
        )
        .unwrap_err();
        assert!(e.contains("token_endpoint_auth_signing_alg"), "{e}");
    }
}
