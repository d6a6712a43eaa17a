//! Flags every command spells the same way: `-f/--format text|json` (`--json` is kept as its
//! alias) and `--servers a,b` (also positional where a command takes servers).

pub mod load;

/// `-f/--format` of the commands that print text or JSON.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TextOrJson {
    /// Aligned text for a terminal.
    #[default]
    Text,
    /// JSON for scripts.
    Json,
}

/// `-f/--format FORMAT` and its older spelling `--json`.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct Format {
    /// Output format: text or json.
    #[arg(short = 'f', long = "format", value_name = "FORMAT")]
    pub format: Option<TextOrJson>,
    /// The same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}

impl Format {
    /// Whether JSON was asked for, either way.
    pub fn is_json(self) -> bool {
        self.json || self.format == Some(TextOrJson::Json)
    }
}

/// `--servers a,b`: the servers named by the flag, after those named positionally.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Servers {
    /// Servers to act on (`a,b`), as `run` takes them; the same as naming them positionally.
    #[arg(long = "servers", value_name = "LIST", value_delimiter = ',')]
    pub list: Vec<String>,
}

impl Servers {
    /// `positional` then the flag's servers, each once.
    pub fn merged(&self, positional: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in positional.iter().chain(&self.list) {
            if !out.contains(s) {
                out.push(s.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[arg(value_name = "SERVER")]
        servers: Vec<String>,
        #[command(flatten)]
        flag: Servers,
        #[command(flatten)]
        format: Format,
    }

    #[test]
    fn servers_positional_and_by_flag_are_the_same_list() {
        let cli = Cli::parse_from(["x", "a", "--servers", "b,a"]);
        assert_eq!(cli.flag.merged(&cli.servers), ["a", "b"]);
    }

    #[test]
    fn json_is_an_alias_of_format_json() {
        assert!(Cli::parse_from(["x", "--json"]).format.is_json());
        assert!(Cli::parse_from(["x", "-f", "json"]).format.is_json());
        assert!(!Cli::parse_from(["x", "--format", "text"]).format.is_json());
        assert!(Cli::try_parse_from(["x", "--json", "-f", "text"]).is_err());
    }
}
