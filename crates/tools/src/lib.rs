//! serverbench-tools owns the load tools' adapters: serverbench's own engine (`serverbench load
//! --json`) and the external tools the original experiments used. Each tool builds its command
//! line from [`LoadParams`] and parses its output into a [`Measurement`]; what a tool does not
//! report stays `None`. [`ensure_installed`] installs a missing tool.
//!
//! It must not start servers or decide what a lap is; the harness runs the command it builds.

pub mod ab;
pub mod autocannon;
pub mod h2load;
pub mod hey;
mod install;
pub mod oha;
pub mod serverbench;
pub mod wrk;

pub use install::{describe, ensure_installed, InstallStep};

use serverbench_model::Tool;
use serverbench_results::record::{LoadParams, Measurement};
use std::fmt;
use std::path::{Path, PathBuf};

/// Errors of the load tools.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The tool cannot apply these parameters (e.g. ab with several paths).
    #[error("{tool} cannot run this lap: {why}")]
    Unsupported {
        /// The tool.
        tool: Tool,
        /// Why.
        why: String,
    },
    /// The tool is missing and could not be installed.
    #[error("{tool} is not installed and could not be installed: {why}")]
    NotInstalled {
        /// The tool.
        tool: Tool,
        /// Why.
        why: String,
    },
    /// The output could not be parsed.
    #[error("cannot parse {tool}'s output: {why}")]
    Parse {
        /// The tool.
        tool: Tool,
        /// Why.
        why: String,
    },
}

/// Why a URL is not a target ([`Target::from_url`]), naming what was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not `http://...`.
    #[error("`{0}` is not an http:// URL")]
    NotHttp(String),
    /// `http://[::1` with no `]`.
    #[error("unclosed [ in the host")]
    UnclosedBracket,
    /// `http://:8080/`.
    #[error("`{0}` has no host")]
    NoHost(String),
    /// The text after the host's `:` is not a port.
    #[error("`{0}` is not a port")]
    BadPort(String),
}

/// Where the load goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Host literal, e.g. `127.0.0.1`.
    pub host: String,
    /// HTTP port.
    pub port: u16,
    /// TCP echo port.
    pub echo_port: Option<u16>,
    /// HTTPS port (`TLS_PORT`), when the server serves TLS.
    pub tls_port: Option<u16>,
    /// HTTP/3's UDP port (`H3_PORT`, the certificate of `tls_port`), when the server serves
    /// HTTP/3.
    pub h3_port: Option<u16>,
    /// The certificate (PEM) trusted on `tls_port`: the run's own. None: trust any (`-k`).
    pub ca_file: Option<PathBuf>,
}

impl Target {
    /// The target of `http://HOST[:PORT][/path]` (the path is the suite's business); an IPv6
    /// host is bracketed, the port defaults to 80.
    pub fn from_url(url: &str) -> Result<Target, UrlError> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| UrlError::NotHttp(url.to_owned()))?;
        let authority = rest.split('/').next().unwrap_or("");
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (h, after) = v6.split_once(']').ok_or(UrlError::UnclosedBracket)?;
                (h, after.strip_prefix(':'))
            }
            None => match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            },
        };
        if host.is_empty() {
            return Err(UrlError::NoHost(url.to_owned()));
        }
        let port = match port {
            Some(p) => p.parse().map_err(|_| UrlError::BadPort(p.to_owned()))?,
            None => 80,
        };
        Ok(Target {
            host: host.to_owned(),
            port,
            echo_port: None,
            tls_port: None,
            h3_port: None,
            ca_file: None,
        })
    }

    /// `http://host:port` (IPv6 literals bracketed).
    pub fn base_url(&self) -> String {
        format!("http://{}:{}", self.host_for_url(), self.port)
    }

    /// Where a lap with `params` goes: `https://host:H3_PORT` over HTTP/3,
    /// `https://host:TLS_PORT` when it is over TLS, else [`Target::base_url`]. An error when
    /// the target serves neither as the lap asks.
    pub fn base_url_for(&self, params: &LoadParams, tool: Tool) -> Result<String, ToolError> {
        if params.transport.protocol.is_h3() {
            let port = self.h3_port.ok_or_else(|| ToolError::Unsupported {
                tool,
                why: "the lap is over HTTP/3 and the server has no H3_PORT".into(),
            })?;
            return Ok(format!("https://{}:{port}", self.host_for_url()));
        }
        if !params.transport.tls {
            return Ok(self.base_url());
        }
        let port = self.tls_port.ok_or_else(|| ToolError::Unsupported {
            tool,
            why: "the lap is over TLS and the server has no TLS_PORT".into(),
        })?;
        Ok(format!("https://{}:{port}", self.host_for_url()))
    }

    /// The host, bracketed when it is an IPv6 literal.
    pub fn host_for_url(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }
}

/// A tool ready to run: its executable and anything it needs next to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// The tool.
    pub tool: Tool,
    /// Executable (for serverbench: the `serverbench` binary).
    pub exe: PathBuf,
    /// A folder for scripts the tool reads (wrk's Lua script).
    pub scratch: PathBuf,
}

