//! What signing in is told (RULES K10.6): the `oauth` settings of a
//! connection or a configuration entry, read from the JSON R sends, and the
//! error a sign-in ends with.

use serde::Deserialize;
use serde_json::Value;
use url::Url;

use super::store::ClientIdentity;

/// Why signing in failed, in words for the user (never with a token).
#[derive(Debug, Clone, PartialEq)]
pub struct OAuthError(pub String);

impl OAuthError {
    pub fn new(m: impl Into<String>) -> OAuthError {
        OAuthError(m.into())
    }

    /// The server has no sign-in at all: no metadata anywhere, and the
    /// default endpoints of 2025-03-26 refused the registration. Its 401 is
    /// then reported as it is (a server that wants a static token).
    pub fn no_sign_in(&self) -> bool {
        self.0.starts_with(NO_SIGN_IN)
    }
}

pub(super) const NO_SIGN_IN: &str = "the server offers no sign-in";

/// A client given by the user (mcptools' `client_info`).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClientInfo {
    pub client_id: String,
    #[serde(default)]
    pub client_secret: Option<String>,
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
    /// `private_key_jwt` (RFC 7523): the PEM file of the client's private
    /// key, or the environment variable that holds it.
    #[serde(default)]
    pub private_key_file: Option<String>,
    #[serde(default)]
    pub private_key_env: Option<String>,
    /// The assertion's algorithm (`ES256`, `RS256`, ...); by default the
    /// first the server lists that the key fits.
    #[serde(default)]
    pub token_endpoint_auth_signing_alg: Option<String>,
}

impl ClientInfo {
    pub(super) fn identity(&self) -> ClientIdentity {
        ClientIdentity {
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
            token_endpoint_auth_method: self.token_endpoint_auth_method.clone(),
            redirect_uri: None,
            private_key_file: self.private_key_file.clone(),
            private_key_env: self.private_key_env.clone(),
            signing_alg: self.token_endpoint_auth_signing_alg.clone(),
            scope: None,
        }
    }

    /// Can it authenticate itself (a secret or a private key)?
    pub(super) fn has_credentials(&self) -> bool {
        self.client_secret.is_some() || self.private_key_file.is_some() || self.private_key_env.is_some()
    }
}

/// The grants (RULES K10.8): the authorization code with the user at a
/// browser; the client credentials of the extension, for programs; and
/// cross-app access (the enterprise-managed authorization extension), an
/// identity provider's ID token exchanged for a grant of this server's.
pub const GRANTS: [&str; 3] = ["authorization_code", "client_credentials", "cross_app_access"];

/// The identity provider of cross-app access (RULES K10.9): where the
/// user's ID token is exchanged (its token endpoint, or its issuer, whose
/// metadata names it), who the client is there, and where the ID token is
/// (a file or an environment variable: never in the settings themselves).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IdentityProvider {
    #[serde(default)]
    pub issuer: Option<String>,
    #[serde(default)]
    pub token_endpoint: Option<String>,
    pub client_id: String,
    #[serde(default)]
    pub client_secret: Option<String>,
    #[serde(default)]
    pub id_token_file: Option<String>,
    #[serde(default)]
    pub id_token_env: Option<String>,
}

/// The assertion algorithms `private_key_jwt` signs with.
pub(super) const SIGNING_ALGS: [&str; 9] =
    ["ES256", "ES384", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"];

/// The sign-in settings (mcptools' `oauth` members; RULES K10.1).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// The authorization server to use instead of the one the server names.
    #[serde(default)]
    pub authorization_server: Option<String>,
    /// The `resource` to ask tokens for instead of the discovered one.
    #[serde(default)]
    pub resource: Option<String>,
    /// Scopes (space-separated) to ask for besides the discovered ones, or
    /// instead of them with `scope_mode = "override"`.
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub scope_mode: Option<String>,
    #[serde(default)]
    pub client_info: Option<ClientInfo>,
    /// A client used only when the server offers no other way.
    #[serde(default)]
    pub manual_client_info: Option<ClientInfo>,
    /// Members added to a dynamic registration request.
    #[serde(default)]
    pub client_metadata: Option<serde_json::Map<String, Value>>,
    /// The `https://` URL of the client's metadata document, used as its
    /// client ID where the authorization server accepts such documents.
    #[serde(default)]
    pub client_metadata_url: Option<String>,
    #[serde(default)]
    pub redirect_uri: Option<String>,
    #[serde(default)]
    pub callback_host: Option<String>,
    #[serde(default)]
    pub callback_port: Option<u16>,
    #[serde(default)]
    pub callback_path: Option<String>,
    /// Where sign-ins are kept (none: in memory only).
    #[serde(default)]
    pub cache_dir: Option<String>,
    #[serde(default)]
    pub allow_http: bool,
    /// Seconds the user has to sign in (default 300).
    #[serde(default)]
    pub timeout: Option<f64>,
    /// `authorization_code` or `client_credentials` (RULES K10.8); by
    /// default the client credentials when the server offers only them and
    /// `client_info` can authenticate, else the authorization code.
    #[serde(default)]
    pub grant_type: Option<String>,
    /// Cross-app access: the identity provider (RULES K10.9).
    #[serde(default)]
    pub identity_provider: Option<IdentityProvider>,
}

