//! `serverbench list` (not written yet).

/// Arguments of `serverbench list`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `serverbench list`.
pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`serverbench list` is not implemented yet")
}
