//! What a sign-in leaves behind (RULES K10.6): the client registration and
//! the tokens for one MCP server, in a JSON file of the cache directory that
//! only the user can read (the directory 0700 and the file 0600 on Unix;
//! under the user's profile on Windows). The file is replaced whole (written
//! beside it, then renamed), and its contents are never printed or logged.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::private_files::{create_private_dir, write_private};

/// A registered (or given) client.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ClientIdentity {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// The redirect URI it was registered with (dynamic registration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
    /// Where the private key of `private_key_jwt` is (a file, or an
    /// environment variable): never the key itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_alg: Option<String>,
    /// The scopes a dynamic registration was made for (RULES K10.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// The tokens of a sign-in.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Tokens {
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// One server's file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Saved {
    pub server: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientIdentity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
}

/// The file of `server` in `dir`: named by the SHA-256 of the server's URL.
pub fn path_for(dir: &Path, server: &str) -> PathBuf {
    let digest = ring::digest::digest(&ring::digest::SHA256, server.as_bytes());
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("{hex}.json"))
}

/// Read a saved sign-in; `None` when there is none or it cannot be read
/// (a corrupt file is as good as none: the user signs in again).
pub fn load(dir: &Path, server: &str) -> Option<Saved> {
    let text = std::fs::read(path_for(dir, server)).ok()?;
    let saved: Saved = serde_json::from_slice(&text).ok()?;
    (saved.server == server).then_some(saved)
}

/// Write a sign-in, readable by the user only.
pub fn save(dir: &Path, saved: &Saved) -> std::io::Result<()> {
    create_private_dir(dir)?;
    let path = path_for(dir, &saved.server);
    let text = serde_json::to_vec_pretty(saved).map_err(std::io::Error::other)?;
    write_private(&path, &text)
}

/// Forget a server's sign-in.
pub fn remove(dir: &Path, server: &str) {
    let _ = std::fs::remove_file(path_for(dir, server));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sign_in_is_saved_for_the_user_only_and_read_back() {
        let dir = std::env::temp_dir().join(format!("mcplite-oauth-store-{}", std::process::id())).join("cache");
        let saved = Saved {
            server: "https://mcp.example/mcp".into(),
            client: Some(ClientIdentity { client_id: "c1".into(), ..ClientIdentity::default() }),
            tokens: Some(Tokens { access_token: "secret-token".into(), ..Tokens::default() }),
            ..Saved::default()
        };
        save(&dir, &saved).unwrap();
        save(&dir, &saved).unwrap(); // replaced, not appended
        let back = load(&dir, "https://mcp.example/mcp").unwrap();
        assert_eq!(back.tokens.unwrap().access_token, "secret-token");
        assert!(load(&dir, "https://other.example/mcp").is_none());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path_for(&dir, "https://mcp.example/mcp")), 0o600);
            assert_eq!(mode(&dir), 0o700);
        }
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        remove(&dir, "https://mcp.example/mcp");
        assert!(load(&dir, "https://mcp.example/mcp").is_none());
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }
}