/// A full command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    /// Executable.
    pub program: PathBuf,
    /// Arguments.
    pub args: Vec<String>,
    /// What goes on its stdin (serverbench's load spec), if anything.
    pub stdin: Option<String>,
}

impl fmt::Display for CommandLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.program.display())?;
        for a in &self.args {
            if a.contains(|c: char| c.is_whitespace() || c == '\'') {
                write!(f, " '{}'", a.replace('\'', "'\\''"))?;
            } else {
                write!(f, " {a}")?;
            }
        }
        Ok(())
    }
}

impl Prepared {
    /// The command line for one load run. `client_cpus` is passed to tools that pin themselves
    /// (the harness also pins every tool with `sched_setaffinity`).
    pub fn command(
        &self,
        params: &LoadParams,
        target: &Target,
        client_cpus: &[usize],
    ) -> Result<CommandLine, ToolError> {
        if params.work.mode != serverbench_model::Mode::Http && self.tool != Tool::Serverbench {
            return Err(ToolError::Unsupported {
                tool: self.tool,
                why: format!(
                    "{} is HTTP only; {} needs serverbench",
                    self.tool, params.work.mode
                ),
            });
        }
        refuse_protocol(self.tool, params)?;
        let mut stdin = None;
        let args = match self.tool {
            Tool::Serverbench => {
                stdin = Some(serverbench::spec(params, target, client_cpus)?.to_line());
                serverbench::args(params)
            }
            Tool::Wrk => wrk::args(params, target, &self.scratch)?,
            Tool::Ab => ab::args(params, target)?,
            Tool::Autocannon => autocannon::args(params, target)?,
            Tool::H2load => h2load::args(params, target)?,
            Tool::Hey => hey::args(params, target)?,
            Tool::Oha => oha::args(params, target)?,
        };
        Ok(CommandLine {
            program: self.exe.clone(),
            args,
            stdin,
        })
    }

    /// [`Prepared::command`], and for a `find_max` lap run by serverbench, `--server-pid`: the
    /// search then reads the server's process tree (on this machine) for its CPU per request at
    /// every step, which one sample over the whole search cannot give.
    pub fn command_watching(
        &self,
        params: &LoadParams,
        target: &Target,
        client_cpus: &[usize],
        server_pid: Option<u32>,
    ) -> Result<CommandLine, ToolError> {
        let mut line = self.command(params, target, client_cpus)?;
        if let (Tool::Serverbench, Some(_), Some(pid)) = (self.tool, &params.find_max, server_pid) {
            line.args.extend(["--server-pid".into(), pid.to_string()]);
        }
        Ok(line)
    }

    /// Parses the tool's standard output.
    pub fn parse(&self, stdout: &str) -> Result<Measurement, ToolError> {
        match self.tool {
            Tool::Serverbench => serverbench::parse(stdout),
            Tool::Wrk => wrk::parse(stdout),
            Tool::Ab => ab::parse(stdout),
            Tool::Autocannon => autocannon::parse(stdout),
            Tool::H2load => h2load::parse(stdout),
            Tool::Hey => hey::parse(stdout),
            Tool::Oha => oha::parse(stdout),
        }
    }
}

/// Refuses what a tool cannot do with the lap's protocol, before it measures something else:
/// wrk speaks HTTP/1.1 (over TLS too), h2load every protocol but not a connection per request,
/// the other external tools plain HTTP/1.1 only.
fn refuse_protocol(tool: Tool, p: &LoadParams) -> Result<(), ToolError> {
    let why = match tool {
        Tool::Serverbench => return Ok(()),
        _ if p.transport.protocol.is_h3() => {
            "HTTP/3 needs serverbench (the tools the harness installs are built without QUIC)"
        }
        _ if p.work.mix.is_some() => "a mix of requests drawn by weight needs serverbench",
        _ if p.work.method.is_some() || p.work.body.is_some() || p.work.body_size.is_some() => {
            "a scenario's own method and body (method, body, body_size, chunked) needs serverbench"
        }
        _ if p.transport.new_conn || p.transport.tls_resume.is_some() => {
            "a new connection per request (new_conn, tls_resume) needs serverbench"
        }
        Tool::Wrk if p.transport.protocol.is_h2() => "wrk speaks HTTP/1.1 only; HTTP/2 needs h2load or serverbench",
        Tool::Wrk | Tool::H2load => return Ok(()),
        _ if p.transport.tls || p.transport.protocol.is_h2() => {
            "the harness drives it over plain HTTP/1.1 only; TLS and HTTP/2 need serverbench, wrk (TLS) or h2load"
        }
        _ => return Ok(()),
    };
    Err(ToolError::Unsupported {
        tool,
        why: why.into(),
    })
}

/// Finds (or installs) `tool`. `serverbench_exe` is the binary that has `load`; `tools_dir` is
/// `<cache>/tools` (npm/cargo installs), `scratch` a folder for generated scripts.
pub fn prepare(
    tool: Tool,
    serverbench_exe: &Path,
    tools_dir: &Path,
    scratch: &Path,
    on_step: &mut dyn FnMut(InstallStep),
) -> Result<Prepared, ToolError> {
    let exe = match tool {
        Tool::Serverbench => serverbench_exe.to_path_buf(),
        other => ensure_installed(other, tools_dir, on_step)?,
    };
    Ok(Prepared {
        tool,
        exe,
        scratch: scratch.to_path_buf(),
    })
}

