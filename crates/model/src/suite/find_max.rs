//! What a `find_max` profile cannot be combined with.

use super::Profile;
use crate::Tool;

impl Profile {
    /// Why this profile's `find_max` cannot run as written (with `tool`), or `None`.
    pub fn find_max_conflict(&self, tool: Tool) -> Option<&'static str> {
        self.find_max.as_ref()?;
        match () {
            _ if self.rate.is_some() => Some("find_max picks the rates: drop rate"),
            _ if self.requests.is_some() => Some("find_max steps are timed: give duration"),
            _ if self.pipeline > 1 => Some("find_max runs open loop: drop pipeline"),
            _ if tool != Tool::Serverbench => Some("find_max needs tool = \"serverbench\""),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::suite::Suite;

    fn suite(profile: &str) -> Result<Suite, String> {
        let text = format!(
            "name = \"s\"\ndescription = \"d\"\nreproduces = \"none\"\nservers = \"all\"\n\
             [[scenario]]\nname = \"hello\"\npaths = [\"/hello\"]\n\
             [[profile]]\nconnections = 8\n{profile}\n"
        );
        Suite::parse(&text, std::path::Path::new("s.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn a_find_max_profile_parses_and_refuses_a_rate_or_a_request_count() {
        let ok =
            suite("duration = \"2s\"\nfind_max = { slo = \"p99<=5ms\", max_steps = 8 }").unwrap();
        let f = ok.profiles[0].find_max.as_ref().unwrap();
        assert_eq!(
            (f.slo.to_string(), f.max_steps),
            ("p99<=5ms".into(), Some(8))
        );
        let err =
            suite("duration = \"2s\"\nrate = 100\nfind_max = { slo = \"p99<=5ms\" }").unwrap_err();
        assert!(err.contains("find_max picks the rates"), "{err}");
        let err = suite("requests = 100\nfind_max = { slo = \"p99<=5ms\" }").unwrap_err();
        assert!(err.contains("give duration"), "{err}");
        let err = suite("duration = \"2s\"\nfind_max = { slo = \"p95<=5ms\" }").unwrap_err();
        assert!(err.contains("p95"), "{err}");
    }
}