impl OAuthConfig {
    /// Read the settings R sends as JSON; the error names the member.
    pub fn from_json(text: &str) -> Result<OAuthConfig, String> {
        let cfg: OAuthConfig = serde_json::from_str(text).map_err(|e| format!("`oauth` is not valid: {e}"))?;
        if let Some(m) = &cfg.scope_mode {
            if m != "add" && m != "override" {
                return Err(format!("`oauth$scope_mode` must be \"add\" or \"override\", not \"{m}\""));
            }
        }
        if let Some(g) = &cfg.grant_type {
            if !GRANTS.contains(&g.as_str()) {
                return Err(format!(
                    "`oauth$grant_type` must be \"authorization_code\", \"client_credentials\" or \
                     \"cross_app_access\", not \"{g}\""
                ));
            }
        }
        for (what, info) in [("client_info", &cfg.client_info), ("manual_client_info", &cfg.manual_client_info)] {
            let Some(info) = info else { continue };
            if let Some(m) = info.token_endpoint_auth_method.as_deref() {
                if !["none", "client_secret_basic", "client_secret_post", "private_key_jwt"].contains(&m) {
                    return Err(format!(
                        "`oauth${what}$token_endpoint_auth_method` must be \"none\", \"client_secret_basic\", \
                         \"client_secret_post\" or \"private_key_jwt\", not \"{m}\""
                    ));
                }
            }
            if let Some(a) = &info.token_endpoint_auth_signing_alg {
                if !SIGNING_ALGS.contains(&a.as_str()) {
                    return Err(format!(
                        "`oauth${what}$token_endpoint_auth_signing_alg` must be one of {}, not \"{a}\"",
                        SIGNING_ALGS.join(", ")
                    ));
                }
            }
            if info.private_key_file.is_some() && info.private_key_env.is_some() {
                return Err(format!("`oauth${what}` must give `private_key_file` or `private_key_env`, not both"));
            }
        }
        if let Some(idp) = &cfg.identity_provider {
            if idp.issuer.is_none() == idp.token_endpoint.is_none() {
                return Err("`oauth$identity_provider` must give `issuer` or `token_endpoint` (one of them)".into());
            }
            if idp.id_token_file.is_none() == idp.id_token_env.is_none() {
                return Err(
                    "`oauth$identity_provider` must give `id_token_file` or `id_token_env` (one of them)".into()
                );
            }
        }
        if cfg.grant_type.as_deref() == Some("cross_app_access") && cfg.identity_provider.is_none() {
            return Err("`oauth$grant_type` \"cross_app_access\" needs `oauth$identity_provider`".into());
        }
        if cfg.grant_type.as_deref() == Some("client_credentials")
            && !cfg.client_info.as_ref().is_some_and(ClientInfo::has_credentials)
        {
            return Err("`oauth$grant_type` \"client_credentials\" needs `oauth$client_info` with a `client_secret`, \
                        a `private_key_file` or a `private_key_env`"
                .into());
        }
        if let Some(u) = &cfg.client_metadata_url {
            let ok = Url::parse(u).is_ok_and(|u| u.scheme() == "https" && u.path().len() > 1);
            if !ok {
                return Err(format!("`oauth$client_metadata_url` must be an https:// URL with a path, not \"{u}\""));
            }
        }
        Ok(cfg)
    }
}
