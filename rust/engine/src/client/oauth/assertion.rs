//! The client's signed assertion (RULES K10.8): a JWT signed with its
//! private key by `jsonwebtoken`, for `private_key_jwt` client
//! authentication.

use super::config::SIGNING_ALGS;
use super::discovery::ServerMetadata;
use super::store::ClientIdentity;
use super::{auth_method, now_secs, OAuthError};

/// The claims of a client assertion (RFC 7523, section 3).
#[derive(serde::Serialize)]
struct AssertionClaims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
    jti: String,
}

/// The body parameters that authenticate a `private_key_jwt` client (RFC
/// 7523, section 2.2): a JWT the client signs with its private key, issued
/// by and about the client, for the authorization server (its issuer),
/// valid 5 minutes, with a fresh `jti`. None for the other methods. The
/// key is read from its file or variable each time and never appears in a
/// message.
pub(super) fn client_assertion(
    id: &ClientIdentity,
    issuer: &str,
    meta: Option<&ServerMetadata>,
) -> Result<Vec<(&'static str, String)>, OAuthError> {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    if auth_method(id, meta) != "private_key_jwt" {
        return Ok(Vec::new());
    }
    let pem = match (&id.private_key_file, &id.private_key_env) {
        (Some(f), _) => std::fs::read(f).map_err(|e| {
            OAuthError::new(format!("cannot read the private key file `{f}` of `private_key_jwt`: {}", e.kind()))
        })?,
        (None, Some(v)) => std::env::var(v)
            .map_err(|_| {
                OAuthError::new(format!(
                    "the environment variable `{v}` (the private key of `private_key_jwt`) is not set"
                ))
            })?
            .into_bytes(),
        (None, None) => {
            return Err(OAuthError::new(
                "`private_key_jwt` needs `private_key_file` or `private_key_env` in `oauth$client_info`",
            ))
        }
    };
    // The algorithm given, else those the server lists (in its order), else
    // the usual ones; the first the key fits.
    let candidates: Vec<String> = match &id.signing_alg {
        Some(a) => vec![a.clone()],
        None => meta
            .and_then(|m| m.signing_algs.clone())
            .map(|v| v.into_iter().filter(|a| SIGNING_ALGS.contains(&a.as_str())).collect::<Vec<_>>())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| ["ES256", "RS256", "EdDSA"].map(String::from).to_vec()),
    };
    let key = candidates.iter().find_map(|name| {
        let alg: Algorithm = name.parse().ok()?;
        let key = match alg {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(&pem),
            Algorithm::EdDSA => EncodingKey::from_ed_pem(&pem),
            _ => EncodingKey::from_rsa_pem(&pem),
        };
        key.ok().map(|k| (alg, k))
    });
    let Some((alg, key)) = key else {
        let from = match (&id.private_key_file, &id.private_key_env) {
            (Some(f), _) => format!("the file `{f}`"),
            (_, v) => format!("the environment variable `{}`", v.as_deref().unwrap_or_default()),
        };
        return Err(OAuthError::new(format!(
            "{from} does not hold a PEM private key (PKCS#8) for {}",
            candidates.join(" or ")
        )));
    };
    let mut jti = [0u8; 16];
    getrandom::fill(&mut jti).map_err(|e| OAuthError::new(format!("no random numbers for the assertion: {e}")))?;
    let now = now_secs();
    let claims = AssertionClaims {
        iss: &id.client_id,
        sub: &id.client_id,
        aud: issuer,
        iat: now,
        exp: now + 300,
        jti: jti.iter().map(|b| format!("{b:02x}")).collect(),
    };
    let jwt = jsonwebtoken::encode(&Header::new(alg), &claims, &key)
        .map_err(|e| OAuthError::new(format!("cannot sign the client assertion: {e}")))?;
    Ok(vec![
        ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into()),
        ("client_assertion", jwt),
    ])
}
