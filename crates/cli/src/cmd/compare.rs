//! `serverbench compare` (not written yet).

/// Arguments of `serverbench compare`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `serverbench compare`.
pub fn run(_args: Args) -> anyhow::Result<u8> {
    anyhow::bail!("`serverbench compare` is not implemented yet")
}
