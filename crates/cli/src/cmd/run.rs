//! `serverbench run` (not written yet).

/// Arguments of `serverbench run`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `serverbench run`.
pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`serverbench run` is not implemented yet")
}