/// Fills throughput in megabits per second from bytes and seconds (a derived value, not a guess).
pub(crate) fn mbps(bytes: Option<u64>, secs: Option<f64>) -> Option<f64> {
    match (bytes, secs) {
        (Some(b), Some(s)) if s > 0.0 => Some(b as f64 * 8.0 / s / 1e6),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serverbench_model::Transport;

    #[test]
    fn a_url_gives_its_host_and_port() {
        let t = Target::from_url("http://127.0.0.1:8080/hello").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", 8080));
        let t = Target::from_url("http://[::1]:9000").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.base_url().as_str()),
            ("::1", 9000, "http://[::1]:9000")
        );
        assert_eq!(Target::from_url("http://example.test/").unwrap().port, 80);
        assert!(Target::from_url("ftp://x/").is_err());
        assert!(Target::from_url("http://x:port/").is_err());
    }
    use serverbench_model::Mode;
    use serverbench_model::Protocol;

    #[test]
    fn tools_parse_from_their_names_and_reject_others() {
        assert_eq!("wrk".parse::<Tool>(), Ok(Tool::Wrk));
        assert!("curl"
            .parse::<Tool>()
            .unwrap_err()
            .to_string()
            .contains("autocannon"));
    }

    #[test]
    fn ipv6_hosts_are_bracketed_in_urls() {
        let t = Target {
            host: "::1".into(),
            port: 8080,
            echo_port: None,
            tls_port: None,
            h3_port: None,
            ca_file: None,
        };
        assert_eq!(t.base_url(), "http://[::1]:8080");
    }

    #[test]
    fn external_tools_refuse_tcp_modes() {
        let p = Prepared {
            tool: Tool::Wrk,
            exe: "wrk".into(),
            scratch: std::env::temp_dir(),
        };
        let params = LoadParams {
            work: serverbench_model::spec::Work {
                mode: Mode::TcpStream,
                ..Default::default()
            },
            ..LoadParams::default()
        };
        let t = Target {
            host: "127.0.0.1".into(),
            port: 1,
            echo_port: Some(2),
            tls_port: None,
            h3_port: None,
            ca_file: None,
        };
        assert!(p.command(&params, &t, &[]).is_err());
    }

    fn prepared(tool: Tool) -> Prepared {
        Prepared {
            tool,
            exe: tool.to_string().into(),
            scratch: std::env::temp_dir().join(format!("sb-tools-{}", std::process::id())),
        }
    }

    /// A server on 127.0.0.1 with HTTP on 8080 and TLS on 8443 (shared with the tools' tests).
    pub(crate) fn https_target() -> Target {
        Target {
            host: "127.0.0.1".into(),
            port: 8080,
            echo_port: None,
            tls_port: Some(8443),
            h3_port: None,
            ca_file: None,
        }
    }

    /// `/hello`, 10 connections, 1 thread, 2 s, over `protocol` (shared with the tools' tests).
    pub(crate) fn http(protocol: Protocol, tls: bool) -> LoadParams {
        LoadParams {
            work: serverbench_model::spec::Work {
                paths: vec!["/hello".into()],
                ..Default::default()
            },
            connections: 10,
            threads: 1,
            duration_s: Some(2.0),
            pipeline: 1,
            transport: Transport {
                protocol,
                tls,
                ..Transport::default()
            },
            ..LoadParams::default()
        }
    }

    #[test]
    fn tools_refuse_the_protocols_they_cannot_speak_and_say_which_can() {
        let t = https_target();
        let why = |tool: Tool, p: &LoadParams| match prepared(tool).command(p, &t, &[]) {
            Err(e) => e.to_string(),
            Ok(c) => panic!("{tool} accepted {p:?}: {c}"),
        };
        assert!(why(Tool::Wrk, &http(Protocol::H2, true)).contains("HTTP/1.1 only"));
        assert!(why(Tool::Hey, &http(Protocol::H1, true)).contains("TLS and HTTP/2 need"));
        let mut handshakes = http(Protocol::H1, true);
        handshakes.transport.new_conn = true;
        assert!(why(Tool::H2load, &handshakes).contains("needs serverbench"));
        for tool in [Tool::H2load, Tool::Oha, Tool::Wrk] {
            let e = why(tool, &http(Protocol::H3, true));
            assert!(e.contains("HTTP/3 needs serverbench"), "{e}");
        }
        assert!(prepared(Tool::Wrk)
            .command(&http(Protocol::H1, true), &t, &[])
            .is_ok());
    }

    #[test]
    fn a_tls_lap_against_a_server_without_a_tls_port_is_refused() {
        let mut t = https_target();
        t.tls_port = None;
        let e = prepared(Tool::Serverbench)
            .command(&http(Protocol::H1, true), &t, &[])
            .unwrap_err();
        assert!(e.to_string().contains("no TLS_PORT"), "{e}");
    }
}
