//! `serverbench setup` (not written yet).

/// Arguments of `serverbench setup`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `serverbench setup`.
pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`serverbench setup` is not implemented yet")
}
