//! `postgres://USER:PASSWORD@HOST:PORT/DBNAME`: parsed, printed with the password redacted
//! ([`Display`](std::fmt::Display)), given in full only on request ([`DbUrl::expose`]).

use std::fmt;

/// A URL that is not `postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("database URL {redacted}: {why}")]
pub struct UrlError {
    /// The URL, its password replaced by `***`.
    pub redacted: String,
    /// What is wrong.
    pub why: &'static str,
}

/// Where a server reaches the database, and as whom.
#[derive(Clone, PartialEq, Eq)]
pub struct DbUrl {
    /// The role.
    pub user: String,
    /// Its password.
    pub password: String,
    /// A host name or an address (IPv6 without brackets).
    pub host: String,
    /// The port.
    pub port: u16,
    /// The database.
    pub dbname: String,
}

impl DbUrl {
    /// Parses `postgres://` or `postgresql://` URLs; the port defaults to 5432, user and
    /// password are percent-decoded.
    pub fn parse(s: &str) -> Result<DbUrl, UrlError> {
        let err = |why| UrlError {
            redacted: redact(s),
            why,
        };
        let rest = s
            .strip_prefix("postgres://")
            .or_else(|| s.strip_prefix("postgresql://"))
            .ok_or_else(|| err("not a postgres:// URL"))?;
        let (authority, path) = rest.split_once('/').ok_or_else(|| err("no /DBNAME"))?;
        let dbname = path.split(['?', '#']).next().unwrap_or_default();
        if dbname.is_empty() {
            return Err(err("no database name after the /"));
        }
        let (userinfo, hostport) = authority.rsplit_once('@').ok_or_else(|| err("no USER@"))?;
        let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
        let (host, port) = split_host_port(hostport).ok_or_else(|| err("a bad HOST:PORT"))?;
        if user.is_empty() || host.is_empty() {
            return Err(err("no user or no host"));
        }
        Ok(DbUrl {
            user: decode(user).ok_or_else(|| err("a bad %-escape in the user"))?,
            password: decode(password).ok_or_else(|| err("a bad %-escape in the password"))?,
            host: host.to_owned(),
            port,
            dbname: decode(dbname).ok_or_else(|| err("a bad %-escape in the database"))?,
        })
    }

    /// The URL with the password, percent-encoded: for `DATABASE_URL`, never for printing.
    pub fn expose(&self) -> String {
        self.with_password(&encode(&self.password))
    }

    fn with_password(&self, password: &str) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let auth = if password.is_empty() {
            encode(&self.user)
        } else {
            format!("{}:{password}", encode(&self.user))
        };
        format!(
            "postgres://{auth}@{host}:{}/{}",
            self.port,
            encode(&self.dbname)
        )
    }

    /// The client's configuration for this URL.
    pub fn client_config(&self) -> postgres::Config {
        let mut c = postgres::Config::new();
        c.user(&self.user)
            .password(&self.password)
            .host(&self.host)
            .port(self.port)
            .dbname(&self.dbname)
            .application_name("serverbench")
            .connect_timeout(std::time::Duration::from_secs(5));
        c
    }
}

/// Shown with the password as `***`.
impl fmt::Display for DbUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stars = if self.password.is_empty() { "" } else { "***" };
        f.write_str(&self.with_password(stars))
    }
}

impl fmt::Debug for DbUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DbUrl({self})")
    }
}

impl std::str::FromStr for DbUrl {
    type Err = UrlError;
    fn from_str(s: &str) -> Result<DbUrl, UrlError> {
        DbUrl::parse(s)
    }
}

/// Any URL-like string with what sits between `user:` and `@` replaced by `***`.
pub fn redact(s: &str) -> String {
    let Some(scheme_end) = s.find("://").map(|i| i + 3) else {
        return s.to_owned();
    };
    let rest = &s[scheme_end..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return s.to_owned();
    };
    match rest[..at].find(':') {
        Some(colon) => format!("{}{}:***{}", &s[..scheme_end], &rest[..colon], &rest[at..]),
        None => s.to_owned(),
    }
}

fn split_host_port(hp: &str) -> Option<(&str, u16)> {
    if let Some(v6) = hp.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => 5432,
            None => return None,
        };
        return Some((host, port));
    }
    match hp.rsplit_once(':') {
        Some((h, p)) => Some((h, p.parse().ok()?)),
        None => Some((hp, 5432)),
    }
}

fn decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> DbUrl {
        DbUrl::parse("postgres://serverbench:s3cr%40t@127.0.0.1:5433/hello_world").unwrap()
    }

    #[test]
    fn a_url_is_parsed_into_its_parts_with_escapes_decoded() {
        let u = url();
        assert_eq!(
            (
                u.user.as_str(),
                u.password.as_str(),
                u.host.as_str(),
                u.port
            ),
            ("serverbench", "s3cr@t", "127.0.0.1", 5433)
        );
        assert_eq!(u.dbname, "hello_world");
        let v6 = DbUrl::parse("postgresql://u:p@[::1]/db?sslmode=disable").unwrap();
        assert_eq!(
            (v6.host.as_str(), v6.port, v6.dbname.as_str()),
            ("::1", 5432, "db")
        );
        assert_eq!(v6.expose(), "postgres://u:p@[::1]:5432/db");
    }

    #[test]
    fn the_password_is_shown_only_when_asked_for() {
        let u = url();
        assert_eq!(
            u.to_string(),
            "postgres://serverbench:***@127.0.0.1:5433/hello_world"
        );
        assert!(!format!("{u:?}").contains("s3cr"));
        assert_eq!(
            u.expose(),
            "postgres://serverbench:s3cr%40t@127.0.0.1:5433/hello_world"
        );
        assert_eq!(DbUrl::parse(&u.expose()).unwrap(), u);
    }

    #[test]
    fn a_bad_url_is_refused_without_showing_its_password() {
        for bad in [
            "mysql://u:pw@h/db",
            "postgres://u:pw@h:port/db",
            "postgres://u:pw@h:5432",
            "postgres://u:pw@h:5432/",
            "postgres://h:5432/db",
        ] {
            let e = DbUrl::parse(bad).unwrap_err();
            assert!(!e.to_string().contains("pw@"), "{e}");
        }
        assert_eq!(redact("postgres://u:pw@h:1/db"), "postgres://u:***@h:1/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
    }
}
